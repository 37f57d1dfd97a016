package runner

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// A resumable job keeps, in its folder:
//
//	query.<n>/              the query's checkpoint (n counts lost checkpoints)
//	job.state               the job snapshot: generator position, the row it
//	                        read ahead, ground-truth accounting, counters,
//	                        and the query state it matches
//	timeseries.part.csv     timeseries rows so far
//	progress.part.jsonl     progress lines so far
//	done.json               the job's final summary, once it finished
//
// A snapshot is taken at a batch boundary, after the batch's state and
// commit log are written. Resuming reopens the query at the snapshot's
// batch (the state stores are versioned, like Spark's), truncates the part
// files to the snapshot's lengths and redoes the batches after it, which
// the seed makes identical.
const (
	jobStateFile   = "job.state"
	jobDoneFile    = "done.json"
	snapshotFormat = "dedupsim-job/1"
)

type jobSnapshot struct {
	Format    string               `json:"format"`
	Query     string               `json:"query"`
	T         int64                `json:"t"`
	NextFault int                  `json:"nextFault"`
	Gen       int                  `json:"gen"`
	State     sim.State            `json:"state"`
	Source    []byte               `json:"source"`
	Look      []byte               `json:"look"`
	HasLook   bool                 `json:"hasLook"`
	Acct      []byte               `json:"accountant"`
	Summary   metrics.QuerySummary `json:"summary"`
	HasLag    bool                 `json:"hasLag"`
	MaxLag    float64              `json:"maxLag"`
	Parts     [2]int64             `json:"parts"`
}

func (r *jobRun) snapshotLens() [2]int64 {
	if r.parts == nil {
		return r.restoredLens
	}
	return [2]int64{r.parts.tsLen, r.parts.progLen}
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
		State: r.q.State(), HasLook: r.hasLook, Summary: r.sum, Parts: r.snapshotLens(),
	}
	var err error
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
	data, err := json.Marshal(&s)
	if err != nil {
		return err
	}
	return metrics.WriteFileAtomic(filepath.Join(r.env.jobDir, jobStateFile), data)
}

// restore loads the job snapshot if there is one.
func (r *jobRun) restore() (bool, sim.State, error) {
	path := filepath.Join(r.env.jobDir, jobStateFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, sim.State{}, nil
	}
	if err != nil {
		return false, sim.State{}, err
	}
	var s jobSnapshot
	if err := json.Unmarshal(data, &s); err != nil || s.Format != snapshotFormat {
		return false, sim.State{}, fmt.Errorf("%s: not a job snapshot of this version (%v)", path, err)
	}
	if s.Query != r.env.Query {
		return false, sim.State{}, fmt.Errorf("%s: belongs to query %q, not %q", path, s.Query, r.env.Query)
	}
	res, ok := r.src.(Resumable)
	if !ok {
		return false, sim.State{}, errors.New("the row source cannot restore its position")
	}
	if err := res.Restore(s.Source); err != nil {
		return false, sim.State{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := binary.Read(bytes.NewReader(s.Look), binary.LittleEndian, &r.look); err != nil {
		return false, sim.State{}, fmt.Errorf("%s: look-ahead row: %w", path, err)
	}
	if err := r.acct.UnmarshalBinary(s.Acct); err != nil {
		return false, sim.State{}, fmt.Errorf("%s: %w", path, err)
	}
	r.hasLook, r.t, r.nextFault, r.ck.gen = s.HasLook, s.T, s.NextFault, s.Gen
	// Static fields come from the job; counters from the snapshot.
	s.Summary.Name, s.Summary.Query, s.Summary.Delay, s.Summary.Store = r.sum.Name, r.sum.Query, r.sum.Delay, r.sum.Store
	s.Summary.BytesPerEntry, s.Summary.Warnings = r.sum.BytesPerEntry, r.sum.Warnings
	r.sum = s.Summary
	if s.HasLag {
		r.maxLag = s.MaxLag
	}
	r.restoredLens = s.Parts
	return true, s.State, nil
}

func saveDone(dir string, sum *metrics.QuerySummary) error {
	data, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	return metrics.WriteFileAtomic(filepath.Join(dir, jobDoneFile), data)
}

// loadDone returns a finished job's results, or nil if it has not finished.
func loadDone(dir string) (*jobResult, error) {
	data, err := os.ReadFile(filepath.Join(dir, jobDoneFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	res := &jobResult{}
	if err := json.Unmarshal(data, &res.summary); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, jobDoneFile), err)
	}
	if res.records, res.progress, err = readParts(dir); err != nil {
		return nil, err
	}
	return res, nil
}

func readParts(dir string) ([]metrics.BatchRecord, []byte, error) {
	ts, err := os.ReadFile(filepath.Join(dir, tsPart))
	if err != nil {
		return nil, nil, err
	}
	var withHeader bytes.Buffer
	w := csv.NewWriter(&withHeader)
	w.Write(metrics.TimeseriesHeader)
	w.Flush()
	withHeader.Write(ts)
	recs, err := metrics.ReadTimeseries(&withHeader)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, tsPart), err)
	}
	prog, err := os.ReadFile(filepath.Join(dir, progPart))
	if err != nil {
		return nil, nil, err
	}
	return recs, prog, nil
}

