package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim"
	"github.com/dedupsim/dedupsim/sim/chain"
	"github.com/dedupsim/dedupsim/sim/replay"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// Source yields generated rows in arrival order.
type Source interface {
	// Next fills r with the next row and reports false at the end.
	Next(r *generators.Row) bool
}

// StoreOpener opens the state store of dedup operator op of a job. dir is
// the operator's checkpoint folder ("" when the job keeps no checkpoint)
// and version the committed batch count to resume from.
type StoreOpener func(dir string, op int, version int64) (engines.Store, error)

// jobEnv is what a job needs besides its own description.
type jobEnv struct {
	sc        *scenario.Scenario
	newSource func() (Source, error)
	openStore StoreOpener
	storeName string
	// checkpointRoot is the folder under which the job keeps its
	// checkpoint; "" runs without one (no faults to recover from).
	checkpointRoot string
	// progress receives processed simulated seconds, for the bar.
	progress func(seconds float64)
	// markers collects bad-clock moments (job 0 only).
	badClock func(arrival int64)
}

// jobResult is one job's output.
type jobResult struct {
	summary  metrics.QuerySummary
	records  []metrics.BatchRecord
	progress []byte
}

// progressLine is one line of progress/<query>.jsonl: the replay output's
// shape, with the batch's processing time and without rows.
type progressLine struct {
	BatchID        int64                  `json:"batchId"`
	Timestamp      string                 `json:"timestamp"`
	NoData         bool                   `json:"noData"`
	NumInputRows   int                    `json:"numInputRows"`
	EventTime      *replay.EventTimeStats `json:"eventTime,omitempty"`
	StateOperators []replay.StateOperator `json:"stateOperators"`
	Sink           replay.SinkProgress    `json:"sink"`
}

