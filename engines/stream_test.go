package engines_test

import (
	"testing"

	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/internal/enginetest"
)

// TestStreamMatchesEngines checks that the benchmarks measure working
// engines: over the benchmark stream, every engine and the bare baseline
// emit exactly the rows that are not repeats, evict what the reference
// model evicts, and keep about `live` keys in steady state.
func TestStreamMatchesEngines(t *testing.T) {
	const live, rows, seed = 20_000, 65_000, 7
	for _, k := range []enginetest.Kind{enginetest.DedupeNoEvict, enginetest.DedupeEvict, enginetest.Within} {
		t.Run(k.String(), func(t *testing.T) {
			g := enginetest.NewStreamGen(seed)
			if err := enginetest.Prime(g, k, live, func([]byte, int64) error { return nil }, func(int64) error { return nil }); err != nil {
				t.Fatal(err)
			}
			block := g.Take(rows)
			wantEmitted, wantEvicted, wantLeft := enginetest.ModelRun(k, live, enginetest.NewStreamGen(seed), block)
			if unique := rows - block.Dups; wantEmitted != unique {
				t.Fatalf("model emitted %d rows, the generator made %d distinct ids: a repeat was evicted before it came back", wantEmitted, unique)
			}

			for _, perRow := range []bool{false, true} {
				s := memstore.New()
				op := k.NewOperator(s, live)
				res, err := enginetest.RunEngine(nil, op, k, live, enginetest.NewStreamGen(seed), block, perRow)
				if err != nil {
					t.Fatal(err)
				}
				if res.Emitted != wantEmitted || res.Evicted != wantEvicted || op.Len() != wantLeft {
					t.Fatalf("engine (per row %v): emitted %d, evicted %d, left %d; model: %d, %d, %d",
						perRow, res.Emitted, res.Evicted, op.Len(), wantEmitted, wantEvicted, wantLeft)
				}
			}

			base, _ := enginetest.RunBaseline(nil, k, live, enginetest.NewStreamGen(seed), block)
			if base.Emitted != wantEmitted {
				t.Fatalf("baseline emitted %d, model %d", base.Emitted, wantEmitted)
			}
			// The baseline evicts in arrival order, so it may keep a key a
			// batch longer than the engines: compare its work, not its
			// exact timing.
			if d := base.Evicted - wantEvicted; d < -enginetest.JitterMicros/enginetest.StepMicros || d > enginetest.JitterMicros/enginetest.StepMicros {
				t.Fatalf("baseline evicted %d, model %d", base.Evicted, wantEvicted)
			}
			if k.Evicts() {
				if l := wantLeft; l < live*9/10 || l > live*11/10 {
					t.Fatalf("%d keys live, want about %d", l, live)
				}
			}
		})
	}
}

// TestPutIDDistinct guards the property that makes the stream's ground
// truth exact: distinct numbers give distinct ids.
func TestPutIDDistinct(t *testing.T) {
	seen := map[string]uint64{}
	var key [enginetest.IDLen]byte
	for n := range uint64(200_000) {
		enginetest.PutID(key[:], n)
		if m, ok := seen[string(key[:])]; ok {
			t.Fatalf("ids %d and %d are both %q", m, n, key)
		}
		seen[string(key[:])] = n
	}
	if key[8] != '-' || key[23] != '-' {
		t.Fatalf("id %q is not UUID-shaped", key)
	}
}
