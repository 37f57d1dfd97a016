package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runfolder"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
)

// A resumable job keeps, in its folder:
//
//	query.<n>/              the query's checkpoint (n counts lost checkpoints)
//	job.state               the job snapshot: generator position, the row it
//	                        read ahead, ground-truth accounting, counters,
//	                        the bad-clock moments seen, the query state it
//	                        matches, and the checksums of every file a
//	                        resume reads (see below)
//	timeseries.part.csv     timeseries rows so far
//	progress.part.jsonl     progress lines so far
//	done.json               the job's final summary, once it finished, with
//	                        the lengths and checksums of its part files
//
// A snapshot is taken at a batch boundary, after the batch's state and
// commit log are written. Resuming reopens the query at the snapshot's
// batch (the state stores are versioned, like Spark's), truncates the part
// files to the snapshot's lengths and redoes the batches after it, which
// the seed makes identical.
//
// What a resume reads is verified before anything is written: job.state
// and done.json end with the SHA-256 of their content; a snapshot records
// the SHA-256 of the part files' bytes so far, of the query checkpoint's
// metadata and last offsets and commits entries, and of every file the
// state stores are reopened from (the memory store's snapshot and deltas,
// the files of Pebble's checkpoint), which a resume compares, list and
// content, with what it finds.
//
// Format 5: the memory store appends its deltas to delta logs
// (<first version>.log), which a snapshot records as a prefix (path,
// length and the SHA-256 of those bytes), instead of a file per batch.
// A job snapshot of format 4 or older names files of the older layout: it
// is refused, in one line, before anything is written.
const (
	snapshotFormat = "dedupsim-job/5"
	doneFormat     = "dedupsim-done/3"
)

type jobSnapshot struct {
	Format    string               `json:"format"`
	Query     string               `json:"query"`
	T         int64                `json:"t"`
	NextFault int                  `json:"nextFault"`
	Gen       int                  `json:"gen"`
	State     microbatch.State     `json:"state"`
	Source    []byte               `json:"source"`
	Look      []byte               `json:"look"`
	HasLook   bool                 `json:"hasLook"`
	Acct      []byte               `json:"accountant"`
	Summary   metrics.QuerySummary `json:"summary"`
	HasLag    bool                 `json:"hasLag"`
	MaxLag    float64              `json:"maxLag"`
	BadClock  []int64              `json:"badClock"`
	// BadClockAt are the event times of the BadClock rows.
	BadClockAt []int64     `json:"badClockAt"`
	Parts      [2]partMark `json:"parts"`
	// QueryFiles are the files of the query checkpoint a resume reads,
	// StoreFiles those of each dedup operator's store at the snapshot's
	// version, in the order the backend lists them; paths are relative to
	// the job's folder.
	QueryFiles []fileSum   `json:"queryFiles"`
	StoreFiles [][]fileSum `json:"storeFiles"`
	// Spark is the Spark cluster model's state and SparkPart the
	// spark.csv part file's mark, with a spark: block.
	Spark     json.RawMessage `json:"spark,omitempty"`
	SparkPart *partMark       `json:"sparkPart,omitempty"`
}

// jobDone is done.json: a finished job's summary, the bad-clock moments
// it saw, and its part files.
type jobDone struct {
	Format     string               `json:"format"`
	Summary    metrics.QuerySummary `json:"summary"`
	BadClock   []int64              `json:"badClock"`
	BadClockAt []int64              `json:"badClockAt"`
	Parts      [2]partMark          `json:"parts"`
	// SparkPart is the spark.csv part file's mark, with a spark: block.
	SparkPart *partMark `json:"sparkPart,omitempty"`
}

// snapshot saves the job's whole state.
func (r *jobRun) snapshot() error {
	res, ok := r.src.(Resumable)
	if !ok {
		return errors.New("the row source cannot save its position")
	}
	if err := r.parts.flush(); err != nil {
		return err
	}
	// The stores first: once job.state names this version, a resume
	// reopens them at it, and until it does, at the previous one, which
	// Snapshot keeps too.
	version := r.q.State().NextBatchID
	for k, op := range r.q.Operators() {
		if sn, ok := op.Store().(engines.Snapshotter); ok {
			if err := sn.Snapshot(version); err != nil {
				return fmt.Errorf("operator %d: %w", k, err)
			}
		}
	}
	s := jobSnapshot{
		Format: snapshotFormat, Query: r.env.Query, T: r.t, NextFault: r.nextFault, Gen: r.ck.gen,
		State: r.q.State(), HasLook: r.hasLook, Summary: r.sum, BadClock: r.badClock, BadClockAt: r.badClockAt,
	}
	var err error
	if s.Parts, err = r.parts.marks(); err != nil {
		return err
	}
	if s.Source, err = res.State(); err != nil {
		return err
	}
	var look bytes.Buffer
	if err := binary.Write(&look, binary.LittleEndian, &r.look); err != nil {
		return err
	}
	s.Look = look.Bytes()
	if s.Acct, err = r.acct.MarshalBinary(); err != nil {
		return err
	}
	if !math.IsInf(r.maxLag, -1) {
		s.HasLag, s.MaxLag = true, r.maxLag
	}
	if s.QueryFiles, s.StoreFiles, err = r.resumeFiles(version); err != nil {
		return err
	}
	if s.Spark, s.SparkPart, err = r.spark.snapshotState(); err != nil {
		return err
	}
	r.hashes.prune()
	data, err := json.Marshal(&s)
	if err != nil {
		return err
	}
	if err := fileio.WriteFile(filepath.Join(r.env.jobDir, runfolder.JobStateFile), seal(data)); err != nil {
		return fmt.Errorf("checkpoint %s: %w", r.env.jobDir, err)
	}
	return nil
}