// runJob runs one job over its own copy of the scenario's stream.
func runJob(ctx context.Context, env jobEnv, job Job) (*jobResult, error) {
	sc := env.sc
	src, err := env.newSource()
	if err != nil {
		return nil, err
	}
	ids := generators.UUIDIDs
	if sc.Workload.IDs == scenario.Ints {
		ids = generators.IntIDs
	}
	var entryBytes []int64
	for _, n := range job.Plan.Nodes {
		if n.IsDedup() {
			entryBytes = append(entryBytes, metrics.EntryBytes(n, ids))
		}
	}

	ck := newCheckpointer(env, job)
	q, err := ck.open()
	if err != nil {
		return nil, err
	}
	defer func() { q.Close() }()

	res := &jobResult{}
	sum := &res.summary
	sum.Name, sum.Query, sum.Delay, sum.Store = job.Name, job.Query, job.Delay, env.storeName
	sum.BytesPerEntry = entryBytes
	for _, w := range job.Plan.Warnings {
		sum.Warnings = append(sum.Warnings, w.Message)
	}
	var acct metrics.Accountant
	var prog bytes.Buffer
	enc := json.NewEncoder(&prog)
	enc.SetEscapeHTML(false)
	maxLag := math.Inf(-1)

	start := sc.Start.UnixMicro()
	trigger := sc.Trigger.Micros()
	faults := sc.Faults
	nextFault := 0
	sinkRNG := newSinkDraws(sc.Seed)

	batch := generators.Batch{IDs: ids}
	var look generators.Row
	hasLook := src.Next(&look)
	var engineTime time.Duration
	lastReported := start

	for t := start + trigger; ; t += trigger {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Faults fire at the first trigger at or after their offset,
		// before that trigger's batch.
		for nextFault < len(faults) && start+faults[nextFault].At.Micros() <= t {
			f := faults[nextFault]
			nextFault++
			sum.Restarts++
			if q, err = ck.restart(q, f.Kind == scenario.LoseCheckpoint); err != nil {
				return nil, fmt.Errorf("fault %s at %s: %w", f.Kind, f.At, err)
			}
		}

		batch.Rows = batch.Rows[:0]
		for hasLook && look.Arrival <= t {
			if look.Truth.BadClock && env.badClock != nil {
				env.badClock(look.Arrival)
			}
			batch.Rows = append(batch.Rows, look)
			hasLook = src.Next(&look)
		}
		failed := sinkRNG.fails(t, sc.Sink.FailureProbability)

		var p *sim.Progress
		meta := sim.BatchMeta{TimestampMs: t / 1000}
		t0 := time.Now()
		switch {
		case len(batch.Rows) > 0:
			p, err = q.RunBatch(&batch, meta)
		case sc.NoDataMicroBatches && q.NeedsNoDataBatch():
			p, err = q.RunNoDataBatch(meta)
		case !hasLook && nextFault >= len(faults):
			// The stream is over and the query idle: the run is done.
			sum.WallSeconds = engineTime.Seconds()
			finish(sum, &acct, q, entryBytes, maxLag)
			res.progress = prog.Bytes()
			env.progress(float64(t-lastReported) / 1e6)
			return res, nil
		default:
			// Idle trigger: no batch. Skip ahead to the next arrival or
			// fault; nothing happens on the triggers in between.
			if hasLook {
				next := look.Arrival
				if nextFault < len(faults) {
					next = min(next, start+faults[nextFault].At.Micros())
				}
				if skip := (next - t) / trigger; skip > 1 {
					t += (skip - 1) * trigger
				}
			}
			continue
		}
		engineTime += time.Since(t0)
		if err != nil {
			return nil, err
		}
		if len(batch.Rows) > 0 {
			acct.Observe(batch.Rows, q.Outcomes())
		}
		if p.NoData {
			sum.NoDataBatches++
		}
		sum.Batches++
		sum.SinkWrites += int64(p.NumOutputRows)
		if failed {
			// A failed batch is retried from the checkpoint and, the
			// engines being deterministic, recomputes the same rows: an
			// append sink writes them again, an idempotent sink (keyed by
			// batch id) skips the batch it already has.
			if sc.Sink.Kind == scenario.SinkAppend {
				sum.SinkDuplicates += int64(p.NumOutputRows)
				sum.SinkWrites += int64(p.NumOutputRows)
			}
		}

		var stateRows, stateBytes int64
		for k, op := range q.Operators() {
			n := int64(op.Len())
			stateRows += n
			stateBytes += n * entryBytes[k]
		}
		sum.PeakStateRows = max(sum.PeakStateRows, stateRows)
		sum.PeakStateBytes = max(sum.PeakStateBytes, stateBytes)
		if p.HasWatermark && p.Watermark > 0 {
			maxLag = math.Max(maxLag, float64(t/1000-p.Watermark)/1000)
		}
		res.records = append(res.records, metrics.BatchRecord{
			Query: job.Name, Delay: job.Delay, BatchID: p.BatchID,
			ProcessingTime: t / 1000, Watermark: p.Watermark, HasWatermark: p.HasWatermark, NoData: p.NoData,
			InputRows: int64(p.NumInputRows), EmittedRows: int64(p.NumOutputRows),
			DroppedByWatermark: sumOps(p, func(o sim.OperatorProgress) int64 { return o.NumRowsDroppedByWatermark }),
			DroppedDuplicates:  sumOps(p, func(o sim.OperatorProgress) int64 { return o.NumDroppedDuplicateRows }),
			StateRows:          stateRows, StateBytes: stateBytes,
			MissedDuplicates: acct.MissedDuplicates, FalseDrops: acct.FalseDrops,
		})
		line := progressLine{
			BatchID: p.BatchID, Timestamp: metrics.FormatMillis(t / 1000), NoData: p.NoData,
			NumInputRows: p.NumInputRows, Sink: replay.SinkProgress{NumOutputRows: p.NumOutputRows},
		}
		bl := replay.NewBatchLine(p, 0, nil)
		line.EventTime, line.StateOperators = bl.EventTime, bl.StateOperators
		if err := enc.Encode(&line); err != nil {
			return nil, err
		}
		if t-lastReported >= 60e6 {
			env.progress(float64(t-lastReported) / 1e6)
			lastReported = t
		}
	}
}

