package sparkmodel

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
)

// Tracker follows one job's batches on the cluster of a spark: block: it
// times each batch (Costs, Scheduler), models each executor's state
// memory and disk, and gathers the summary. Partitions are placed on
// executors as Spark's scheduler keeps them in steady state, where each
// store's tasks return to the executor that holds it (state store
// locality): partition p on executor p mod executors. An executor runs at
// most coresPerExecutor tasks at once, and the stages of a chain's
// operators one after the other, so of its stores' in-batch memory it
// holds every store's retained part and the in-flight part (the HDFS
// store's new map, the RocksDB memtable) of at most coresPerExecutor of
// one operator's stores: the largest. Its memory does not grow with the
// run: per partition a few counters, and a histogram of durations.
type Tracker struct {
	cfg      Config
	costs    Costs
	hasCost  bool
	rocks    RocksDBConf
	shapes   []Shape
	entries  []RocksDBEntry
	sched    *Scheduler
	origin   int64 // the first trigger boundary's origin, µs
	trigger  int64 // µs
	winStart int64 // µs
	winEnd   int64 // µs
	// lastTraffic is the last batch start counted in the traffic window:
	// the first trigger boundary at or after winEnd (µs).
	lastTraffic int64
	// down is the downtime, [from, to) in µs, in time order.
	down [][2]int64

	st TrackerState

	// Scratch, per batch.
	tasks   []float64
	mem     []int64 // per executor
	disk    []int64
	perPart []int64
	// inFlight holds, per executor, one operator's stores' in-flight
	// bytes; stage each executor's largest sum of coresPerExecutor of
	// them over the operators.
	inFlight [][]int64
	stage    []int64
}

// TrackerState is what a job snapshot saves of a Tracker.
type TrackerState struct {
	// Partitions is the query's partition count (its checkpoint's).
	Partitions int `json:"partitions"`
	// HDFS holds each dedup operator's stores, by partition, for the
	// hdfs provider.
	HDFS [][]HDFSStore `json:"hdfs,omitempty"`
	// Durations holds the durations, in microseconds, of the batches
	// that start in the traffic window: from its start to the first
	// trigger boundary at or after its end (the batch that takes the last
	// originals), as metrics.Windows counts it.
	Durations Histogram `json:"durations"`
	// MaxLag is the largest processing lag (µs); HasLag is false until a
	// data batch ran.
	MaxLag int64 `json:"maxLag"`
	HasLag bool  `json:"hasLag"`
	// LastEnd is the end of the last batch (µs) and LastOverran whether
	// it ended after its next trigger boundary.
	LastEnd     int64 `json:"lastEnd"`
	LastOverran bool  `json:"lastOverran"`
	// RunStart is the start of the current run of overrunning batches
	// among those that start in the traffic window; Falling is whether
	// the last such batch overran.
	RunStart int64 `json:"runStart"`
	Falling  bool  `json:"falling"`
	// Peaks over the run.
	PeakRowsMax  int64   `json:"peakRowsMax"`
	PeakRowsMean float64 `json:"peakRowsMean"`
	PeakMemory   int64   `json:"peakMemory"`
	PeakDisk     int64   `json:"peakDisk"`
}

// NewTracker returns a tracker for a job of the spark: block cfg whose
// dedup operators have the given entry shapes (chain order). The trigger
// lattice is origin + k × trigger (µs), the first batch at origin +
// trigger; the traffic window is [winStart, winEnd].
func NewTracker(cfg Config, shapes []Shape, origin, trigger, winStart, winEnd int64) *Tracker {
	t := &Tracker{
		cfg: cfg, shapes: shapes, rocks: DefaultRocksDBConf(),
		sched: NewScheduler(cfg.Slots()), origin: origin, trigger: trigger, winStart: winStart, winEnd: winEnd,
		mem: make([]int64, cfg.Executors), disk: make([]int64, cfg.Executors),
	}
	t.costs, t.hasCost = cfg.Costs()
	t.lastTraffic = winEnd
	if trigger > 0 && winEnd > origin {
		t.lastTraffic = origin + (winEnd-origin+trigger-1)/trigger*trigger
	}
	t.down = cfg.downSpans(winStart)
	for _, s := range shapes {
		t.entries = append(t.entries, RocksDBEntryOf(s, t.rocks))
	}
	return t
}

// Open sets the partition count of the query the tracker follows, when
// it opens a checkpoint: a new one (fresh: the stores' history is
// forgotten) or its own after a restart (the provider's cached versions
// are gone).
func (t *Tracker) Open(partitions int, fresh bool) {
	if fresh || partitions != t.st.Partitions || t.st.HDFS == nil {
		t.st.Partitions = partitions
		t.st.HDFS = nil
		if t.cfg.Provider == HDFS {
			t.st.HDFS = make([][]HDFSStore, len(t.shapes))
			for k := range t.st.HDFS {
				t.st.HDFS[k] = make([]HDFSStore, partitions)
			}
		}
		return
	}
	for _, stores := range t.st.HDFS {
		for p := range stores {
			stores[p].Restart()
		}
	}
}

