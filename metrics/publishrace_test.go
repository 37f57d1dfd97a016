package metrics

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// TestConcurrentPublishesIntoOneTarget publishes from several goroutines
// into one missing target at once, many times: every publish succeeds (one
// after the other), the target is always one publisher's whole folder, and
// no lock file is left beside it.
func TestConcurrentPublishesIntoOneTarget(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "res")
	const publishers = 6
	for round := range 30 {
		os.RemoveAll(target)
		var wg sync.WaitGroup
		errs := make(chan error, publishers)
		for p := range publishers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := Stage(target)
				if err != nil {
					errs <- err
					return
				}
				if err := os.WriteFile(filepath.Join(s.Dir, "who"), []byte(strconv.Itoa(p)), 0o644); err != nil {
					errs <- err
					return
				}
				if err := s.Publish(); err != nil {
					s.Discard()
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: a concurrent publish failed: %v", round, err)
		}
		if _, err := os.ReadFile(filepath.Join(target, "who")); err != nil {
			t.Fatalf("round %d: the target is no publisher's folder: %v", round, err)
		}
	}
	ents, _ := os.ReadDir(parent)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left beside the target: %v", names)
	}
}
