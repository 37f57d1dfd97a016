package scenario

import "github.com/dedupsim/dedupsim/sim/chain"

// Schema returns the generated columns of SCENARIO.md, in column order, as
// the chain planner sees them. Queries are planned against it. It lives
// here, beside the contract that names the columns, so that validating a
// scenario does not depend on the generators (which depend on this
// package); generators.Schema returns the same columns.
func Schema() chain.Schema {
	return chain.Schema{
		{Name: "event_id", Type: chain.Other},
		{Name: "customer_id", Type: chain.Other},
		{Name: "event_time", Type: chain.Timestamp},
		{Name: "ingest_time", Type: chain.Timestamp},
		{Name: "attempt", Type: chain.Other},
		{Name: "payload", Type: chain.Other},
	}
}
