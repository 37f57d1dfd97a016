package runner

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestWorkDirsOfConcurrentRuns checks that runs starting at once in one
// scratch folder (plan's seeds, a sweep's runs in one process) never sweep
// each other's work folders: each run's folder outlives every other run's
// start, until the run itself removes it.
func TestWorkDirsOfConcurrentRuns(t *testing.T) {
	scratch := t.TempDir()
	const runs, starts = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for g := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range starts {
				dir, lock, err := newWorkDir(scratch)
				if err != nil {
					errs <- err
					return
				}
				// A run writes into its folder after starting.
				if err := os.Mkdir(filepath.Join(dir, "parts"), 0o777); err != nil {
					errs <- err
					lock.Unlock()
					return
				}
				_ = g + i
				// and removes it when it is done, as Results.Close does.
				os.RemoveAll(dir)
				os.Remove(dir + ".lock")
				lock.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a run lost its work folder to another run's sweep: %v", err)
	}
}
