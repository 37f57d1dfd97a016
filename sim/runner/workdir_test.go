package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// TestWorkDirsOfDeadRunsAreSwept checks that a run removes the work
// folders killed runs left in its scratch folder, and only those.
func TestWorkDirsOfDeadRunsAreSwept(t *testing.T) {
	scratch := t.TempDir()
	dead := filepath.Join(scratch, "dedupsim-run-dead")
	os.Mkdir(dead, 0o755)
	os.WriteFile(dead+".lock", []byte("999999\n"), 0o644)
	live, liveLock, err := newWorkDir(scratch)
	if err != nil {
		t.Fatal(err)
	}
	defer liveLock.Unlock()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead run's work folder survived: %v", err)
	}
	next, nextLock, err := newWorkDir(scratch)
	if err != nil {
		t.Fatal(err)
	}
	defer nextLock.Unlock()
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live run's work folder was swept: %v", err)
	}
	if next == live {
		t.Fatal("two runs share a work folder")
	}
	var _ *fileio.Lock = liveLock
}
