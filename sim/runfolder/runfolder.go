// Package runfolder is the layout of a run checkpoint (the folder of
// `simulate run --checkpoint DIR`), shared by the runner, which writes and
// resumes it, and the state reader, which reads it:
//
//	run.lock     the lock a run holds while it uses the folder (flock, with
//	             the holder's pid inside)
//	run.json     which run the folder belongs to: the scenario's name, and
//	             the checksums of the resolved scenario, of each empirical
//	             distribution's values and of the store's name
//	<job>/       one folder per job: its query checkpoints (query.<n>, n
//	             counting lost checkpoints), its snapshot (job.state), its
//	             part files and, once it finished, done.json
//
// How a run claims, checks and resumes the folder is sim/runner's.
package runfolder

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// The files of a run checkpoint and of its jobs' folders.
const (
	// MetaFile is run.json: which run the folder belongs to.
	MetaFile = "run.json"
	// LockFile is the lock a run holds while it uses the folder (flock,
	// with the holder's pid inside); readers check it with
	// fileio.ProbeLock.
	LockFile = "run.lock"
	// Format versions run.json.
	Format = "dedupsim-run/2"
	// JobStateFile is a job's snapshot.
	JobStateFile = "job.state"
	// JobDoneFile is a finished job's summary.
	JobDoneFile = "done.json"
	// TimeseriesPart and ProgressPart are a job's part files: its
	// timeseries rows and progress lines so far.
	TimeseriesPart = "timeseries.part.csv"
	ProgressPart   = "progress.part.jsonl"
	// SparkPart is a job's spark.csv rows so far, with a spark: block.
	SparkPart = "spark.part.csv"
)

// Meta is run.json.
type Meta struct {
	Format   string `json:"format"`
	Scenario string `json:"scenario"`
	// Fingerprint covers everything below: a run with the same
	// fingerprint resumes the folder.
	Fingerprint string `json:"fingerprint"`
	// Inputs are the checksums that make the fingerprint, each named for
	// the error that says which one differs.
	Inputs []Input `json:"inputs"`
}

// Input is one input of a run and its checksum.
type Input struct {
	// What names the input: "scenario", "store", or an empirical
	// distribution's key and file.
	What   string `json:"what"`
	SHA256 string `json:"sha256"`
}

// RunCheckpoint is a run checkpoint folder as Read finds it.
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

// Read lists the jobs of the run checkpoint dir, for readers
// such as `simulate state`. It writes nothing. A folder without run.json,
// a run.json of another kind, or a file that no run writes is an error
// naming the file.
func Read(dir string) (RunCheckpoint, error) {
	var rc RunCheckpoint
	path := filepath.Join(dir, MetaFile)
	data, err := fileio.ReadFile(path, fileio.MaxStateFileBytes)
	if err != nil {
		return rc, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil || m.Format != Format && m.Format != "dedupsim-run/1" {
		return rc, fmt.Errorf("checkpoint %s: %s is not a dedupsim run checkpoint", dir, path)
	}
	rc.Scenario = m.Scenario
	ents, err := os.ReadDir(dir)
	if err != nil {
		return rc, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if n == MetaFile || n == LockFile && e.Type().IsRegular() || fileio.IsTemp(n) {
			continue
		}
		jdir := filepath.Join(dir, n)
		if !e.IsDir() {
			return rc, fmt.Errorf("checkpoint %s: %s: not a file of a run checkpoint", dir, jdir)
		}
		if err := CheckJobFolder(jdir); err != nil {
			return rc, err
		}
		j := JobCheckpoint{Name: n, Dir: jdir}
		sub, err := os.ReadDir(jdir)
		if err != nil {
			return rc, fmt.Errorf("checkpoint %s: %w", dir, err)
		}
		gen := -1
		for _, s := range sub {
			if g, ok := QueryGen(s.Name()); ok && g > gen {
				gen = g
			}
			if s.Name() == JobDoneFile {
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

// CheckJobFolder checks that a job's folder (if any) holds only what a
// job writes.
func CheckJobFolder(dir string) error {
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
		case n == JobStateFile || n == JobDoneFile || n == TimeseriesPart || n == ProgressPart || n == SparkPart:
			if e.Type().IsRegular() {
				continue
			}
		case fileio.IsTemp(n):
			continue
		default:
			if _, ok := QueryGen(n); ok && e.IsDir() {
				continue
			}
		}
		return fmt.Errorf("checkpoint %s: %s: not a file of a dedupsim job; refusing to resume from the folder", dir, filepath.Join(dir, n))
	}
	return nil
}

// QueryGen returns n for a query checkpoint folder "query.<n>".
func QueryGen(name string) (int, bool) {
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
