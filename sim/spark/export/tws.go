package export

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// TWSMarginMs is how far, in milliseconds, every gap between two batches
// of an export with a transformWithState TTL must stay from the TTL.
//
// A transformWithState TTL runs in processing time: a value set at batch
// i expires at batch j when ts(j) >= ts(i) + TTL, where ts is the batch
// timestamp, which Spark takes from the wall clock. job.py runs each batch
// as a query started with Trigger.Once at its trigger's time relative to
// the first batch (it sleeps until then), so Spark's timestamps are the
// export's plus a lateness of a query start, which varies by up to a few
// seconds on a loaded machine. When every gap between two batches is at
// least TWSMarginMs from the TTL, and the latenesses of all batches lie
// within TWSMarginMs of each other, every expiry decision is the export's:
// the export refuses a scenario that breaks the first, job.py fails a run
// that breaks the second (it reads Spark's batch timestamps from the
// offset log).
const TWSMarginMs = 5000

// twsNode returns the transformWithState node of q's plan, if it has one.
func twsNode(q *Query) (chain.Node, bool) {
	for _, n := range q.Plan.Nodes {
		if n.Op.Kind == chain.TransformWithStateDedup {
			return n, true
		}
	}
	return chain.Node{}, false
}

// twsApply returns the PySpark expression job.py applies for a
// transformWithState dedup query: job.py's tws_dedup, with the grouping
// keys and the TTL in milliseconds (0: none).
func twsApply(n chain.Node) string {
	keys := make([]string, len(n.Op.Keys))
	for i, k := range n.Op.Keys {
		keys[i] = pyString(k)
	}
	return "tws_dedup(df, [" + strings.Join(keys, ", ") + "], " + strconv.FormatInt(n.Op.TTLMs, 10) + ")"
}

// checkTWS refuses, in one line, the exports with a transformWithState
// query that job.py cannot run on the wall clock: a trace (its steps run
// through oracles/spark/traces.py), a fault that restarts the queries (each
// batch is already a start of its own), a chain of more than the one
// operator.
func checkTWS(sp *spec) error {
	for i := range sp.queries {
		q := &sp.queries[i]
		if _, ok := twsNode(q); !ok {
			continue
		}
		switch {
		case sp.kind == "trace":
			return fmt.Errorf("not exportable: query %s is a transformWithState dedup, whose trace steps set a manual clock; its traces run on Spark through oracles/spark/traces.py", q.Name)
		case sp.restarts:
			return fmt.Errorf("not exportable: query %s is a transformWithState dedup, which job.py runs as one Trigger.Once query per batch on the wall clock; a restart or lost checkpoint fault cannot be placed among them: remove the faults", q.Name)
		case len(q.Plan.Nodes) != 1:
			return fmt.Errorf("not exportable: query %s chains a transformWithState dedup with other operators; export it alone", q.Name)
		}
	}
	return nil
}

// hasTWS reports whether some query of sp is a transformWithState dedup.
func hasTWS(sp *spec) bool {
	for i := range sp.queries {
		if _, ok := twsNode(&sp.queries[i]); ok {
			return true
		}
	}
	return false
}

// checkTWSGaps refuses an export whose batch times (ms, ascending) have
// two batches a gap within TWSMarginMs of a query's TTL: the wall clock
// cannot tell on which side of the expiry Spark's batch falls.
func checkTWSGaps(sp *spec, times []int64) error {
	for i := range sp.queries {
		n, ok := twsNode(&sp.queries[i])
		if !ok || n.Op.TTLMs <= 0 {
			continue
		}
		ttl := n.Op.TTLMs
		for a, ta := range times {
			// The first batch at or after ta + ttl - margin: if it comes
			// before ta + ttl + margin, its gap is too close.
			lo := ta + ttl - TWSMarginMs
			b := a + sort.Search(len(times)-a, func(k int) bool { return times[a+k] > lo })
			if b < len(times) && times[b] < ta+ttl+TWSMarginMs {
				return fmt.Errorf("not exportable: query %s: batches %d and %d are %s apart, within %s of its transformWithState TTL %s; Spark's batch timestamps are the wall clock, which job.py places to within a few seconds: choose a TTL at least %s away from every multiple of the trigger (e.g. a multiple and a half)",
					sp.queries[i].Name, a, b, ms(times[b]-ta), ms(TWSMarginMs), ms(ttl), ms(TWSMarginMs))
			}
		}
	}
	return nil
}

// ms renders a duration in milliseconds as seconds ("12.5 s").
func ms(v int64) string {
	return strconv.FormatFloat(float64(v)/1000, 'f', -1, 64) + " s"
}
