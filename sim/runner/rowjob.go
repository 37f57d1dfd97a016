package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/registry"
	"github.com/dedupsim/dedupsim/sim/runfolder"
)

// A row job runs a query of an engine other than Spark (Flink, Kafka
// Streams, Beam) whose operator takes the generated rows one at a time
// (registry.ScenarioOperator): each row at its arrival, the operator's
// processing-time clock (Flink's TTL clock, Beam's processing time) set
// to that arrival in milliseconds, with its event time in milliseconds
// (Kafka Streams' record timestamp, Beam's element timestamp). Nothing
// batches the rows; the scenario's trigger only
// paces the measurements: at each trigger at which rows arrived, the rows
// since the last one are accounted for against ground truth, the
// operator's state is sampled at the trigger's time, and one timeseries
// row and one progress line are written, as a Spark job writes per
// micro-batch. A row is Emitted when the operator emitted a row carrying
// it (keep-first's +I, keep-last's +I or +U): the sink appends every
// emitted row, so a +U for an event already emitted is a missed
// duplicate (docs/flink.md, "In a scenario").

// stateBytesOperator is a ScenarioOperator that models its state's bytes
// (Flink's heap backend: sim/flink's StateBytes), as of its last State
// call: the state held and one entry.
type stateBytesOperator interface {
	StateBytes() (total, perEntry int64)
}

// deferringOperator is a ScenarioOperator that decides some rows after
// they arrive (Flink's 2.1+ rowtime keep-first: a row waits until the
// watermark passes its event time; a Flink mini-batch function: a row
// waits for its bundle's flush) and has a processing-time timer (the
// watermark assigner's, or the mini-batch assigner's). Such a row is accounted for when its verdict
// comes, at the sample that follows; the rows the operator emits are
// counted by their Emitted verdicts.
type deferringOperator interface {
	// Open starts the operator's timers at procMs, before the first row.
	Open(procMs int64)
	// Deferred reports whether the row Process last fed waits.
	Deferred() bool
	// LateAhead reports whether the row Process last fed was dropped
	// late behind a watermark ahead of its arrival minus the delay.
	LateAhead() bool
	// Verdicts appends the verdicts reached since the last call.
	Verdicts(dst []registry.Verdict) []registry.Verdict
	// End ends the input at procMs: every waiting row gets its verdict.
	End(procMs int64)
}

// observingOperator is a ScenarioOperator whose clocks a row it does not
// process can move (Kafka Streams' stream time, Beam's watermark): a job
// of a run split by key feeds it the rows of another part's keys.
type observingOperator interface {
	Observe(key, value []byte, procMs, eventMs int64)
}

// rowJob is one row job in progress.
type rowJob struct {
	env jobEnv
	job Job
	op  registry.ScenarioOperator
	// function names the operator's runtime function in progress lines.
	function string
	sum      metrics.QuerySummary
	acct     metrics.Accountant
	// trafficLast is the last trigger of the traffic window (us): peaks
	// count the samples up to it.
	trafficLast int64
	parts       *partFiles
	// sampledAt is the processing time of the last sample (ms), at
	// which the final state is read.
	sampledAt int64
	// peakPhysical is the largest physical state over the samples of the
	// traffic window; physical the last sample's.
	peakPhysical, physical int64
	// counters are the engine's own counters at the last sample.
	counters []registry.Counter
	// deferring is set for a deferringOperator: waiting holds its rows
	// without a verdict by their number, fed counts the rows fed, done,
	// doneOut and doneAhead are the rows the next sample accounts for
	// (with their outcome and the watermarkAhead of a late drop), and
	// strays counts verdicts on rows that did not wait (an operator bug).
	deferring deferringOperator
	waiting   map[int]generators.Row
	fed       int
	verdicts  []registry.Verdict
	done      []generators.Row
	doneOut   []engines.Outcome
	doneAhead []bool
	doneEmit  int
	strays    int
}

