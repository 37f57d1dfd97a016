package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// BatchLine is one output line: a StreamingQueryProgress-shaped record of
// one executed micro-batch, plus the rows it emitted. Its parts are those
// of the results folder's progress lines (metrics.ProgressLine).
type BatchLine struct {
	BatchID        int64                   `json:"batchId"`
	Step           int                     `json:"step"`
	NoData         bool                    `json:"noData"`
	NumInputRows   int                     `json:"numInputRows"`
	EventTime      *metrics.EventTimeStats `json:"eventTime,omitempty"`
	StateOperators []metrics.StateOperator `json:"stateOperators"`
	Sink           metrics.SinkProgress    `json:"sink"`
	Rows           []json.RawMessage       `json:"rows"`
}

// NewBatchLine converts an executor progress record into an output line.
func NewBatchLine(p *microbatch.Progress, step int, rows []json.RawMessage) BatchLine {
	if rows == nil {
		rows = []json.RawMessage{}
	}
	return BatchLine{
		BatchID: p.BatchID, Step: step, NoData: p.NoData, NumInputRows: p.NumInputRows,
		EventTime: p.EventTime(), StateOperators: p.StateOperators(),
		Sink: metrics.SinkProgress{NumOutputRows: p.NumOutputRows}, Rows: rows,
	}
}

