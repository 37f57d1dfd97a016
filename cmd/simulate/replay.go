package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	flinksim "github.com/dedupsim/dedupsim/sim/flink"
	"github.com/dedupsim/dedupsim/sim/spark/replay"
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
docs/beam.md).`,
		Example: `  simulate replay sim/spark/replay/testdata/conformance/own-seed-within-watermark-drops-second-copy.json
  simulate replay sim/spark/replay/testdata/conformance/own-seed-pair-keyed-dropduplicates-keeps-both-copies.json
  simulate replay sim/flink/testdata/own-proctime-keep-first-ttl-from-first-copy.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if flinksim.IsTraceFile(args[0]) { // "engine": "flink": docs/flink.md
				return replayFlink(stdout, args[0])
			}
			if done, err := replayOtherEngine(args[0], stdout); done || err != nil {
				return err // A Kafka Streams or Beam trace.
			}
			t, err := replay.LoadFile(args[0])
			if err != nil {
				return err
			}
			return replayTo(cmd.Context(), t, args[0], stdout)
		},
	}
}

// replayTo runs t and prints its lines to stdout only once every batch ran:
// a failure or a signal prints nothing. The lines are spooled to a
// temporary file meanwhile, so memory does not grow with the trace.
func replayTo(ctx context.Context, t *replay.Trace, name string, stdout io.Writer) error {
	spool, err := os.CreateTemp("", "dedupsim-replay-out-")
	if err != nil {
		return err
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	w := bufio.NewWriter(spool)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := replay.Stream(ctx, t, func(l *replay.BatchLine) error { return enc.Encode(l) }); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("replay output: %w", err)
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("replay output: %w", err)
	}
	_, err = io.Copy(stdout, ctxReader{ctx, spool})
	return err
}

// ctxReader reads r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
