package runner

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
)

// countSource yields rows numbered 0 to n-1 (in Payload).
type countSource struct{ next, n int64 }

func (s *countSource) Next(r *generators.Row) bool {
	if s.next >= s.n {
		return false
	}
	*r = generators.Row{Payload: s.next}
	s.next++
	return true
}

// TestSharedStreamGivesEveryReaderEveryRow: readers of one shared stream,
// on one CPU token, each read every row in order, however far the ring
// wraps; a reader that leaves early (a job that failed) holds no one up.
func TestSharedStreamGivesEveryReaderEveryRow(t *testing.T) {
	const rows = 10*streamRing*streamChunk + 123
	tokens := newCPUTokens(1)
	s := newSharedStream(&countSource{n: rows}, 4, tokens)
	ctx := context.Background()
	go s.run(ctx)
	got := make([]int64, 4)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			tok := &jobToken{t: tokens}
			if err := tok.take(ctx); err != nil {
				t.Error(err)
				return
			}
			defer tok.give()
			rd := s.reader(ctx, i, tok)
			defer rd.detach()
			var r generators.Row
			for rd.Next(&r) {
				if r.Payload != got[i] {
					t.Errorf("reader %d: row %d where %d was due", i, r.Payload, got[i])
					return
				}
				got[i]++
				if i == 3 && got[i] == 10 {
					return // leaves early
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the readers are stuck")
	}
	for i, n := range got {
		want := int64(rows)
		if i == 3 {
			want = 10
		}
		if n != want {
			t.Errorf("reader %d read %d rows, want %d", i, n, want)
		}
	}
}
