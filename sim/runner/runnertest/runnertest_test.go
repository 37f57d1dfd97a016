package runnertest_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/runner/runnertest"
)

// TestOptionsExportNoTestHooks: runner.Options, a production type, has no
// exported test hook (a stream of the test's, snapshots at chosen batches,
// a hold after a batch, a lower batch limit): its exported fields say
// nothing of tests, and the hooks go through runnertest.
func TestOptionsExportNoTestHooks(t *testing.T) {
	typ := reflect.TypeFor[runner.Options]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		for _, hook := range []string{"NewSource", "SnapshotAt", "AfterBatch", "MaxBatchRows"} {
			if f.Name == hook {
				t.Errorf("runner.Options exports the test hook %s: set it through runnertest", hook)
			}
		}
		if strings.Contains(strings.ToLower(f.Name), "test") {
			t.Errorf("runner.Options exports %s, a test's field", f.Name)
		}
	}
}

// TestWithSetsEveryHook: With carries every hook into the options (Of
// reads them back), and leaves the rest of the options as they were.
func TestWithSetsEveryHook(t *testing.T) {
	opts := runnertest.With(runner.Options{Workers: 3}, runnertest.Hooks{
		SnapshotAt:   func(string, int64) bool { return true },
		AfterBatch:   func(string, int64, bool) {},
		MaxBatchRows: 7,
	})
	h := runnertest.Of(opts)
	if opts.Workers != 3 || h.SnapshotAt == nil || h.AfterBatch == nil || h.MaxBatchRows != 7 || h.NewSource != nil {
		t.Errorf("With gave workers %d, hooks %+v", opts.Workers, h)
	}
}