// Run executes t and returns one line per executed micro-batch; Stream
// does the same without holding the lines.
func Run(t *Trace) ([]BatchLine, error) {
	var out []BatchLine
	err := Stream(context.Background(), t, func(l *BatchLine) error {
		c := *l
		c.Rows = slices.Clone(l.Rows)
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Stream executes t and calls emit with each executed micro-batch's line,
// in order; the line is reused after emit returns. Memory is bounded by
// one batch, whatever the trace's length. Restarts are real: the query's
// state lives in a checkpoint folder (a temporary one, removed
// afterwards), and a restart closes the query and starts a new one from
// that checkpoint. A query Spark fails while it runs returns the failure
// (a *microbatch.QueryFailure, wrapped) after the lines of the batches before
// it. Stream stops between steps once ctx is done and returns its error.
func Stream(ctx context.Context, t *Trace, emit func(*BatchLine) error) error {
	dir, err := os.MkdirTemp("", "dedupsim-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cp, err := microbatch.CreateCheckpoint(dir+"/checkpoint", microbatch.CheckpointMeta{Query: t.Chain.Text, Store: "memory"})
	if err != nil {
		return err
	}
	r := &runner{t: t, cp: cp, emit: emit}
	if r.q, err = startQuery(t.Plan, t.ShufflePartitions, cp); err != nil {
		return err
	}
	defer func() { r.q.Close() }()

	for si, s := range t.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case s.Restart:
			if err := r.q.Close(); err != nil {
				return fmt.Errorf("steps[%d]: restart: %w", si, err)
			}
			if r.q, err = startQuery(t.Plan, t.ShufflePartitions, cp); err != nil {
				return fmt.Errorf("steps[%d]: restart: %w", si, err)
			}
		case t.ManualClock && s.Trigger:
			r.clockMs += s.AdvanceMs
			err = r.trigger(si)
		case t.ManualClock:
			// addData: the source advances; the next trigger runs it.
			r.available = true
			r.pending.appendRows(s.Rows)
		default:
			if err = r.batch(si, s.Rows); err == nil {
				err = r.untilIdle(si)
			}
		}
		if err != nil {
			return fmt.Errorf("steps[%d]: %w", si, err)
		}
	}
	return nil
}

// runner is one run of a trace.
type runner struct {
	t  *Trace
	cp *microbatch.Checkpoint
	q  *microbatch.Query
	// available is set when an addData advanced the source since the last
	// batch (manual clock), pending holds its rows.
	available bool
	pending   RowSet
	// emit receives each line; line and emitted are reused.
	emit    func(*BatchLine) error
	line    BatchLine
	emitted []json.RawMessage
	// clockMs is the manual clock (ms since the epoch): each batch's
	// timestamp.
	clockMs int64
}

// send hands the line of batch p, caused by step si, to emit.
func (r *runner) send(p *microbatch.Progress, si int, rows []json.RawMessage) error {
	r.line = NewBatchLine(p, si, rows)
	return r.emit(&r.line)
}

// batch runs one data batch over rows, caused by step si.
func (r *runner) batch(si int, rows *RowSet) error {
	p, err := r.q.RunBatch(rows, microbatch.BatchMeta{TimestampMs: r.clockMs})
	if err != nil {
		return err
	}
	r.emitted = r.emitted[:0]
	for i, o := range r.q.Outcomes() {
		if o == engines.Emitted {
			r.emitted = append(r.emitted, rows.Raw[i])
		}
	}
	return r.send(p, si, r.emitted)
}

// anotherBatch is constructNextBatch's question to the last batch, asked
// only when no-data batches are enabled: a no-data batch, or Spark's
// failure.
func (r *runner) anotherBatch() (bool, error) {
	if !r.t.NoDataMicroBatches {
		return false, nil
	}
	return r.q.ShouldRunAnotherBatch()
}

// noData runs a no-data batch, caused by step si.
func (r *runner) noData(si int) error {
	p, err := r.q.RunNoDataBatch(microbatch.BatchMeta{TimestampMs: r.clockMs})
	if err != nil {
		return fmt.Errorf("no-data batch: %w", err)
	}
	return r.send(p, si, nil)
}

// untilIdle runs the triggers after a batch until Spark would be idle: the
// no-data batches it asks for (one at most, as a no-data batch leaves the
// watermark where it was).
func (r *runner) untilIdle(si int) error {
	for {
		need, err := r.anotherBatch()
		if err != nil || !need {
			return err
		}
		if err := r.noData(si); err != nil {
			return err
		}
	}
}

// trigger fires one trigger of a manual clock, as MicroBatchExecution's
// runActivatedStream does: constructNextBatch asks the last batch about
// another batch (which may fail the query), then runs a batch of the
// available rows, else the no-data batch asked for, else nothing.
func (r *runner) trigger(si int) error {
	need, err := r.anotherBatch()
	if err != nil {
		return err
	}
	if r.available {
		rows := r.pending
		r.available, r.pending = false, RowSet{}
		return r.batch(si, &rows)
	}
	if need {
		return r.noData(si)
	}
	return nil
}

// startQuery starts the query from whatever cp holds: nothing for a new
// query, else the state after its last committed batch, its chain's rows
// ordered between operators by shuffle partitions (the trace's
// ShufflePartitions).
func startQuery(plan chain.Plan, shuffle int, cp *microbatch.Checkpoint) (*microbatch.Query, error) {
	rec, err := cp.Recover()
	if err != nil {
		return nil, err
	}
	version := rec.State.NextBatchID
	mem, err := stores.Lookup(stores.Memory, "")
	if err != nil {
		return nil, err
	}
	open := func(op int, _ chain.Node) (engines.Store, error) { return mem.Open(cp.StateDir(op), version) }
	q, err := microbatch.NewQuery(plan, open, rec.State)
	if err != nil {
		return nil, err
	}
	if err := q.SetShufflePartitions(shuffle); err != nil {
		q.Close()
		return nil, err
	}
	q.SetCheckpoint(cp)
	return q, nil
}

// WriteLines writes lines as JSON Lines.
func WriteLines(w io.Writer, lines []BatchLine) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return err
		}
	}
	return nil
}

// LoadFile reads and parses the trace in the file at path: a regular file
// of at most fileio.MaxTraceBytes (a FIFO or a device is refused before it
// is opened). Its errors name the file once: "PATH: why".
func LoadFile(path string) (*Trace, error) {
	data, err := fileio.ReadFile(path, fileio.MaxTraceBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", fileio.ShowPath(path), fileio.Reason(err))
	}
	t, err := Load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fileio.ShowPath(path), err)
	}
	return t, nil
}
