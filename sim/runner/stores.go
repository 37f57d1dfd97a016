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

// backend is a state store backend: how to open a store, how to reopen it
// at a job snapshot's version from exactly the files the snapshot
// recorded, and which files those are.
type backend struct {
	open StoreOpener
	// resume opens a store at a job snapshot's version from the files
	// files lists for that version, and nothing else.
	resume StoreOpener
	// files lists the files the store's state at version is read from,
	// which job snapshots record checksums of.
	files func(dir string, version int64) ([]string, error)
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
		open := func(dir string, op int, version int64) (engines.Store, error) {
			if dir == "" {
				return memstore.New(), nil
			}
			return memstore.Open(dir, version, memstore.Options{})
		}
		return backend{open: open, resume: open, files: memstore.StateFiles}, nil
	case scenario.StorePebble:
		return backend{
			open: func(dir string, op int, version int64) (engines.Store, error) {
				if dir == "" {
					if err := os.MkdirAll(scratch, 0o777); err != nil {
						return nil, err
					}
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
			resume: func(dir string, op int, version int64) (engines.Store, error) {
				return pebblestore.RestoreAt(dir, version, pebbleOptions)
			},
			files: pebblestore.StateFiles,
		}, nil
	}
	return backend{}, fmt.Errorf("store %q: unknown state store (want memory or pebble)", name)
}

// defaultSource is a job's stream: the scenario's generator.
func defaultSource(sc *scenario.Scenario) (Source, error) {
	return generators.New(sc.Generator())
}