// Partitions returns the partition count the tracker follows.
func (t *Tracker) Partitions() int { return t.st.Partitions }

// State returns the tracker's state, for a job snapshot.
func (t *Tracker) State() ([]byte, error) { return json.Marshal(&t.st) }

// Restore sets the tracker's state from a job snapshot's.
func (t *Tracker) Restore(data []byte) error {
	var st TrackerState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("spark model state: %w", err)
	}
	if st.Partitions < 0 || st.Partitions > MaxPartitions || (st.HDFS != nil && len(st.HDFS) != len(t.shapes)) {
		return fmt.Errorf("spark model state: %d partitions for %d operators does not fit the query", st.Partitions, len(st.HDFS))
	}
	for _, s := range st.HDFS {
		if len(s) != st.Partitions {
			return fmt.Errorf("spark model state: %d stores for %d partitions", len(s), st.Partitions)
		}
	}
	t.st = st
	return nil
}

// Batch is one executed batch as the tracker reads it.
type Batch struct {
	// Start is the batch's trigger time (µs); Version its batch id, the
	// version of the stores it reads.
	Start, Version int64
	// Oldest is the arrival (µs) of the batch's oldest row, when HasRows.
	Oldest  int64
	HasRows bool
	// Stats are each dedup operator's per-partition stats (chain order).
	Stats []*microbatch.PartitionStats
}

// BatchResult is what the model says of a batch.
type BatchResult struct {
	// Duration is the batch's modelled duration (µs), 0 without a cost
	// block; End is Start + Duration.
	Duration, End int64
	// Overran is set when the batch ends after its next trigger boundary,
	// so that the next batch starts at once, at End.
	Overran bool
	// MaxPartitionRows and MeanPartitionRows are the state rows per
	// partition after the batch.
	MaxPartitionRows  int64
	MeanPartitionRows float64
	// Lag is End minus the oldest row's arrival (µs), when HasLag.
	Lag    int64
	HasLag bool
	// Memory and Disk are the largest executor's modelled bytes during
	// the batch.
	Memory, Disk int64
}

// NextTrigger returns when the next trigger fires after a batch that ran
// from start to end (end = start for a trigger that ran none): at the
// next boundary of the trigger lattice after start, or at end when the
// batch overran it, as Spark's ProcessingTimeExecutor waits until the
// next multiple of the interval, and not at all when it is past. A
// trigger that would fire in a span of spark.downtime fires at its end
// instead (Downtime).
func (t *Tracker) NextTrigger(start, end int64) int64 {
	next := max(t.nextBoundary(start), end)
	if len(t.down) > 0 {
		next = afterDowntime(t.down, next)
	}
	return next
}

func (t *Tracker) nextBoundary(at int64) int64 {
	return t.origin + ((at-t.origin)/t.trigger+1)*t.trigger
}

// Batch models one executed batch and records it.
func (t *Tracker) Batch(b Batch) BatchResult {
	var r BatchResult
	n := t.st.Partitions
	if t.hasCost {
		ns := t.costs.BatchOverheadMs * 1e6
		for _, st := range b.Stats {
			t.tasks = t.tasks[:0]
			for p := range n {
				scanned := int64(0)
				if st.Scans {
					scanned = st.Total[p] + st.Removed[p]
				}
				t.tasks = append(t.tasks, t.costs.TaskNs(st.InputRows[p], st.Updated[p], scanned, st.Removed[p]))
			}
			ns += t.sched.Makespan(t.tasks)
		}
		r.Duration = int64(math.Round(ns / 1e3))
		if b.Start >= t.winStart && b.Start <= t.lastTraffic {
			// Traffic window only: the drain's small batches would
			// pull the percentiles down.
			t.st.Durations.Add(r.Duration)
		}
	}
	r.End = b.Start + r.Duration
	r.Overran = r.End > t.nextBoundary(b.Start)
	if b.HasRows {
		r.Lag, r.HasLag = r.End-b.Oldest, true
		if !t.st.HasLag || r.Lag > t.st.MaxLag {
			t.st.MaxLag, t.st.HasLag = r.Lag, true
		}
	}
	t.partitionRows(b, &r)
	t.memory(b, &r)
	t.fallingBehind(b.Start, r)
	return r
}

