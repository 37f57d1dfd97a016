package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

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

// RunLockFile is the name of the lock file a run holds in its run
// checkpoint while it uses the folder; readers check it with
// fileio.ProbeLock.
const RunLockFile = runLockFile

// ReadRunCheckpoint lists the jobs of the run checkpoint dir, for readers
// such as `simulate state`. It writes nothing. A folder without run.json,
// a run.json of another kind, or a file that no run writes is an error
// naming the file.
func ReadRunCheckpoint(dir string) (RunCheckpoint, error) {
	var rc RunCheckpoint
	path := filepath.Join(dir, runMetaFile)
	data, err := fileio.ReadFile(path, fileio.MaxStateFileBytes)
	if err != nil {
		return rc, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	var m runMeta
	if err := json.Unmarshal(data, &m); err != nil || m.Format != runFormat && m.Format != "dedupsim-run/1" {
		return rc, fmt.Errorf("checkpoint %s: %s is not a dedupsim run checkpoint", dir, path)
	}
	rc.Scenario = m.Scenario
	ents, err := os.ReadDir(dir)
	if err != nil {
		return rc, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if n == runMetaFile || n == runLockFile && e.Type().IsRegular() || fileio.IsTemp(n) {
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