// runRowJob runs j, a row job, over its own copy of the scenario's stream.
func runRowJob(ctx context.Context, env jobEnv, j Job) (*jobResult, error) {
	sc := env.sc
	if env.resumable {
		return nil, fmt.Errorf("a %s query cannot yet run in a resumable run (a checkpoint folder): run it without one", j.Engine)
	}
	op, err := j.Rows.NewOperator()
	if err != nil {
		return nil, err
	}
	keyCols, err := columnIndexes(j.Rows.Keys)
	if err != nil {
		return nil, err
	}
	allCols := make([]int, generators.NumColumns)
	for i := range allCols {
		allCols[i] = i
	}
	src, err := env.newSource()
	if err != nil {
		return nil, err
	}
	r := &rowJob{env: env, job: j, op: op, function: op.Function(), trafficLast: sc.Start.UnixMicro() + sc.LastTrafficTrigger().Microseconds()}
	obs, _ := op.(observingOperator)
	if d, ok := op.(deferringOperator); ok {
		r.deferring, r.waiting = d, map[int]generators.Row{}
		d.Open(sc.Start.UnixMilli())
	}
	s := &r.sum
	// The state is the engine's model (Flink's heap state backend, Kafka
	// Streams' window store, the DirectRunner's state), not the job's
	// store, which stays unused.
	s.Name, s.Query, s.Engine, s.Store = j.Name, j.Query, j.Engine, j.Rows.Store
	// A sweep job's delay is the horizon the sweep set.
	s.Delay = j.Delay
	s.Mechanism = j.Rows.Mechanism
	s.Horizon = &metrics.Horizon{Name: j.Rows.Horizon.Name, Key: registry.HorizonKey(j.Engine)}
	if v := j.Rows.Horizon.Value; v != nil {
		secs := v.Seconds()
		s.Horizon.Seconds = &secs
	}
	s.Warnings, s.BytesPerEntry = append([]string{}, j.Rows.Warnings...), []int64{0}
	s.Flavour = metrics.FlavourOther
	tsPath := filepath.Join(env.partsDir, fmt.Sprintf("%d.%s", j.Index, runfolder.TimeseriesPart))
	progPath := filepath.Join(env.partsDir, fmt.Sprintf("%d.%s", j.Index, runfolder.ProgressPart))
	if r.parts, err = openParts(tsPath, progPath, false, [2]partMark{}); err != nil {
		return nil, err
	}
	defer r.parts.close()

	var (
		look       generators.Row
		batch      = generators.Batch{IDs: sc.Workload.IDs.Kind()}
		outcomes   []engines.Outcome
		key, value []byte
		engineTime time.Duration
		badClock   []int64
		badClockAt []int64
	)
	note := func() {
		if env.badClock && look.Truth.BadClock && len(badClock) < maxBadClockMarkers {
			badClock, badClockAt = append(badClock, look.Arrival), append(badClockAt, look.EventTime)
		}
	}
	has := src.Next(&look)
	if has {
		note()
	}
	start, trig := sc.Start.UnixMicro(), sc.Trigger.Micros()
	lastReported := start
	for t := start + trig; has; t += trig {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if look.Arrival > t && trig > 0 {
			// Skip the idle triggers: no row arrives before the next one.
			t += (look.Arrival - t - 1) / trig * trig
			continue
		}
		if trig <= 0 {
			t = look.Arrival
		}
		batch.Rows, outcomes = batch.Rows[:0], outcomes[:0]
		emitted, arrived := 0, 0
		t0 := time.Now()
		for has && look.Arrival <= t {
			arrived++
			if env.keyShard != nil && !env.keyShard.owns(&look, batch.IDs) {
				// Another part's row: it counts as input and moves the
				// operator's clocks, nothing else.
				r.acct.Skip(look.Truth.Event)
				if obs != nil {
					// The key is encoded from a scratch row past the batch's end.
					batch.Rows = append(batch.Rows, look)
					i := len(batch.Rows) - 1
					key = batch.AppendKey(key[:0], i, keyCols)
					obs.Observe(key, nil, look.Arrival/1000, look.EventTime/1000)
					batch.Rows = batch.Rows[:i]
				}
				if has = src.Next(&look); has {
					note()
				}
				continue
			}
			batch.Rows = append(batch.Rows, look)
			i := len(batch.Rows) - 1
			key = batch.AppendKey(key[:0], i, keyCols)
			value = batch.AppendKey(value[:0], i, allCols)
			o, n := op.Process(key, value, look.Arrival/1000, look.EventTime/1000)
			outcomes = append(outcomes, o)
			emitted += n
			if r.deferring != nil {
				r.settle(&look, o)
			}
			if has = src.Next(&look); has {
				note()
			}
		}
		if !has && r.deferring != nil {
			// The bounded input ends: the maximum watermark.
			r.deferring.End(t / 1000)
			r.settle(nil, 0)
		}
		engineTime += time.Since(t0)
		if err := r.sample(&batch, arrived, outcomes, emitted, t); err != nil {
			return nil, err
		}
		if t-lastReported >= 60e6 {
			env.progress(float64(t-lastReported) / 1e6)
			lastReported = t
		}
	}
	env.progress(max(0, sc.Duration.Std().Seconds()-float64(lastReported-start)/1e6))
	if len(r.waiting) > 0 || r.strays > 0 {
		return nil, fmt.Errorf("query %s: %d rows still wait for a verdict at the end of input, %d verdicts came for rows that did not wait", j.Name, len(r.waiting), r.strays)
	}
	setTotals(s, &r.acct)
	s.FinalStateRows, _ = op.State(r.sampledAt)
	if sb, ok := op.(stateBytesOperator); ok {
		s.FinalStateBytes, s.BytesPerEntry[0] = sb.StateBytes()
	}
	s.EngineCounters = map[string]int64{"peakPhysicalStateRows": r.peakPhysical, "finalPhysicalStateRows": r.physical}
	s.EngineCounterInfo = registry.CounterInfoFor(j.Engine)
	for _, c := range r.counters {
		s.EngineCounters[c.Name] = c.Value
	}
	s.WallSeconds = engineTime.Seconds()
	if s.WallSeconds > 0 {
		s.EventsPerSecond = float64(s.InputRows) / s.WallSeconds
	}
	if err := r.parts.flush(); err != nil {
		return nil, err
	}
	return &jobResult{summary: *s, badClock: badClock, badClockAt: badClockAt, parts: r.parts.segments()}, nil
}

