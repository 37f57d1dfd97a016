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
