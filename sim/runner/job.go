package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runfolder"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
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
	// resumeStore opens a store at a job snapshot's version from exactly
	// the files the snapshot recorded (Pebble restores its checkpoint).
	resumeStore StoreOpener
	// stateFiles lists the files a store's state at a version is read
	// from (see backend).
	stateFiles func(dir string, version int64) ([]engines.StateFile, error)
	storeName  string
	// numbering, when not nil, reads the event numbers from keys of the
	// given columns (generators.KeyNumbering): set for jobs on the memory
	// backend over the scenario's generator, without a store hook, so that
	// a never-evicting dedup keeps its keys as bits (numberedStore).
	numbering func(cols []int) func(key []byte) (uint64, bool)
	// jobDir is the folder where the job keeps its query checkpoints and,
	// when resumable, its own state and part files; "" keeps no
	// checkpoint.
	jobDir string
	// partsDir holds the part files of a job that is not resumable.
	partsDir string
	// resumable makes the job save its whole state at batch boundaries so
	// that a killed run resumes where it was.
	resumable bool
	// snapshotEvery is the wall-clock interval between job snapshots.
	snapshotEvery time.Duration
	// snapshotAt, if set, decides instead when to snapshot (see
	// the SnapshotAt test hook).
	snapshotAt func(job string, nextBatchID int64) bool
	// afterBatch, if set, is called after each batch (see
	// the AfterBatch test hook).
	afterBatch func(job string, nextBatchID int64, done bool)
	// progress receives processed simulated seconds, for the bar.
	progress func(seconds float64)
	// badClock makes the job collect the bad-clock moments of the stream
	// for the chart markers (job 0 only: every job reads the same stream).
	badClock bool
	// notify, if set, receives the run's notices (see Options.Notify).
	notify func(msg string)
	// maxBatchRows is the most rows a batch on the modelled cluster may
	// hold while more are due (see the MaxBatchRows test hook).
	maxBatchRows int
	// pool runs the partitions of a partitioned query (nil: the job's
	// goroutine).
	pool *microbatch.Pool
	// keyShard, if set, makes the job a part of a run split by key: it
	// reads every row but decides and counts only its part's.
	keyShard *KeyShard
}

// jobResult is one job's output: its summary, the first bad-clock rows'
// arrivals and event times (job 0) and its part files.
type jobResult struct {
	summary              metrics.QuerySummary
	badClock, badClockAt []int64
	parts                [2]segment
	// spark is the job's spark.csv rows, with a spark: block.
	spark *segment
}

// jobRun is one job in progress: everything a snapshot must capture.
type jobRun struct {
	env job
	src Source
	ck  *checkpointer
	q   *microbatch.Query

	sum        metrics.QuerySummary
	acct       metrics.Accountant
	maxLag     float64
	entryBytes []int64
	ids        generators.IDKind
	// trafficLast is the last trigger of the traffic window (us since the
	// epoch): peaks and the watermark lag count the batches up to it.
	trafficLast int64
	// delayMs is the delay of the query's watermark, which a batch's
	// late-filter watermark is compared with (the bad-clock cause).
	delayMs int64

	t         int64 // the next trigger time (us)
	nextFault int
	look      generators.Row
	hasLook   bool
	// badClock and badClockAt hold the arrival and event times of the
	// first bad-clock rows (maxBadClockMarkers at most), when the job
	// collects them.
	badClock, badClockAt []int64

	// parts receive every batch's timeseries row and progress line.
	parts *partFiles
	// restored are the part marks of the job snapshot resumed from.
	restored [2]partMark
	// hashes caches the checksums of the files job snapshots record.
	hashes hashCache
	// spark is the job's Spark cluster model; nil without a spark: block.
	spark *sparkRun
	// owned, ownRows and ownOut are, in a run split by key, the numbers,
	// rows and outcomes of the batch's rows of the job's part.
	owned   []int32
	ownRows []generators.Row
	ownOut  []engines.Outcome
}

// job bundles the job and its environment for a run.
type job struct {
	jobEnv
	Job
}

