package runner

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// storeOpener maps a store name to its constructor: the one place that
// knows the backends.
func storeOpener(name string) (StoreOpener, error) {
	switch name {
	case scenario.StoreMemory, "":
		return func(dir string, op int, version int64) (engines.Store, error) {
			if dir == "" {
				return memstore.New(), nil
			}
			return memstore.Open(dir, version, memstore.Options{})
		}, nil
	}
	return nil, fmt.Errorf("store %q: unknown state store (want memory or pebble)", name)
}

// defaultSource is a job's stream: the scenario's generator.
func defaultSource(sc *scenario.Scenario) (Source, error) {
	return generators.New(sc)
}
