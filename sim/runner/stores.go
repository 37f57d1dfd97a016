package runner

import (
	"context"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// opener adapts a backend's Open or Resume to a StoreOpener.
func opener(open func(dir string, version int64) (engines.Store, error)) StoreOpener {
	return func(dir string, _ int, version int64) (engines.Store, error) { return open(dir, version) }
}

// interruptOn makes the stores open returns stop waiting when ctx is
// cancelled: a store that can be interrupted (pebblestore.Store.Interrupt:
// a job waiting on a flush stuck in Pebble's write stall ignored SIGTERM)
// is interrupted then.
func interruptOn(ctx context.Context, open StoreOpener) StoreOpener {
	return func(dir string, partition int, version int64) (engines.Store, error) {
		s, err := open(dir, partition, version)
		if i, ok := s.(interface{ Interrupt() }); ok && err == nil {
			context.AfterFunc(ctx, i.Interrupt)
		}
		return s, err
	}
}

// defaultSource is a job's stream: the scenario's generator, or its
// event log's rows (generators.NewSource).
func defaultSource(sc *scenario.Scenario) (Source, error) {
	return generators.NewSource(sc.Generator())
}