func sumOps(p *sim.Progress, f func(sim.OperatorProgress) int64) int64 {
	var n int64
	for _, o := range p.Operators {
		n += f(o)
	}
	return n
}

// finish fills the summary's totals once the stream is over.
func finish(sum *metrics.QuerySummary, a *metrics.Accountant, q *sim.Query, entryBytes []int64, maxLag float64) {
	sum.InputRows = a.InputRows
	sum.LogicalEvents = a.LogicalEvents
	sum.TrueDuplicates = a.TrueDuplicates
	sum.EmittedRows = a.EmittedRows
	sum.MissedDuplicates = a.MissedDuplicates
	sum.FalseDrops = a.FalseDrops
	sum.FalseDropsByCause = metrics.FalseDropCauses{Late: a.FalseDropsLate, Collision: a.FalseDropsCollide}
	sum.DroppedByWatermark = a.DroppedByWatermark
	sum.DroppedDuplicates = a.DroppedDuplicates
	if a.TrueDuplicates > 0 {
		sum.MissedDuplicateRate = float64(a.MissedDuplicates) / float64(a.TrueDuplicates)
	}
	if a.LogicalEvents > 0 {
		sum.FalseDropRate = float64(a.FalseDrops) / float64(a.LogicalEvents)
	}
	for k, op := range q.Operators() {
		n := int64(op.Len())
		sum.FinalStateRows += n
		sum.FinalStateBytes += n * entryBytes[k]
	}
	if !math.IsInf(maxLag, -1) {
		sum.MaxWatermarkLagSeconds = &maxLag
	}
	if sum.WallSeconds > 0 {
		sum.EventsPerSecond = float64(sum.InputRows) / sum.WallSeconds
	}
}

// checkpointer owns a job's query: where its checkpoint lives and how a
// restart fault reopens it.
type checkpointer struct {
	env  jobEnv
	job  Job
	dir  string // current checkpoint folder, "" without checkpoints
	gen  int    // lose-checkpoint count: each loss starts a new folder
	plan chain.Plan
}

func newCheckpointer(env jobEnv, job Job) *checkpointer {
	return &checkpointer{env: env, job: job, plan: job.Plan}
}

func (c *checkpointer) folder() string {
	if c.env.checkpointRoot == "" {
		return ""
	}
	return filepath.Join(c.env.checkpointRoot, fmt.Sprintf("%s.%d", c.job.FileName, c.gen))
}

// open starts the query from the current checkpoint folder (new or not).
func (c *checkpointer) open() (*sim.Query, error) {
	dir := c.folder()
	if dir == "" {
		stores := func(op int, _ chain.Node) (engines.Store, error) { return c.env.openStore("", op, 0) }
		return sim.NewQuery(c.plan, stores, sim.State{})
	}
	var cp *sim.Checkpoint
	var err error
	if _, statErr := os.Stat(filepath.Join(dir, "metadata")); statErr == nil {
		if cp, _, err = sim.OpenCheckpoint(dir); err != nil {
			return nil, err
		}
	} else if cp, err = sim.CreateCheckpoint(dir, sim.CheckpointMeta{Query: c.job.Query, Store: c.env.storeName}); err != nil {
		return nil, err
	}
	rec, err := cp.Recover()
	if err != nil {
		return nil, err
	}
	stores := func(op int, _ chain.Node) (engines.Store, error) {
		return c.env.openStore(cp.StateDir(op), op, rec.State.NextBatchID)
	}
	q, err := sim.NewQuery(c.plan, stores, rec.State)
	if err != nil {
		return nil, err
	}
	q.SetCheckpoint(cp)
	return q, nil
}

// restart closes q and starts it again: from its own checkpoint, or from a
// new, empty one when the checkpoint is lost.
func (c *checkpointer) restart(q *sim.Query, lose bool) (*sim.Query, error) {
	if err := q.Close(); err != nil {
		return nil, err
	}
	if lose {
		c.gen++
		if c.env.checkpointRoot == "" {
			return c.open()
		}
	} else if c.env.checkpointRoot == "" {
		return nil, fmt.Errorf("a restart needs a checkpoint folder")
	}
	return c.open()
}
