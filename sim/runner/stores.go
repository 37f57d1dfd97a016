package runner

import (
	"fmt"
	"os"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/pebblestore"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// pebbleOptions keep each operator's Pebble small: a run holds one store per
// query (and sweep point) at once, on every core.
var pebbleOptions = pebblestore.Options{CacheSize: 16 << 20, MemTableSize: 16 << 20}

// StoreChecker reports whether the state store in dir can be opened at
// version, without writing anything: a resumed run checks every store of
// every job before it changes any file.
type StoreChecker func(dir string, version int64) error

// backend is a state store backend: how to open a store and how to check
// one before a resume.
type backend struct {
	open  StoreOpener
	check StoreChecker
}

// storeBackend maps a store name to its backend: the one place that knows
// the backends. scratch is a folder for stores that need a directory even
// when the run keeps no checkpoint (Pebble); the caller removes it.
//
// Both backends reopen a store at an older version than its latest commit,
// which a resumed run needs (engines.Snapshotter): the memory store keeps
// every version in its delta and snapshot files, Pebble restores the
// checkpoint its Snapshot saved.
func storeBackend(name, scratch string) (backend, error) {
	switch name {
	case scenario.StoreMemory, "":
		return backend{
			open: func(dir string, op int, version int64) (engines.Store, error) {
				if dir == "" {
					return memstore.New(), nil
				}
				return memstore.Open(dir, version, memstore.Options{})
			},
			check: memstore.Check,
		}, nil
	case scenario.StorePebble:
		return backend{
			open: func(dir string, op int, version int64) (engines.Store, error) {
				if dir == "" {
					d, err := os.MkdirTemp(scratch, "pebble-")
					if err != nil {
						return nil, err
					}
					if err := os.Remove(d); err != nil {
						return nil, err
					}
					dir = d
				}
				return pebblestore.OpenAt(dir, version, pebbleOptions)
			},
			check: func(dir string, version int64) error {
				return pebblestore.CheckAt(dir, version, pebbleOptions)
			},
		}, nil
	}
	return backend{}, fmt.Errorf("store %q: unknown state store (want memory or pebble)", name)
}

// defaultSource is a job's stream: the scenario's generator.
func defaultSource(sc *scenario.Scenario) (Source, error) {
	return generators.New(sc)
}
