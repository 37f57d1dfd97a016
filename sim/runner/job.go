package runner

import (
	"bufio"
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

// Resumable is implemented by sources whose position can be saved and
// restored exactly (generators.Generator), which resumable runs need.
type Resumable interface {
	State() ([]byte, error)
	Restore([]byte) error
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
	// jobDir is the folder where the job keeps its query checkpoints and,
	// when resumable, its own state; "" runs in memory only.
	jobDir string
	// resumable makes the job save its whole state at batch boundaries so
	// that a killed run resumes where it was.
	resumable bool
	// snapshotEvery is the wall-clock interval between job snapshots.
	snapshotEvery time.Duration
	// snapshotAt, if set, decides instead when to snapshot (tests; see
	// Options.snapshotAt).
	snapshotAt func(nextBatchID int64) bool
	// progress receives processed simulated seconds, for the bar.
	progress func(seconds float64)
	// badClock collects bad-clock moments (job 0 only).
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

// jobRun is one job in progress: everything a snapshot must capture.
type jobRun struct {
	env job
	src Source
	ck  *checkpointer
	q   *sim.Query

	sum        metrics.QuerySummary
	acct       metrics.Accountant
	maxLag     float64
	entryBytes []int64
	ids        generators.IDKind

	t         int64 // the next trigger time (us)
	nextFault int
	look      generators.Row
	hasLook   bool

	records  []metrics.BatchRecord
	progress []byte
	// parts receive records and progress lines when the job is resumable.
	parts        *partFiles
	restoredLens [2]int64
}

// job bundles the job and its environment for a run.
type job struct {
	jobEnv
	Job
}

// runJob runs one job over its own copy of the scenario's stream.
func runJob(ctx context.Context, env jobEnv, j Job) (*jobResult, error) {
	r := &jobRun{env: job{env, j}}
	if env.resumable {
		if res, err := loadDone(env.jobDir); err != nil || res != nil {
			if res != nil {
				env.progress(env.sc.Duration.Std().Seconds())
			}
			return res, err
		}
	}
	if err := r.init(); err != nil {
		return nil, err
	}
	defer func() {
		if r.q != nil {
			r.q.Close()
		}
		if r.parts != nil {
			r.parts.close()
		}
	}()
	return r.loop(ctx)
}

func (r *jobRun) init() error {
	sc := r.env.sc
	src, err := r.env.newSource()
	if err != nil {
		return err
	}
	r.src = src
	r.ids = generators.UUIDIDs
	if sc.Workload.IDs == scenario.Ints {
		r.ids = generators.IntIDs
	}
	for _, n := range r.env.Plan.Nodes {
		if n.IsDedup() {
			r.entryBytes = append(r.entryBytes, metrics.EntryBytes(n, r.ids))
		}
	}
	s := &r.sum
	s.Name, s.Query, s.Delay, s.Store = r.env.Name, r.env.Query, r.env.Delay, r.env.storeName
	s.BytesPerEntry = r.entryBytes
	s.Warnings = []string{}
	for _, w := range r.env.Plan.Warnings {
		s.Warnings = append(s.Warnings, w.Message)
	}
	r.maxLag = math.Inf(-1)
	r.ck = &checkpointer{env: r.env.jobEnv, job: r.env.Job}
	r.t = sc.Start.UnixMicro() + sc.Trigger.Micros()

	// Nothing in the job's folder changes until the query is open: a
	// snapshot or a state file that cannot be read fails the resume with
	// the folder as it was.
	state := sim.State{}
	resumed := false
	if r.env.resumable {
		if resumed, state, err = r.restore(); err != nil {
			return fmt.Errorf("resume from %s: %w", r.env.jobDir, err)
		}
		if !resumed {
			// A run killed before this job's first snapshot: its query
			// checkpoints cannot be resumed (the stream restarts from the
			// beginning), and a restart would recover from them.
			if err := discardQueryFolders(r.env.jobDir, -1); err != nil {
				return err
			}
		}
	}
	if !resumed {
		r.hasLook = r.src.Next(&r.look)
	}
	if r.q, err = r.ck.open(state); err != nil {
		if resumed {
			return fmt.Errorf("resume from %s: %w", r.env.jobDir, err)
		}
		return err
	}
	if r.env.resumable {
		if resumed {
			// Folders of checkpoints lost after the snapshot belong to
			// the killed run: the resumed one loses them again.
			err = discardQueryFolders(r.env.jobDir, r.ck.gen)
		}
		if err == nil {
			r.parts, err = openParts(r.env.jobDir, resumed, r.snapshotLens())
		}
		if err != nil {
			r.q.Close()
			r.q = nil
			return err
		}
	}
	return nil
}

func (r *jobRun) loop(ctx context.Context) (*jobResult, error) {
	sc := r.env.sc
	start := sc.Start.UnixMicro()
	trigger := sc.Trigger.Micros()
	faults := sc.Faults
	sinkRNG := newSinkDraws(sc.Seed)
	batch := generators.Batch{IDs: r.ids}
	var engineTime time.Duration
	lastReported := r.t - trigger
	lastSnapshot := time.Now()
	var err error

	for ; ; r.t += trigger {
		t := r.t
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Faults fire at the first trigger at or after their offset,
		// before that trigger's batch.
		for r.nextFault < len(faults) && start+faults[r.nextFault].At.Micros() <= t {
			f := faults[r.nextFault]
			r.nextFault++
			r.sum.Restarts++
			if r.q, err = r.ck.restart(r.q, f.Kind == scenario.LoseCheckpoint); err != nil {
				return nil, fmt.Errorf("fault %s at %s: %w", f.Kind, f.At, err)
			}
		}

		batch.Rows = batch.Rows[:0]
		for r.hasLook && r.look.Arrival <= t {
			if r.look.Truth.BadClock && r.env.badClock != nil {
				r.env.badClock(r.look.Arrival)
			}
			batch.Rows = append(batch.Rows, r.look)
			r.hasLook = r.src.Next(&r.look)
		}

		var p *sim.Progress
		meta := sim.BatchMeta{TimestampMs: t / 1000}
		t0 := time.Now()
		switch {
		case len(batch.Rows) > 0:
			p, err = r.q.RunBatch(&batch, meta)
		case sc.NoDataMicroBatches && r.q.NeedsNoDataBatch():
			p, err = r.q.RunNoDataBatch(meta)
		case !r.hasLook && r.nextFault >= len(faults):
			// The stream is over and the query idle: the run is done.
			r.sum.WallSeconds += engineTime.Seconds()
			r.env.progress(float64(t-lastReported) / 1e6)
			return r.finish()
		default:
			// Idle trigger: no batch. Skip ahead to the next arrival or
			// fault; nothing happens on the triggers in between.
			if r.hasLook {
				next := r.look.Arrival
				if r.nextFault < len(faults) {
					next = min(next, start+faults[r.nextFault].At.Micros())
				}
				if skip := (next - t) / trigger; skip > 1 {
					r.t += (skip - 1) * trigger
				}
			}
			continue
		}
		engineTime += time.Since(t0)
		if err != nil {
			return nil, err
		}
		if err := r.account(p, &batch, t, sinkRNG.fails(t, sc.Sink.FailureProbability)); err != nil {
			return nil, err
		}
		if t-lastReported >= 60e6 {
			r.env.progress(float64(t-lastReported) / 1e6)
			lastReported = t
		}
		due := time.Since(lastSnapshot) >= r.env.snapshotEvery
		if r.env.snapshotAt != nil {
			due = r.env.snapshotAt(r.q.State().NextBatchID)
		}
		if r.env.resumable && due {
			r.sum.WallSeconds += engineTime.Seconds()
			engineTime = 0
			r.t += trigger // the snapshot resumes at the next trigger
			err := r.snapshot()
			r.t -= trigger
			if err != nil {
				return nil, err
			}
			lastSnapshot = time.Now()
		}
	}
}

// account records one executed batch: ground truth, sink, state size,
// watermark lag, the timeseries row and the progress line.
func (r *jobRun) account(p *sim.Progress, batch *generators.Batch, t int64, sinkFailed bool) error {
	sum := &r.sum
	if p.NumInputRows > 0 {
		r.acct.Observe(batch.Rows, r.q.Outcomes())
	}
	if p.NoData {
		sum.NoDataBatches++
	}
	sum.Batches++
	sum.SinkWrites += int64(p.NumOutputRows)
	if sinkFailed && r.env.sc.Sink.Kind == scenario.SinkAppend {
		// A failed batch is retried from the checkpoint and, the engines
		// being deterministic, recomputes the same rows: an append sink
		// writes them again, an idempotent sink (keyed by batch id) skips
		// the batch it already has.
		sum.SinkDuplicates += int64(p.NumOutputRows)
		sum.SinkWrites += int64(p.NumOutputRows)
	}
	var stateRows, stateBytes int64
	for k, op := range r.q.Operators() {
		n := int64(op.Len())
		stateRows += n
		stateBytes += n * r.entryBytes[k]
	}
	sum.PeakStateRows = max(sum.PeakStateRows, stateRows)
	sum.PeakStateBytes = max(sum.PeakStateBytes, stateBytes)
	if p.HasWatermark && p.Watermark > 0 {
		r.maxLag = math.Max(r.maxLag, float64(t/1000-p.Watermark)/1000)
	}
	rec := metrics.BatchRecord{
		Query: r.env.Name, Delay: r.env.Delay, BatchID: p.BatchID,
		ProcessingTime: t / 1000, Watermark: p.Watermark, HasWatermark: p.HasWatermark, NoData: p.NoData,
		InputRows: int64(p.NumInputRows), EmittedRows: int64(p.NumOutputRows),
		StateRows: stateRows, StateBytes: stateBytes,
		MissedDuplicates: r.acct.MissedDuplicates, FalseDrops: r.acct.FalseDrops,
	}
	for _, o := range p.Operators {
		rec.DroppedByWatermark += o.NumRowsDroppedByWatermark
		rec.DroppedDuplicates += o.NumDroppedDuplicateRows
	}
	bl := replay.NewBatchLine(p, 0, nil)
	line, err := json.Marshal(progressLine{
		BatchID: p.BatchID, Timestamp: metrics.FormatMillis(t / 1000), NoData: p.NoData,
		NumInputRows: p.NumInputRows, EventTime: bl.EventTime, StateOperators: bl.StateOperators,
		Sink: replay.SinkProgress{NumOutputRows: p.NumOutputRows},
	})
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if r.parts != nil {
		return r.parts.add(&rec, line)
	}
	r.records = append(r.records, rec)
	r.progress = append(r.progress, line...)
	return nil
}

// finish fills the summary's totals once the stream is over.
func (r *jobRun) finish() (*jobResult, error) {
	a, sum := &r.acct, &r.sum
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
	for k, op := range r.q.Operators() {
		n := int64(op.Len())
		sum.FinalStateRows += n
		sum.FinalStateBytes += n * r.entryBytes[k]
	}
	if !math.IsInf(r.maxLag, -1) {
		lag := r.maxLag
		sum.MaxWatermarkLagSeconds = &lag
	}
	if sum.WallSeconds > 0 {
		sum.EventsPerSecond = float64(sum.InputRows) / sum.WallSeconds
	}
	res := &jobResult{summary: *sum, records: r.records, progress: r.progress}
	if r.parts != nil {
		var err error
		if res.records, res.progress, err = r.parts.finish(); err != nil {
			return nil, err
		}
		if err := saveDone(r.env.jobDir, sum); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// checkpointer owns a job's query: where its checkpoint lives and how a
// restart fault reopens it.
type checkpointer struct {
	env jobEnv
	job Job
	gen int // lose-checkpoint count: each loss starts a new folder
}

func (c *checkpointer) folder() string {
	if c.env.jobDir == "" {
		return ""
	}
	return filepath.Join(c.env.jobDir, fmt.Sprintf("query.%d", c.gen))
}

// open starts the query from the current checkpoint folder: from state
// when resuming a job snapshot, else from whatever the folder's logs hold
// (nothing for a new folder). Resuming a snapshot discards the log entries
// of the batches after it, which the killed run wrote and the resumed one
// redoes.
func (c *checkpointer) open(state sim.State) (*sim.Query, error) {
	dir := c.folder()
	if dir == "" {
		stores := func(op int, _ chain.Node) (engines.Store, error) { return c.env.openStore("", op, 0) }
		return sim.NewQuery(c.job.Plan, stores, sim.State{})
	}
	var cp *sim.Checkpoint
	var err error
	resume := state != (sim.State{})
	if _, statErr := os.Stat(filepath.Join(dir, "metadata")); statErr == nil {
		if cp, _, err = sim.OpenCheckpoint(dir); err != nil {
			return nil, err
		}
		if state == (sim.State{}) {
			rec, err := cp.Recover()
			if err != nil {
				return nil, err
			}
			state = rec.State
		}
	} else if cp, err = sim.CreateCheckpoint(dir, sim.CheckpointMeta{Query: c.job.Query, Store: c.env.storeName}); err != nil {
		return nil, err
	}
	stores := func(op int, _ chain.Node) (engines.Store, error) {
		return c.env.openStore(cp.StateDir(op), op, state.NextBatchID)
	}
	q, err := sim.NewQuery(c.job.Plan, stores, state)
	if err != nil {
		return nil, err
	}
	if resume {
		if err := cp.DiscardFrom(state.NextBatchID); err != nil {
			q.Close()
			return nil, err
		}
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
	} else if c.env.jobDir == "" {
		return nil, fmt.Errorf("a restart needs a checkpoint folder")
	}
	return c.open(sim.State{})
}

// partFiles append a resumable job's timeseries rows and progress lines
// to files in its folder, so they survive a kill.
type partFiles struct {
	dir        string
	ts, prog   *os.File
	tsW, progW *bufio.Writer
	tsLen      int64
	progLen    int64
	row        []string
}

const (
	tsPart   = "timeseries.part.csv"
	progPart = "progress.part.jsonl"
)

// openParts opens the part files, truncated to the lengths of the last
// snapshot when resuming (anything after it is redone).
func openParts(dir string, resumed bool, lens [2]int64) (*partFiles, error) {
	p := &partFiles{dir: dir}
	var err error
	open := func(name string, n int64) (*os.File, error) {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if !resumed {
			n = 0
		}
		if err := f.Truncate(n); err != nil {
			f.Close()
			return nil, err
		}
		if _, err := f.Seek(n, 0); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	if p.ts, err = open(tsPart, lens[0]); err != nil {
		return nil, err
	}
	if p.prog, err = open(progPart, lens[1]); err != nil {
		p.ts.Close()
		return nil, err
	}
	p.tsLen, p.progLen = lens[0], lens[1]
	if !resumed {
		p.tsLen, p.progLen = 0, 0
	}
	p.tsW, p.progW = bufio.NewWriter(p.ts), bufio.NewWriter(p.prog)
	return p, nil
}

func (p *partFiles) add(rec *metrics.BatchRecord, line []byte) error {
	p.row = rec.Record(p.row)
	n, err := writeCSVRow(p.tsW, p.row)
	if err != nil {
		return err
	}
	p.tsLen += int64(n)
	if _, err := p.progW.Write(line); err != nil {
		return err
	}
	p.progLen += int64(len(line))
	return nil
}

func (p *partFiles) flush() error {
	if err := p.tsW.Flush(); err != nil {
		return err
	}
	return p.progW.Flush()
}

// finish flushes the part files and reads back the whole job's rows.
func (p *partFiles) finish() ([]metrics.BatchRecord, []byte, error) {
	if err := p.flush(); err != nil {
		return nil, nil, err
	}
	return readParts(p.dir)
}

func (p *partFiles) close() {
	p.ts.Close()
	p.prog.Close()
}