// runJob runs one job over its own copy of the scenario's stream.
func runJob(ctx context.Context, env jobEnv, j Job) (*jobResult, error) {
	if j.Rows != nil {
		return runRowJob(ctx, env, j)
	}
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
		r.spark.close()
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
	r.ids = sc.Workload.IDs.Kind()
	for _, n := range r.env.Plan.Nodes {
		if n.IsDedup() {
			r.entryBytes = append(r.entryBytes, metrics.EntryBytes(n.KeyColumns, r.ids))
		}
	}
	s := &r.sum
	s.Name, s.Query, s.Delay, s.Store = r.env.Name, r.env.Query, r.env.Delay, r.env.storeName
	s.BytesPerEntry = r.entryBytes
	s.Warnings = []string{}
	for _, w := range r.env.Plan.Warnings {
		s.Warnings = append(s.Warnings, w.Message)
	}
	s.Flavour = flavour(r.env.Plan)
	for _, n := range r.env.Plan.Nodes {
		if n.Op.Kind == chain.TransformWithStateDedup {
			// A processing-time TTL, not a watermark delay: the report
			// names it as the other engines' horizons.
			s.Mechanism = "keeps the first row of a key in a transformWithState ValueState and forgets it a TTL of processing time after it was set"
			if n.Op.TimerMs > 0 {
				s.Mechanism = "keeps the first row of a key in a transformWithState ValueState and clears it by an event-time timer at its event time + the horizon, once the watermark reaches it"
				secs := float64(n.Op.TimerMs) / 1000
				s.Horizon = &metrics.Horizon{Name: "timer", Seconds: &secs}
			} else if n.Op.TTLMs > 0 {
				secs := float64(n.Op.TTLMs) / 1000
				s.Horizon = &metrics.Horizon{Name: "TTL", Seconds: &secs}
			} else {
				s.Mechanism = "transformWithState without a TTL: never forgets a key"
			}
		}
	}
	if h, ok := keyHorizon(r.env.Plan, sc.Trigger.Std().Seconds()); ok {
		s.KeyHorizonSeconds = &h
		s.Saturated = h >= sc.Duration.Std().Seconds()
	}
	r.trafficLast = sc.Start.UnixMicro() + sc.LastTrafficTrigger().Microseconds()
	for _, n := range r.env.Plan.Nodes {
		if n.Op.Kind == chain.WithWatermark {
			r.delayMs = n.DelayMs
			break
		}
	}
	r.maxLag = math.Inf(-1)
	r.ck = &checkpointer{env: r.env.jobEnv, job: r.env.Job, holdID: -1}
	r.spark = newSparkRun(r.env)
	r.t = sc.Start.UnixMicro() + sc.Trigger.Micros()

	// Nothing in the job's folder changes until the query is open: a
	// snapshot or a state file that cannot be read fails the resume with
	// the folder as it was.
	state := microbatch.State{}
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
		if r.hasLook {
			r.noteBadClock(&r.look)
		}
	}
	open := r.env.openStore
	if resumed {
		open = r.env.resumeStore
	}
	if r.q, err = r.ck.open(state, open); err != nil {
		if resumed {
			return fmt.Errorf("resume from %s: %w", r.env.jobDir, err)
		}
		return err
	}
	if !resumed {
		r.spark.opened(r.q, true)
	} else if err := r.spark.resumed(r.q); err != nil {
		r.q.Close()
		r.q = nil
		return fmt.Errorf("resume from %s: %w", r.env.jobDir, err)
	}
	tsPath, progPath := filepath.Join(r.env.partsDir, fmt.Sprintf("%d.%s", r.env.Index, runfolder.TimeseriesPart)), filepath.Join(r.env.partsDir, fmt.Sprintf("%d.%s", r.env.Index, runfolder.ProgressPart))
	if r.env.resumable {
		tsPath, progPath = filepath.Join(r.env.jobDir, runfolder.TimeseriesPart), filepath.Join(r.env.jobDir, runfolder.ProgressPart)
		if resumed {
			// Folders of checkpoints lost after the snapshot belong to
			// the killed run: the resumed one loses them again.
			err = discardQueryFolders(r.env.jobDir, r.ck.gen)
		}
	}
	if err == nil {
		// Resuming truncates the part files to the snapshot's lengths:
		// the batches after it are redone.
		r.parts, err = openParts(tsPath, progPath, r.env.resumable, r.restored)
	}
	if err == nil {
		err = r.spark.openPart(r.env)
	}
	if err != nil {
		r.q.Close()
		r.q = nil
		return err
	}
	return nil
}

