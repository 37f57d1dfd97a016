package registry

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/sim/flink"
)

// ScenarioOperator is an engine's dedup operator as a scenario's job runs
// it: the generated rows one at a time, in arrival order, each at its
// processing time.
type ScenarioOperator interface {
	// Process feeds one row at processing time procMs: key encodes its
	// key columns, value the whole row. It returns the row's outcome and
	// the number of changelog rows the operator emitted for it.
	Process(key, value []byte, procMs int64) (engines.Outcome, int)
	// State returns the operator's state entries at processing time
	// procMs: logical (not expired) and physical (still held).
	State(procMs int64) (logical, physical int64)
	// Function names the engine's runtime function.
	Function() string
}

// ScenarioQuery is one of an engine's queries, resolved for a scenario.
type ScenarioQuery struct {
	// Keys are the generated columns that key the dedup.
	Keys []string
	// NewOperator returns a fresh operator.
	NewOperator func() (ScenarioOperator, error)
}

// ScenarioQueryFor resolves the query of a scenario whose engine key is
// engine (not Spark, whose queries sim/spark/chain plans) with its
// options. An engine the harness cannot run yet is an error saying so.
func ScenarioQueryFor(engine, query string, options map[string]string) (ScenarioQuery, error) {
	switch engine {
	case flink.Engine:
		sq, err := flink.ParseScenarioQuery(query, options)
		if err != nil {
			return ScenarioQuery{}, err
		}
		return ScenarioQuery{Keys: sq.Keys, NewOperator: func() (ScenarioOperator, error) { return sq.NewOperator() }}, nil
	case Spark:
		return ScenarioQuery{}, fmt.Errorf("a Spark query is planned by sim/spark/chain, not resolved here")
	}
	if _, err := Lookup(engine); err != nil {
		return ScenarioQuery{}, err
	}
	return ScenarioQuery{}, fmt.Errorf("engine %s is not yet supported in scenarios: want spark or flink", engine)
}
