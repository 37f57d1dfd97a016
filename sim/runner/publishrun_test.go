package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// closer is a result that records its closes.
type closer struct{ closes int }

func (c *closer) Close() error { c.closes++; return nil }

// TestPublishRunCancelledPublishesNothing: a cancellation that arrives
// while the result is written (a report being drawn) leaves out as it
// was, for every command that publishes through PublishRun (bench-stores
// and shards published regardless before they shared RunTo's sequence),
// and the result is closed.
func TestPublishRunCancelledPublishesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	res := &closer{}
	scratch := ""
	got, err := PublishRun(ctx, out, &scratch, func() (*closer, error) { return res, nil }, func(dir string, r *closer) error {
		if scratch == "" || filepath.Dir(scratch) != dir {
			t.Errorf("scratch %q is not inside the staging folder %s", scratch, dir)
		}
		cancel()
		return os.WriteFile(filepath.Join(dir, "summary.json"), []byte("{}"), 0o644)
	})
	if !errors.Is(err, context.Canceled) || got != nil {
		t.Fatalf("PublishRun = %v, %v; want nil and context.Canceled", got, err)
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("out was published after the cancellation: %v", err)
	}
	if res.closes == 0 {
		t.Error("the result was not closed")
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 0 {
		t.Errorf("%d entries left beside out, want none (the staging folder discarded)", len(entries))
	}
}