// noteBadClock records the arrival of a bad-clock row the job read, for
// the chart markers: the first maxBadClockMarkers, which the stream yields
// in arrival order.
func (r *jobRun) noteBadClock(row *generators.Row) {
	if r.env.badClock && row.Truth.BadClock && len(r.badClock) < maxBadClockMarkers {
		r.badClock = append(r.badClock, row.Arrival)
		r.badClockAt = append(r.badClockAt, row.EventTime)
	}
}

// loop runs the job's triggers, one after the other, until its stream is
// over and its query idle: at each trigger the faults due fire, the rows
// that arrived form the batch, Spark's batch for the trigger runs (a data
// batch, a no-data batch, or none, and then the idle triggers ahead are
// skipped), and the batch is accounted for.
func (r *jobRun) loop(ctx context.Context) (*jobResult, error) {
	c := r.newClock()
	for ; ; r.t = r.nextTrigger(c) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := r.fireFaults(c); err != nil {
			return nil, err
		}
		if err := r.fillBatch(c); err != nil {
			return nil, err
		}
		p, err := r.runTrigger(c)
		switch {
		case err != nil:
			return nil, err
		case p == nil && !r.hasLook && c.nextFault(r) < 0:
			// The stream is over and the query idle: the run is done.
			return r.end(ctx, c)
		case p == nil:
			r.skipIdle(c)
			continue
		}
		if err := r.afterBatch(c, p); err != nil {
			return nil, err
		}
		if p.NoData && !r.hasLook && c.nextFault(r) < 0 && r.q.OnlyIdleBatchesLeft() {
			// A transformWithState query runs a batch at every trigger
			// for ever: the run ends once they can change nothing.
			return r.end(ctx, c)
		}
	}
}

// clock is the state of a job's loop over triggers.
type clock struct {
	start, trigger int64 // microseconds
	// faults are the scenario's, in time order, whatever order the
	// scenario lists them in.
	faults  []scenario.Fault
	sinkRNG sinkDraws
	batch   generators.Batch
	// engineTime is the engine's time since it was last added to the
	// summary; lastReported the trigger last reported to the progress
	// bar; lastSnapshot the wall-clock time of the last job snapshot,
	// snapshotGap the time until the next (see snapshotCost).
	engineTime   time.Duration
	lastReported int64
	lastSnapshot time.Time
	snapshotGap  time.Duration
}

// snapshotCost bounds the wall-clock time job snapshots take: the next
// one is due no sooner than snapshotCost times the last one's duration
// after it, nor sooner than the run's interval (Options.SnapshotEvery).
// A job snapshot's cost grows with the job's state (its ground-truth
// accounting above all) and, on a loaded machine, with the wait for a
// core, while the interval is wall-clock time: so without the bound a
// long run on a busy machine spent a large share of its CPU on job
// snapshots (BENCHMARKS.md, "Numbers behind the code's comments"), with
// it at most about 1/snapshotCost. A kill loses at most the gap's work.
const snapshotCost = 20

func (r *jobRun) newClock() *clock {
	sc := r.env.sc
	c := &clock{
		start: sc.Start.UnixMicro(), trigger: sc.Trigger.Micros(),
		// A bad-clock fault is a row of the stream, not a restart.
		faults: slices.SortedStableFunc(slices.Values(slices.DeleteFunc(slices.Clone(sc.Faults), func(f scenario.Fault) bool { return !f.IsRestart() })),
			func(a, b scenario.Fault) int { return cmp.Compare(a.At, b.At) }),
		sinkRNG: newSinkDraws(sc.Seed), batch: generators.Batch{IDs: r.ids}, lastSnapshot: time.Now(),
		snapshotGap: r.env.snapshotEvery,
	}
	c.lastReported = r.t - c.trigger
	return c
}

