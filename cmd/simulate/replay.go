package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/sim/registry"
)

func newReplayCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "replay FILE",
		Short: "Run a micro-batch trace through one query and print each batch's progress",
		Long: `replay runs one hand-written micro-batch trace (the format of
docs/replay-format.md) through its query and prints, as JSON Lines, what every executed
micro-batch did: batch id, watermark, each dedup operator's counters
(numRowsTotal, numRowsUpdated, numRowsRemoved, numRowsDroppedByWatermark,
numDroppedDuplicateRows) and the rows emitted.

A trace with "manualClock": true runs as Spark's StreamTest with a manual
clock: addData only adds rows, and each {"advanceManualClock": true} step fires
one trigger (one data batch of the rows added since the last batch, else a
no-data batch if Spark runs one, else nothing).

A bad trace (broken JSON, unknown operator, a delay Spark's withWatermark
rejects, a key column no row has, a non-timestamp event time,
dropDuplicatesWithinWatermark without a watermark), or a query Spark fails
while it runs (a second withWatermark, once the watermark is not 0), is
rejected with one line on stderr and nothing on stdout. FILE must be a
regular file of at most 64 MiB: a FIFO or a device is refused.

A trace with "engine": "flink" is a Flink trace (docs/flink.md): it runs
through dedupsim's model of Flink's deduplicate functions and prints, per
step, the changelog rows emitted and the logical and physical state. A
trace with "engine": "kafka-streams" or "beam" runs through that engine's
model instead and prints one JSON line per step (docs/kafka-streams.md,
docs/beam.md). The engines, by the value of "engine" (none is Spark):

` + registry.Describe(),
		Example: `  simulate replay sim/spark/replay/testdata/conformance/own-seed-within-watermark-drops-second-copy.json
  simulate replay sim/spark/replay/testdata/conformance/own-seed-pair-keyed-dropduplicates-keeps-both-copies.json
  simulate replay sim/flink/testdata/own-proctime-keep-first-ttl-from-first-copy.json`,
		Args: oneArg("one trace file", "simulate replay sim/spark/replay/testdata/conformance/own-seed-within-watermark-drops-second-copy.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return registry.Replay(cmd.Context(), args[0], stdout)
		},
	}
}
