package runner

import (
	"context"
	"sync"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

// TestPebbleMemoryReachesTheStores checks that Options.PebbleMemory sizes
// every Pebble store a run opens (half cache, half overlay).
func TestPebbleMemoryReachesTheStores(t *testing.T) {
	const budget = 6 << 20
	var mu sync.Mutex
	seen := 0
	opts := Options{Store: "pebble", PebbleMemory: budget, ScratchDir: t.TempDir(),
		StoreHook: func(ev StoreEvent) engines.Store {
			sized, ok := ev.Store.(interface{ MemorySizes() (int64, int64) })
			if !ok {
				t.Errorf("%s: a %T is no Pebble store", ev.Job, ev.Store)
				return ev.Store
			}
			cache, overlay := sized.MemorySizes()
			if cache != budget/2 || overlay != budget/2 {
				t.Errorf("%s: cache %d, overlay %d; want %d each", ev.Job, cache, overlay, budget/2)
			}
			mu.Lock()
			seen++
			mu.Unlock()
			return ev.Store
		}}
	res, err := Run(context.Background(), load(t, small), opts)
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	if seen == 0 {
		t.Fatal("the hook saw no store")
	}
}
