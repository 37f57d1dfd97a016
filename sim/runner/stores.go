package runner

import (
	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// opener adapts a backend's Open or Resume to a StoreOpener.
func opener(open func(dir string, version int64) (engines.Store, error)) StoreOpener {
	return func(dir string, _ int, version int64) (engines.Store, error) { return open(dir, version) }
}

// defaultSource is a job's stream: the scenario's generator, or its
// event log's rows (generators.NewSource).
func defaultSource(sc *scenario.Scenario) (Source, error) {
	return generators.NewSource(sc.Generator())
}