// sample accounts for the rows that arrived by trigger t (us), arrived
// of them in all (batch holds those of the job's part, all of them
// unless the run is split by key), and writes the trigger's timeseries
// row and progress line.
func (r *rowJob) sample(batch *generators.Batch, arrived int, outcomes []engines.Outcome, emitted int, t int64) error {
	sum := &r.sum
	logical, physical := r.op.State(t / 1000)
	rows := batch.Rows
	if r.deferring != nil {
		// The rows with a verdict, whenever they arrived.
		r.settle(nil, 0)
		rows, outcomes = r.done, r.doneOut
		emitted += r.doneEmit
		// Runs of rows dropped behind a watermark ahead of the clock, or
		// not, in order: a lost event's last copy decides its cause.
		for i := 0; i < len(rows); {
			j := i + 1
			for j < len(rows) && r.doneAhead[j] == r.doneAhead[i] {
				j++
			}
			r.acct.ObserveBatch(rows[i:j], outcomes[i:j], r.doneAhead[i])
			i = j
		}
		r.done, r.doneOut, r.doneAhead, r.doneEmit = r.done[:0], r.doneOut[:0], r.doneAhead[:0], 0
	} else {
		r.acct.ObserveBatch(rows, outcomes, false)
	}
	r.sampledAt, r.physical, r.counters = t/1000, physical, r.op.Counters()
	dropped, late := int64(0), int64(0)
	for _, o := range outcomes {
		switch o {
		case engines.DroppedDuplicate:
			dropped++
		case engines.DroppedLate:
			late++
		}
	}
	sum.Batches++
	sum.SinkWrites += int64(emitted)
	var stateBytes int64
	if sb, ok := r.op.(stateBytesOperator); ok {
		stateBytes, _ = sb.StateBytes()
	}
	if t <= r.trafficLast {
		sum.PeakStateRows = max(sum.PeakStateRows, logical)
		sum.PeakStateBytes = max(sum.PeakStateBytes, stateBytes)
		r.peakPhysical = max(r.peakPhysical, physical)
	}
	rec := metrics.BatchRecord{
		Query: r.job.Name, Delay: r.job.Delay, BatchID: sum.Batches - 1, ProcessingTime: t / 1000,
		InputRows: int64(arrived), EmittedRows: int64(emitted), DroppedByWatermark: late, DroppedDuplicates: dropped,
		StateRows: logical, StateBytes: stateBytes, MissedDuplicates: r.acct.MissedDuplicates, FalseDrops: r.acct.FalseDrops,
	}
	custom := map[string]int64{"numDroppedDuplicateRows": dropped, "numPhysicalEntries": physical}
	for _, c := range r.counters {
		custom[c.Name] = c.Value
	}
	line, err := json.Marshal(metrics.ProgressLine{
		BatchID: rec.BatchID, Timestamp: metrics.FormatMillis(t / 1000), NumInputRows: arrived,
		// numRowsTotal is the live (logical) entries; the physical ones,
		// expired entries no read removed yet, are a custom metric, and
		// so are the engine's own counters.
		StateOperators: []metrics.StateOperator{{
			OperatorName: r.function, NumRowsTotal: logical,
			CustomMetrics: custom,
		}},
		Sink: metrics.SinkProgress{NumOutputRows: emitted},
	})
	if err != nil {
		return err
	}
	return r.parts.add(&rec, append(line, '\n'))
}

// settle follows a deferringOperator after it was fed row with outcome o
// (row nil: after a call that fed none): a row without a verdict waits;
// every verdict reached moves its row to the rows the next sample
// accounts for.
func (r *rowJob) settle(row *generators.Row, o engines.Outcome) {
	d := r.deferring
	if row != nil {
		r.fed++
		if d.Deferred() {
			r.waiting[r.fed] = *row
		} else {
			r.done, r.doneOut = append(r.done, *row), append(r.doneOut, o)
			r.doneAhead = append(r.doneAhead, o == engines.DroppedLate && d.LateAhead())
		}
	}
	r.verdicts = d.Verdicts(r.verdicts[:0])
	for _, v := range r.verdicts {
		w, ok := r.waiting[v.Row]
		if !ok {
			r.strays++
			continue
		}
		delete(r.waiting, v.Row)
		r.done, r.doneOut, r.doneAhead = append(r.done, w), append(r.doneOut, v.Outcome), append(r.doneAhead, false)
		if v.Outcome == engines.Emitted {
			r.doneEmit++
		}
	}
}

// columnIndexes returns the generated columns' indexes of names; a name
// that is not a generated column is an error listing them.
func columnIndexes(names []string) ([]int, error) {
	cols := generators.Columns()
	out := make([]int, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(cols, func(c generators.Column) bool { return c.Name == n })
		if i < 0 {
			var all []string
			for _, c := range cols {
				all = append(all, c.Name)
			}
			return nil, fmt.Errorf("PARTITION BY %s: not a column of the generated rows (%v)", n, all)
		}
		out = append(out, i)
	}
	return out, nil
}