// nextFault returns the offset of the next fault to fire, in microseconds
// since the epoch, or -1 when none is left.
func (c *clock) nextFault(r *jobRun) int64 {
	if r.nextFault >= len(c.faults) {
		return -1
	}
	return c.start + c.faults[r.nextFault].At.Micros()
}

// fireFaults restarts the query for every fault due at this trigger:
// faults fire at the first trigger at or after their offset, before that
// trigger's batch.
func (r *jobRun) fireFaults(c *clock) error {
	for at := c.nextFault(r); at >= 0 && at <= r.t; at = c.nextFault(r) {
		f := c.faults[r.nextFault]
		r.nextFault++
		r.sum.Restarts++
		var err error
		if r.q, err = r.ck.restart(r.q, f.Kind == scenario.LoseCheckpoint); err != nil {
			return fmt.Errorf("fault %s at %s: %w", f.Kind, f.At, err)
		}
		r.spark.opened(r.q, f.Kind == scenario.LoseCheckpoint)
	}
	return nil
}

// fillBatch moves the rows that arrived by this trigger into the batch,
// at most spark.maxRowsPerBatch of them (the oldest) with a spark: block.
func (r *jobRun) fillBatch(c *clock) error {
	c.batch.Rows = c.batch.Rows[:0]
	limit := r.spark.maxRows()
	for r.hasLook && r.look.Arrival <= r.t && (limit == 0 || len(c.batch.Rows) < limit) {
		c.batch.Rows = append(c.batch.Rows, r.look)
		if r.hasLook = r.src.Next(&r.look); r.hasLook {
			r.noteBadClock(&r.look)
		}
		if err := r.spark.batchLimit(len(c.batch.Rows), r.hasLook && r.look.Arrival <= r.t, r.t); err != nil {
			return err
		}
	}
	return nil
}

// runTrigger runs this trigger's batch, if Spark runs one: a data batch
// when rows arrived, else a no-data batch when they are enabled and the
// query needs one. It returns nil when no batch runs. The engine's time
// counts the batches only.
func (r *jobRun) runTrigger(c *clock) (*microbatch.Progress, error) {
	meta := microbatch.BatchMeta{TimestampMs: r.t / 1000}
	t0 := time.Now()
	var p *microbatch.Progress
	var err error
	switch {
	case len(c.batch.Rows) > 0 && r.env.keyShard != nil:
		r.owned = r.env.keyShard.owned(&c.batch, r.owned[:0])
		p, err = r.q.RunBatchOwned(&c.batch, r.owned, meta)
	case len(c.batch.Rows) > 0:
		p, err = r.q.RunBatch(&c.batch, meta)
	case r.env.sc.NoDataMicroBatches && r.q.NeedsNoDataBatch():
		p, err = r.q.RunNoDataBatch(meta)
	default:
		return nil, nil
	}
	c.engineTime += time.Since(t0)
	return p, err
}

// skipIdle skips the idle triggers ahead: no batch runs until the next
// arrival or fault, so the triggers in between change nothing.
func (r *jobRun) skipIdle(c *clock) {
	if !r.hasLook {
		return
	}
	next := r.look.Arrival
	if f := c.nextFault(r); f >= 0 {
		next = min(next, f)
	}
	if skip := (next - r.t) / c.trigger; skip > 1 {
		r.t += (skip - 1) * c.trigger
	}
}

// afterBatch accounts for the batch that ran at this trigger, reports
// progress, takes a job snapshot when one is due, and calls the test hook.
func (r *jobRun) afterBatch(c *clock, p *microbatch.Progress) error {
	t := r.t
	if err := r.account(p, &c.batch, t, c.sinkRNG.fails(t, r.env.sc.Sink.FailureProbability)); err != nil {
		return err
	}
	if t-c.lastReported >= 60e6 {
		r.env.progress(float64(t-c.lastReported) / 1e6)
		c.lastReported = t
	}
	due := time.Since(c.lastSnapshot) >= c.snapshotGap
	if r.env.snapshotAt != nil {
		due = r.env.snapshotAt(r.env.FileName, r.q.State().NextBatchID)
	}
	if r.env.resumable && due {
		r.sum.WallSeconds += c.engineTime.Seconds()
		c.engineTime = 0
		now := r.t
		r.t = r.nextTrigger(c) // the snapshot resumes at the next trigger
		start := time.Now()
		err := r.snapshot()
		r.t = now
		if err != nil {
			return err
		}
		// The snapshot is durable: retention may now drop the entries
		// the previous one resumed from, never those of this one.
		r.ck.hold(r.ck.gen, r.q.State().NextBatchID-1)
		c.lastSnapshot = time.Now()
		c.snapshotGap = max(r.env.snapshotEvery, snapshotCost*c.lastSnapshot.Sub(start))
	}
	if r.env.afterBatch != nil {
		r.env.afterBatch(r.env.FileName, r.q.State().NextBatchID, false)
	}
	return nil
}

