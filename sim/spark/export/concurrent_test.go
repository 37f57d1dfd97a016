package export

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// TestConcurrentPublishesIntoOneExport builds export folders from several
// goroutines into one missing target at once, many times: every publish
// succeeds, one after the other, and the target is always one whole folder.
func TestConcurrentPublishesIntoOneExport(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "export")
	const publishers = 6
	for round := range 25 {
		os.RemoveAll(target)
		var wg sync.WaitGroup
		errs := make(chan error, publishers)
		for p := range publishers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := exportFolder().Stage(target)
				if err != nil {
					errs <- err
					return
				}
				if err := os.WriteFile(filepath.Join(st.Dir, "who"), []byte(strconv.Itoa(p)), 0o644); err != nil {
					errs <- err
					return
				}
				if err := st.Publish(); err != nil {
					st.Discard()
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: a concurrent publish failed: %v", round, err)
		}
		if _, err := os.ReadFile(filepath.Join(target, MarkerFile)); err != nil {
			t.Fatalf("round %d: the target is not a whole export folder: %v", round, err)
		}
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Errorf("%d entries beside the export folder, want only it", len(ents))
	}
}