// writeCSVRow writes one CSV row and returns its length in bytes.
func writeCSVRow(w *bufio.Writer, row []string) (int, error) {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	if err := cw.Write(row); err != nil {
		return 0, err
	}
	cw.Flush()
	return w.Write(b.Bytes())
}

var _ Resumable = (*generators.Generator)(nil)

// runMeta is the run checkpoint's own metadata: which scenario, seed and
// store it belongs to.
type runMeta struct {
	Format      string `json:"format"`
	Scenario    string `json:"scenario"`
	Fingerprint string `json:"fingerprint"`
}

const runMetaFile = "run.json"

// claimCheckpoint prepares dir for a resumable run of s: a new or empty
// folder is claimed; a folder of the same scenario, seed and store is
// resumed; anything else is refused, never overwritten.
func claimCheckpoint(dir string, s *scenario.Scenario, store string) error {
	scJSON, err := json.Marshal(s)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(append(append(scJSON, 0), store...))
	want := runMeta{Format: "dedupsim-run/1", Scenario: s.Name, Fingerprint: hex.EncodeToString(sum[:])}
	path := filepath.Join(dir, runMetaFile)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		var have runMeta
		if err := json.Unmarshal(data, &have); err != nil || have.Format != want.Format {
			return fmt.Errorf("checkpoint %s: %s is not a dedupsim run checkpoint; refusing to use the folder", dir, path)
		}
		if have.Fingerprint != want.Fingerprint {
			return fmt.Errorf("checkpoint %s: belongs to another run (scenario %q, or another seed, store or file content); use a new folder", dir, have.Scenario)
		}
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("checkpoint %s: folder is not empty and holds no %s; refusing to overwrite it", dir, runMetaFile)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	data, _ = json.MarshalIndent(want, "", "  ")
	return metrics.WriteFileAtomic(path, append(data, '\n'))
}

// isAtomicTemp reports whether name is a temporary file of
// metrics.WriteFileAtomic (".<name>.tmp-<random>"), left by a killed write.
func isAtomicTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// queryGen returns n for a query checkpoint folder "query.<n>".
func queryGen(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "query.")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

// checkRunFolder checks that the run checkpoint dir holds only what a run
// writes: run.json and a folder per job.
func checkRunFolder(dir string, jobs []Job) error {
	names := map[string]bool{}
	for _, j := range jobs {
		names[j.FileName] = true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if n == runMetaFile || isAtomicTemp(n) || names[n] && e.IsDir() {
			continue
		}
		return fmt.Errorf("checkpoint %s: %s: not a file of this run checkpoint; refusing to resume from the folder", dir, filepath.Join(dir, n))
	}
	return nil
}

// checkJobFolder checks that a job's folder (if any) holds only what a job
// writes (see the layout above).
func checkJobFolder(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		switch {
		case n == jobStateFile || n == jobDoneFile || n == tsPart || n == progPart:
			if e.Type().IsRegular() {
				continue
			}
		case isAtomicTemp(n):
			continue
		default:
			if _, ok := queryGen(n); ok && e.IsDir() {
				continue
			}
		}
		return fmt.Errorf("checkpoint %s: %s: not a file of a dedupsim job; refusing to resume from the folder", dir, filepath.Join(dir, n))
	}
	return nil
}

// discardQueryFolders removes the job's query checkpoint folders past gen
// (all of them for gen -1): folders a killed run made after the snapshot
// the job resumes from, which the resumed run makes again.
func discardQueryFolders(dir string, gen int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	for _, e := range ents {
		if n, ok := queryGen(e.Name()); ok && n > gen {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("checkpoint %s: %w", dir, err)
			}
		}
	}
	return nil
}

