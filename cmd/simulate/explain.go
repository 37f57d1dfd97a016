package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/sim/registry"
)

func newExplainCmd(stdout io.Writer) *cobra.Command {
	var x *registry.Explainer
	cmd := &cobra.Command{
		Use:   "explain QUERY",
		Short: "Show how Spark plans a dedup query and warn about its pitfalls",
		Long: `explain parses a PySpark-style operator chain (or its JSON form), plans it
the way Spark's analyzer does, and prints the physical dedup operators with
their keys, watermark and eviction rule, followed by a warning in plain words
for every pitfall: no watermark (state grows forever), a watermark after the
dedup (it never reaches the operator), dropDuplicates with a watermark but
without the event time among its keys (global dedup, never evicted), the
event time among the keys (re-stamped retries are different keys), and a key
name that matches columns differing only in case (Spark keys on all of them).

Delays must be what Spark's withWatermark accepts: "10 seconds", "1 minute 30
seconds", "interval 2 hours", "interval '1 2:3:4' day to second"; not "10 s",
"10 sec", "10 min", "1 h", "10ms", "10seconds" or "1.5 minutes" (Spark's error
class is named).

Exit status: 0 when the query can run (even with warnings), 1 when Spark
would reject it, before it starts or while it runs (a second withWatermark:
Spark fails the query at the first micro-batch planned with a watermark other
than 0; the message says so).

Columns: by default the query's own column names are assumed to exist and the
withWatermark column is a timestamp; --generated plans against the columns of
dedupsim's generated rows; --columns lists them yourself.

A query starting with SELECT is Flink SQL (docs/flink.md): the
ROW_NUMBER() = 1 pattern is explained with the runtime function Flink picks,
or as "a Top-N rank, not a dedup" when it does not follow the pattern exactly.
A JSON object with "engine": "kafka-streams" or "beam" and the query fields
of that engine's traces (docs/kafka-streams.md, docs/beam.md) is explained
in that engine's terms instead. The engines:

` + registry.Describe(),
		Example: `  simulate explain 'events.withWatermark("event_time", "20 minutes").dropDuplicatesWithinWatermark(["event_id"])'
  simulate explain 'dropDuplicates(["event_id"])'
  simulate explain --columns id,ts:timestamp,payload 'withWatermark("ts", "1 hour").dropDuplicates()'
  simulate explain --option 'table.exec.state.ttl=60 s' 'SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1'
  simulate explain '{"engine": "kafka-streams", "window": "2 minutes", "time": "stream"}'
  simulate explain '{"engine": "beam", "timeDomain": "event", "duration": "1 minute"}'`,
		Args: oneArg("one query: a PySpark chain, a Flink SQL query or a JSON query object", "simulate explain 'dropDuplicates([\"event_id\"])'"),
		RunE: func(_ *cobra.Command, args []string) error {
			return x.Explain(stdout, args[0])
		},
	}
	x = registry.NewExplainer(cmd.Flags())
	return cmd
}
