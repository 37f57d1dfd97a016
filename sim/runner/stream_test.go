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

// TestDetachedReaderHoldsNoOneUp checks, without goroutines, what the
// test above catches only as a one-minute timeout: a detached reader no
// longer counts as the slowest (the producer may reuse the chunks it had
// not read), and once every reader detached the producer stops.
func TestDetachedReaderHoldsNoOneUp(t *testing.T) {
	s := newSharedStream(&countSource{n: 1}, 2, newCPUTokens(1))
	ctx := context.Background()
	fast, slow := s.reader(ctx, 0, nil), s.reader(ctx, 1, nil)
	s.produced, s.pos[0], s.pos[1] = 3*streamRing, 3*streamRing, 1
	if got := s.slowest(); got != 1 {
		t.Fatalf("slowest chunk %d with a reader at chunk 1", got)
	}
	slow.detach()
	if got := s.slowest(); got != 3*streamRing || s.stop {
		t.Fatalf("after the slow reader detached: slowest chunk %d (want %d), stop %v", got, 3*streamRing, s.stop)
	}
	fast.detach()
	if !s.stop {
		t.Fatal("every reader detached, yet the producer goes on")
	}
}