// end finishes the job once its stream is over and its query idle.
func (r *jobRun) end(ctx context.Context, c *clock) (*jobResult, error) {
	r.sum.WallSeconds += c.engineTime.Seconds()
	r.env.progress(float64(r.t-c.lastReported) / 1e6)
	if r.env.afterBatch != nil {
		r.env.afterBatch(r.env.FileName, r.q.State().NextBatchID, true)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.finish()
}

// account records one executed batch: ground truth, sink, state size,
// watermark lag, the timeseries row and the progress line.
func (r *jobRun) account(p *microbatch.Progress, batch *generators.Batch, t int64, sinkFailed bool) error {
	sum := &r.sum
	if p.NumInputRows > 0 {
		// Only a row stamped in the future puts the late filter's
		// watermark ahead of processing time minus the delay.
		ahead := p.HasWatermark && engines.WatermarkSet(p.LateWatermark) && p.LateWatermark > t/1000-r.delayMs
		rows, outcomes := batch.Rows, r.q.Outcomes()
		if r.env.keyShard != nil {
			// Only the part's rows were decided.
			r.ownRows, r.ownOut = r.ownRows[:0], r.ownOut[:0]
			next := 0
			for i := range rows {
				if next < len(r.owned) && int(r.owned[next]) == i {
					r.ownRows, r.ownOut = append(r.ownRows, rows[i]), append(r.ownOut, outcomes[i])
					next++
				} else {
					r.acct.Skip(rows[i].Truth.Event)
				}
			}
			rows, outcomes = r.ownRows, r.ownOut
		}
		r.acct.ObserveBatch(rows, outcomes, ahead)
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
	// Peaks and the lag are the traffic window's: in the drain the
	// watermark stands still while the last copies arrive, which a real
	// stream never does.
	if t <= r.trafficLast {
		sum.PeakStateRows = max(sum.PeakStateRows, stateRows)
		sum.PeakStateBytes = max(sum.PeakStateBytes, stateBytes)
		if p.HasWatermark && engines.WatermarkSet(p.Watermark) {
			r.maxLag = math.Max(r.maxLag, float64(t/1000-p.Watermark)/1000)
		}
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
	line, err := json.Marshal(p.ProgressLine(t / 1000))
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if err := r.parts.add(&rec, line); err != nil {
		return err
	}
	if r.spark != nil {
		return r.spark.batch(r, p, batch, t)
	}
	return nil
}

// finish fills the summary's totals once the stream is over.
func (r *jobRun) finish() (*jobResult, error) {
	// A log that could not be read to its end fails the job before its
	// summary is kept (a resumable job's done.json included).
	if err := generators.SourceErr(r.src); err != nil {
		return nil, err
	}
	sum := &r.sum
	setTotals(sum, &r.acct)
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
	if err := r.parts.flush(); err != nil {
		return nil, err
	}
	sparkSeg, sparkMark, err := r.spark.finish(sum)
	if err != nil {
		return nil, err
	}
	res := &jobResult{summary: *sum, badClock: r.badClock, badClockAt: r.badClockAt, parts: r.parts.segments(), spark: sparkSeg}
	if r.env.resumable {
		marks, err := r.parts.marks()
		if err != nil {
			return nil, err
		}
		if err := saveDone(r.env.jobDir, &jobDone{Summary: *sum, BadClock: r.badClock, BadClockAt: r.badClockAt, Parts: marks, SparkPart: sparkMark}); err != nil {
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
	// noticed is set once the job said its checkpoint keeps another
	// partition count than the scenario's (keepPartitions).
	noticed bool
	// cp is the open query checkpoint (nil without a folder). The newest
	// durable job snapshot resumes from the log entries of batch holdID
	// of folder holdGen (holdID -1: none): retention keeps them.
	cp              *microbatch.Checkpoint
	holdGen, holdID int
}

// hold makes the query checkpoint of folder gen keep the log entries of
// batch id and later, which the newest job snapshot resumes from.
func (c *checkpointer) hold(gen int, id int64) {
	c.holdGen, c.holdID = gen, int(id)
	if c.cp != nil && c.gen == gen {
		c.cp.Retain(id)
	}
}

func (c *checkpointer) folder() string {
	if c.env.jobDir == "" {
		return ""
	}
	return filepath.Join(c.env.jobDir, fmt.Sprintf("query.%d", c.gen))
}

// open starts the query from the current checkpoint folder: from state
// when resuming a job snapshot, else from whatever the folder's logs hold
// (nothing for a new folder); openStore opens its stores. Resuming a
// snapshot discards the log entries of the batches after it, which the
// killed run wrote and the resumed one redoes.
func (c *checkpointer) open(state microbatch.State, openStore StoreOpener) (*microbatch.Query, error) {
	dir := c.folder()
	if dir == "" {
		return c.newQuery(nil, c.partitions(), openStore, microbatch.State{})
	}
	var cp *microbatch.Checkpoint
	var err error
	resume := state != (microbatch.State{})
	partitions := c.partitions()
	if _, statErr := os.Stat(filepath.Join(dir, "metadata")); statErr == nil {
		var meta microbatch.CheckpointMeta
		if cp, meta, err = microbatch.OpenCheckpoint(dir); err != nil {
			return nil, err
		}
		partitions = c.keepPartitions(meta)
		if state == (microbatch.State{}) {
			rec, err := cp.Recover()
			if err != nil {
				return nil, err
			}
			state = rec.State
		}
	} else if cp, err = microbatch.CreateCheckpoint(dir, microbatch.CheckpointMeta{Query: c.job.Query, Store: c.env.storeName, Partitions: partitions}); err != nil {
		return nil, err
	}
	q, err := c.newQuery(cp, partitions, openStore, state)
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
	c.cp = cp
	if c.holdGen == c.gen {
		cp.Retain(int64(c.holdID))
	}
	return q, nil
}

// restart closes q and starts it again: from its own checkpoint, or from a
// new, empty one when the checkpoint is lost.
func (c *checkpointer) restart(q *microbatch.Query, lose bool) (*microbatch.Query, error) {
	c.cp = nil
	if err := q.Close(); err != nil {
		return nil, err
	}
	if lose {
		c.gen++
	} else if c.env.jobDir == "" {
		return nil, fmt.Errorf("a restart needs a checkpoint folder")
	}
	return c.open(microbatch.State{}, c.env.openStore)
}

// setTotals fills the summary's ground-truth totals and rates from the
// job's accountant once the stream is over.
func setTotals(sum *metrics.QuerySummary, a *metrics.Accountant) {
	sum.InputRows = a.InputRows
	sum.LogicalEvents = a.LogicalEvents
	sum.TrueDuplicates = a.TrueDuplicates
	sum.EmittedRows = a.EmittedRows
	sum.MissedDuplicates = a.MissedDuplicates
	sum.FalseDrops = a.FalseDrops
	sum.FalseDropsByCause = metrics.FalseDropCauses{Late: a.FalseDropsLate, BadClock: a.FalseDropsBadClock, Collision: a.FalseDropsCollide}
	sum.DroppedByWatermark = a.DroppedByWatermark
	sum.DroppedDuplicates = a.DroppedDuplicates
	if a.TrueDuplicates > 0 {
		sum.MissedDuplicateRate = float64(a.MissedDuplicates) / float64(a.TrueDuplicates)
	}
	if a.LogicalEvents > 0 {
		sum.FalseDropRate = float64(a.FalseDrops) / float64(a.LogicalEvents)
	}
}