// checkResume checks, before any job runs and changes its folder, that the
// run checkpoint root can be resumed: no foreign file in it, and for every
// unfinished job with a snapshot, a readable job.state, the query
// checkpoint it names, and every state store at the snapshot's version.
// It writes nothing. Each error names the file at fault.
func checkResume(root string, sc *scenario.Scenario, jobs []Job, check StoreChecker, newSource func(*scenario.Scenario) (Source, error)) error {
	if err := checkRunFolder(root, jobs); err != nil {
		return err
	}
	for _, j := range jobs {
		dir := filepath.Join(root, j.FileName)
		if err := checkJobFolder(dir); err != nil {
			return err
		}
		if done, err := loadDone(dir); err != nil {
			return fmt.Errorf("checkpoint %s: %w", dir, err)
		} else if done != nil {
			continue
		}
		src, err := newSource(sc)
		if err != nil {
			return err
		}
		r := &jobRun{env: job{jobEnv{sc: sc, jobDir: dir}, j}, src: src, ck: &checkpointer{}}
		resumed, state, err := r.restore()
		if err != nil {
			return fmt.Errorf("resume from %s: %w", dir, err)
		}
		if !resumed {
			continue
		}
		// Resuming truncates the part files to the snapshot's lengths:
		// shorter files would be padded with zeros.
		for i, name := range []string{tsPart, progPart} {
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				return fmt.Errorf("resume from %s: %w", dir, err)
			}
			if fi.Size() < r.restoredLens[i] {
				return fmt.Errorf("resume from %s: %s holds %d bytes, %s says %d were written", dir,
					filepath.Join(dir, name), fi.Size(), filepath.Join(dir, jobStateFile), r.restoredLens[i])
			}
		}
		qdir := filepath.Join(dir, fmt.Sprintf("query.%d", r.ck.gen))
		cp, _, err := sim.OpenCheckpoint(qdir)
		if err != nil {
			return fmt.Errorf("resume from %s: %s resumes query.%d: %w", dir, filepath.Join(dir, jobStateFile), r.ck.gen, err)
		}
		if _, err := cp.Recover(); err != nil {
			return fmt.Errorf("resume from %s: %w", dir, err)
		}
		for op := range j.Plan.Dedups() {
			if err := check(cp.StateDir(op), state.NextBatchID); err != nil {
				return fmt.Errorf("resume from %s: operator %d: %w", dir, op, err)
			}
		}
	}
	return nil
}

// RunCheckpoint is a run checkpoint folder as ReadRunCheckpoint finds it.
type RunCheckpoint struct {
	// Scenario is the name of the scenario the run belongs to.
	Scenario string
	// Jobs are the job folders, sorted by name.
	Jobs []JobCheckpoint
}

// JobCheckpoint is one job's folder in a run checkpoint.
type JobCheckpoint struct {
	// Name is the folder's name: the job's file name (the query's name,
	// with "@<delay>" in a sweep).
	Name string
	// Dir is the job's folder.
	Dir string
	// QueryDir is the job's newest query checkpoint folder (query.<n>,
	// n counting lost checkpoints); "" before the job's first batch.
	QueryDir string
	// Done is set once the job finished (done.json).
	Done bool
}

// ReadRunCheckpoint lists the jobs of the run checkpoint dir, for readers
// such as `simulate state`. It writes nothing. A folder without run.json,
// a run.json of another kind, or a file that no run writes is an error
// naming the file.
func ReadRunCheckpoint(dir string) (RunCheckpoint, error) {
	var rc RunCheckpoint
	path := filepath.Join(dir, runMetaFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return rc, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	var m runMeta
	if err := json.Unmarshal(data, &m); err != nil || m.Format != "dedupsim-run/1" {
		return rc, fmt.Errorf("checkpoint %s: %s is not a dedupsim run checkpoint", dir, path)
	}
	rc.Scenario = m.Scenario
	ents, err := os.ReadDir(dir)
	if err != nil {
		return rc, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if n == runMetaFile || isAtomicTemp(n) {
			continue
		}
		jdir := filepath.Join(dir, n)
		if !e.IsDir() {
			return rc, fmt.Errorf("checkpoint %s: %s: not a file of a run checkpoint", dir, jdir)
		}
		if err := checkJobFolder(jdir); err != nil {
			return rc, err
		}
		j := JobCheckpoint{Name: n, Dir: jdir}
		sub, err := os.ReadDir(jdir)
		if err != nil {
			return rc, fmt.Errorf("checkpoint %s: %w", dir, err)
		}
		gen := -1
		for _, s := range sub {
			if g, ok := queryGen(s.Name()); ok && g > gen {
				gen = g
			}
			if s.Name() == jobDoneFile {
				j.Done = true
			}
		}
		if gen >= 0 {
			j.QueryDir = filepath.Join(jdir, fmt.Sprintf("query.%d", gen))
		}
		rc.Jobs = append(rc.Jobs, j)
	}
	return rc, nil
}