// resumeFiles returns the checksums of the files a resume from this
// snapshot reads: the query checkpoint's metadata and its entries of the
// last batch, and the stores' files at version.
func (r *jobRun) resumeFiles(version int64) ([]fileSum, [][]fileSum, error) {
	qdir := r.ck.folder()
	// The snapshot names the log's records: they must be on disk first.
	if r.ck.cp != nil {
		if err := r.ck.cp.Sync(); err != nil {
			return nil, nil, err
		}
	}
	meta, err := r.hashes.fileSum(r.env.jobDir, filepath.Join(qdir, "metadata"))
	if err != nil {
		return nil, nil, err
	}
	q := []fileSum{meta}
	if version > 0 {
		fs, ok, err := logSum(r.env.jobDir, qdir, version-1)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			q = append(q, fs)
		}
	}
	var stores [][]fileSum
	ops := r.q.Operators()
	for op := range r.env.Plan.Dedups() {
		// A partitioned query's stores are listed partition by partition.
		sdirs := microbatch.StateDirs(qdir, op, r.q.Partitions())
		var parts []engines.Store
		if len(ops) == len(r.env.Plan.Dedups()) {
			parts = storeParts(ops[op].Store(), len(sdirs))
		}
		var files []engines.StateFile
		for i, sdir := range sdirs {
			f, ok, err := summedFiles(parts, i, sdir, version)
			if err == nil && !ok {
				f, err = r.env.stateFiles(sdir, version)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("operator %d: %w", op, err)
			}
			files = append(files, f...)
		}
		sums := []fileSum{}
		for _, f := range files {
			fs, err := r.hashes.stateSum(r.env.jobDir, f)
			if err != nil {
				return nil, nil, err
			}
			sums = append(sums, fs)
		}
		stores = append(stores, sums)
	}
	return q, stores, nil
}

// storeParts returns an operator's store per state folder: its
// partitions' stores, or the store itself; nil if they do not match n.
func storeParts(st engines.Store, n int) []engines.Store {
	if p, ok := st.(interface{ Parts() []engines.Store }); ok {
		if len(p.Parts()) == n {
			return p.Parts()
		}
		return nil
	}
	if n == 1 {
		return []engines.Store{st}
	}
	return nil
}

// summedFiles returns the files of the store of state folder sdir
// (parts[i]) at version as the store lists them, with the checksums it
// took as it wrote them (engines.StateSummer): nothing is read back. ok
// is false when the store cannot tell, or names files outside sdir; the
// caller then lists and hashes them.
func summedFiles(parts []engines.Store, i int, sdir string, version int64) ([]engines.StateFile, bool, error) {
	if i >= len(parts) {
		return nil, false, nil
	}
	ss, ok := parts[i].(engines.StateSummer)
	if !ok {
		return nil, false, nil
	}
	files, ok, err := ss.StateFiles(version)
	if err != nil || !ok {
		return nil, false, err
	}
	for _, f := range files {
		if filepath.Dir(f.Path) != filepath.Clean(sdir) {
			return nil, false, nil
		}
	}
	return files, true, nil
}

// logSum returns the checksum of the offsets and commit records of batch
// in the query checkpoint qdir's log (microbatch.BatchRecords): a restart right
// after the resume recovers from them; earlier records are never read
// again, and later ones a resume discards. ok is false when the log
// holds none.
func logSum(jobDir, qdir string, batch int64) (fileSum, bool, error) {
	path, recs, ok, err := microbatch.BatchRecords(qdir, batch)
	if err != nil || !ok {
		return fileSum{}, false, err
	}
	rel, err := filepath.Rel(jobDir, path)
	if err != nil {
		return fileSum{}, false, err
	}
	sum := sha256.Sum256(recs)
	return fileSum{Path: filepath.ToSlash(rel), SHA256: hex.EncodeToString(sum[:]), Batch: &batch}, true, nil
}

// readSnapshot reads and checks the job snapshot in dir, if there is one.
func readSnapshot(dir string) (*jobSnapshot, error) {
	path := filepath.Join(dir, runfolder.JobStateFile)
	var s jobSnapshot
	ok, err := readSealedJSON(path, &s)
	if err != nil || !ok {
		return nil, err
	}
	if s.Format != snapshotFormat {
		return nil, fmt.Errorf("%s: a job snapshot of format %q, this version writes %q; resume it with the dedupsim that made it, or use a new folder", path, s.Format, snapshotFormat)
	}
	return &s, nil
}

