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

// storeOpener maps a store name to its constructor: the one place that
// knows the backends. scratch is a folder for stores that need a directory
// even when the run keeps no checkpoint (Pebble); the caller removes it.
func storeOpener(name, scratch string) (StoreOpener, error) {
	switch name {
	case scenario.StoreMemory, "":
		return func(dir string, op int, version int64) (engines.Store, error) {
			if dir == "" {
				return memstore.New(), nil
			}
			return memstore.Open(dir, version, memstore.Options{})
		}, nil
	case scenario.StorePebble:
		return func(dir string, op int, version int64) (engines.Store, error) {
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
			s, err := pebblestore.Open(dir, pebbleOptions)
			if err != nil {
				return nil, err
			}
			have := int64(0)
			if last, ok := s.LastCommitted(); ok {
				have = last + 1
			}
			if have != version {
				s.Close()
				return nil, fmt.Errorf("pebble store %s holds state version %d, the query needs %d (a Pebble store keeps only its latest version)", dir, have, version)
			}
			return s, nil
		}, nil
	}
	return nil, fmt.Errorf("store %q: unknown state store (want memory or pebble)", name)
}

// defaultSource is a job's stream: the scenario's generator.
func defaultSource(sc *scenario.Scenario) (Source, error) {
	return generators.New(sc)
}