// partitionRows fills the batch's state rows per partition and the
// peaks.
func (t *Tracker) partitionRows(b Batch, r *BatchResult) {
	n := t.st.Partitions
	t.perPart = grow(t.perPart, n)
	clear(t.perPart)
	var total int64
	for _, st := range b.Stats {
		for p := range n {
			t.perPart[p] += st.Total[p]
			total += st.Total[p]
		}
	}
	for _, v := range t.perPart {
		r.MaxPartitionRows = max(r.MaxPartitionRows, v)
	}
	if n > 0 {
		r.MeanPartitionRows = float64(total) / float64(n)
	}
	t.st.PeakRowsMax = max(t.st.PeakRowsMax, r.MaxPartitionRows)
	t.st.PeakRowsMean = max(t.st.PeakRowsMean, r.MeanPartitionRows)
}

// memory models each executor's state memory and disk during the batch:
// every store's retained memory, plus the in-flight memory of the
// coresPerExecutor stores of one operator that hold the most (see
// Tracker).
func (t *Tracker) memory(b Batch, r *BatchResult) {
	clear(t.mem)
	clear(t.disk)
	execs := int(t.cfg.Executors)
	cores := max(int(t.cfg.CoresPerExecutor), 1)
	if len(t.inFlight) < execs {
		t.inFlight = make([][]int64, execs)
		t.stage = make([]int64, execs)
	}
	clear(t.stage)
	for k, st := range b.Stats {
		for e := range execs {
			t.inFlight[e] = t.inFlight[e][:0]
		}
		for p := range t.st.Partitions {
			e := p % execs
			upd, rem, tot := t.scaled(st.Updated[p]), t.scaled(st.Removed[p]), t.scaled(st.Total[p])
			var peak, extra int64
			switch t.cfg.Provider {
			case RocksDB:
				m, d := RocksDBBatch(t.entries[k], t.rocks, upd, rem, tot)
				peak, extra = m, RocksDBMemtable(t.entries[k], t.rocks, upd, rem)
				t.disk[e] += d
			default:
				peak, extra = t.st.HDFS[k][p].Batch(t.shapes[k], b.Version, upd, rem, tot), HDFSInFlight(rem, tot)
			}
			t.mem[e] += peak - extra
			t.inFlight[e] = append(t.inFlight[e], extra)
		}
		for e := range execs {
			fl := t.inFlight[e]
			slices.SortFunc(fl, func(a, b int64) int { return cmp.Compare(b, a) })
			var sum int64
			for _, v := range fl[:min(cores, len(fl))] {
				sum += v
			}
			t.stage[e] = max(t.stage[e], sum)
		}
	}
	for e := range execs {
		t.mem[e] += t.stage[e]
		r.Memory = max(r.Memory, t.mem[e])
		r.Disk = max(r.Disk, t.disk[e])
	}
	t.st.PeakMemory = max(t.st.PeakMemory, r.Memory)
	t.st.PeakDisk = max(t.st.PeakDisk, r.Disk)
}

// scaled returns a key count as the memory model reads it: times
// Config.CountScale when it is set.
func (t *Tracker) scaled(n int64) int64 {
	if k := t.cfg.CountScale; k > 0 && k != 1 {
		return int64(math.Round(float64(n) * k))
	}
	return n
}

// fallingBehind follows the runs of overrunning batches among those that
// start in the traffic window. A run goes on while each batch overruns
// and the next starts at its end (no trigger in between found nothing to
// do).
func (t *Tracker) fallingBehind(start int64, r BatchResult) {
	defer func() { t.st.LastEnd, t.st.LastOverran = r.End, r.Overran }()
	if start < t.winStart || start > t.winEnd {
		return
	}
	switch {
	case !r.Overran:
		t.st.Falling = false
	case t.st.Falling && t.st.LastOverran && start == t.st.LastEnd:
		// The run goes on.
	default:
		t.st.Falling, t.st.RunStart = true, start
	}
}

// Summary returns the job's spark fields.
func (t *Tracker) Summary() *metrics.SparkSummary {
	s := &metrics.SparkSummary{
		Partitions: metrics.PartitionSummary{
			Count: t.st.Partitions, PeakRowsMean: t.st.PeakRowsMean, PeakRowsMax: t.st.PeakRowsMax,
		},
		ExecutorPeakMemoryBytes: t.st.PeakMemory,
		ExecutorPeakDiskBytes:   t.st.PeakDisk,
	}
	if t.hasCost && t.st.Durations.N > 0 {
		h := &t.st.Durations
		s.BatchDurationMs = &metrics.DurationPercentiles{
			P50: float64(h.Quantile(0.5)) / 1e3, P99: float64(h.Quantile(0.99)) / 1e3, Max: float64(h.Max) / 1e3,
		}
	}
	if t.st.HasLag {
		lag := float64(t.st.MaxLag) / 1e6
		s.MaxProcessingLagSeconds = &lag
	}
	if t.st.Falling {
		since := float64(t.st.RunStart-t.winStart) / 1e6
		s.FallingBehindSinceSeconds = &since
	}
	return s
}

// grow returns buf with length n, reusing its memory.
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}