// restore loads the job snapshot if there is one.
func (r *jobRun) restore() (bool, microbatch.State, error) {
	path := filepath.Join(r.env.jobDir, runfolder.JobStateFile)
	s, err := readSnapshot(r.env.jobDir)
	if err != nil || s == nil {
		return false, microbatch.State{}, err
	}
	if s.Query != r.env.Query {
		return false, microbatch.State{}, fmt.Errorf("%s: belongs to query %q, not %q", path, s.Query, r.env.Query)
	}
	res, ok := r.src.(Resumable)
	if !ok {
		return false, microbatch.State{}, errors.New("the row source cannot restore its position")
	}
	if err := res.Restore(s.Source); err != nil {
		return false, microbatch.State{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := binary.Read(bytes.NewReader(s.Look), binary.LittleEndian, &r.look); err != nil {
		return false, microbatch.State{}, fmt.Errorf("%s: look-ahead row: %w", path, err)
	}
	if err := r.acct.UnmarshalBinary(s.Acct); err != nil {
		return false, microbatch.State{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(s.BadClock) > maxBadClockMarkers || len(s.BadClockAt) != len(s.BadClock) {
		return false, microbatch.State{}, fmt.Errorf("%s: %d bad-clock moments with %d event times, at most %d are kept", path, len(s.BadClock), len(s.BadClockAt), maxBadClockMarkers)
	}
	r.hasLook, r.t, r.nextFault, r.ck.gen = s.HasLook, s.T, s.NextFault, s.Gen
	// Until the resumed run's first snapshot, a kill resumes from this one.
	r.ck.hold(s.Gen, s.State.NextBatchID-1)
	if r.env.badClock {
		r.badClock, r.badClockAt = s.BadClock, s.BadClockAt
	}
	// Static fields come from the job; counters from the snapshot.
	s.Summary.Name, s.Summary.Query, s.Summary.Delay, s.Summary.Store = r.sum.Name, r.sum.Query, r.sum.Delay, r.sum.Store
	s.Summary.BytesPerEntry, s.Summary.Warnings = r.sum.BytesPerEntry, r.sum.Warnings
	s.Summary.Flavour, s.Summary.KeyHorizonSeconds, s.Summary.Saturated = r.sum.Flavour, r.sum.KeyHorizonSeconds, r.sum.Saturated
	r.sum = s.Summary
	if s.HasLag {
		r.maxLag = s.MaxLag
	}
	r.restored = s.Parts
	if err := r.spark.restore(path, s.Spark, s.SparkPart); err != nil {
		return false, microbatch.State{}, err
	}
	return true, s.State, nil
}

func saveDone(dir string, d *jobDone) error {
	d.Format = doneFormat
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := fileio.WriteFile(filepath.Join(dir, runfolder.JobDoneFile), seal(data)); err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return nil
}

// readDone reads and checks a finished job's done.json, if there is one.
func readDone(dir string) (*jobDone, error) {
	path := filepath.Join(dir, runfolder.JobDoneFile)
	var d jobDone
	ok, err := readSealedJSON(path, &d)
	if err != nil || !ok {
		return nil, err
	}
	if d.Format != doneFormat {
		return nil, fmt.Errorf("%s: a finished job of format %q, this version writes %q; use a new folder", path, d.Format, doneFormat)
	}
	if len(d.BadClock) > maxBadClockMarkers || len(d.BadClockAt) != len(d.BadClock) {
		return nil, fmt.Errorf("%s: %d bad-clock moments with %d event times, at most %d are kept", path, len(d.BadClock), len(d.BadClockAt), maxBadClockMarkers)
	}
	return &d, nil
}

// loadDone returns a finished job's results, or nil if it has not
// finished. The run checked its part files before any job started.
func loadDone(dir string) (*jobResult, error) {
	d, err := readDone(dir)
	if err != nil || d == nil {
		return nil, err
	}
	res := &jobResult{
		summary: d.Summary, badClock: d.BadClock, badClockAt: d.BadClockAt,
		parts: [2]segment{{path: filepath.Join(dir, runfolder.TimeseriesPart), n: d.Parts[0].Len}, {path: filepath.Join(dir, runfolder.ProgressPart), n: d.Parts[1].Len}},
	}
	if d.SparkPart != nil {
		res.spark = &segment{path: filepath.Join(dir, runfolder.SparkPart), n: d.SparkPart.Len}
	}
	return res, nil
}

var (
	_ Resumable = (*generators.Generator)(nil)
	_ Resumable = (*generators.LogSource)(nil)
)

// discardQueryFolders removes the job's query checkpoint folders past gen
// (all of them for gen -1): folders a killed run made after the snapshot
// the job resumes from, which the resumed run makes again.
func discardQueryFolders(dir string, gen int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	for _, e := range ents {
		if n, ok := runfolder.QueryGen(e.Name()); ok && n > gen {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("checkpoint %s: %w", dir, err)
			}
		}
	}
	return nil
}
