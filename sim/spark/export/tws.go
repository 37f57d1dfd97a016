package export

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// A transformWithState TTL runs in processing time: a value set at batch i
// expires at batch j when ts(j) >= ts(i) + TTL, where ts is the batch
// timestamp, which Spark takes from the wall clock when it plans a batch
// and writes to the offset log. job.py runs the first batch as Spark plans
// it, and plans every later one itself: it writes the batch's offset-log
// entry (the previous one's, with the next file-source offset and the
// batch timestamp first batch's + BatchTimesMs) and the file source's log
// entry for the batch's file, then starts the query with Trigger.Once,
// which finds the batch planned and not committed and runs it as logged,
// with that timestamp: Spark's own recovery path. So Spark's batch
// timestamps are the export's exactly, however slow the machine; job.py
// checks them in the offset log after the run.

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
		n, ok := twsNode(q)
		if !ok {
			continue
		}
		switch {
		case n.Op.TimerMs > 0:
			return fmt.Errorf("not exportable: query %s is an event-time transformWithState dedup (timer=), whose processor job.py does not carry; its traces run on Spark through oracles/spark/traces.py", q.Name)
		case sp.kind == "trace":
			return fmt.Errorf("not exportable: query %s is a transformWithState dedup: its traces run on Spark through oracles/spark/traces.py (their processor, Python, is not part of job.py)", q.Name)
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
