package plan

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// JSONSpark is the spark part of a plan's JSON form: the cluster at the
// plan's delay and rate.
type JSONSpark struct {
	// Partitions, Provider, Executors and CoresPerExecutor are the
	// cluster planned for.
	Partitions       int64  `json:"partitions"`
	Provider         string `json:"provider"`
	Executors        int64  `json:"executors"`
	CoresPerExecutor int64  `json:"coresPerExecutor"`
	// Cost holds the cost terms used; DefaultCosts is true when none
	// was given (the provider's defaults, estimates).
	Cost         map[string]float64 `json:"cost"`
	DefaultCosts bool               `json:"defaultCosts"`
	// RatePerSecond is the rate of originals planned for.
	RatePerSecond float64 `json:"ratePerSecond"`
	// TriggerMs is the scenario's trigger.
	TriggerMs               float64 `json:"triggerMs"`
	ExecutorPeakMemoryBytes int64   `json:"executorPeakMemoryBytes"`
	ExecutorPeakDiskBytes   int64   `json:"executorPeakDiskBytes"`
	BatchDurationMs         struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
	} `json:"batchDurationMs"`
	// MaxSustainableRate is the largest rate found to keep up (see
	// SparkResult); MaxSustainableRateBounded is true when the search
	// stopped at its bound while still keeping up.
	MaxSustainableRate        float64 `json:"maxSustainableRate"`
	MaxSustainableRateBounded bool    `json:"maxSustainableRateBounded"`
	KeepsUp                   bool    `json:"keepsUp"`
	// FallingBehindSinceSeconds is when the query falls behind at the
	// planned rate; null when it keeps up.
	FallingBehindSinceSeconds *float64 `json:"fallingBehindSinceSeconds"`
	// ExecutorMemoryBytes is the memory each executor's state may use,
	// ExecutorMemorySource where it came from; FitsMemory is true when
	// the state at the planned rate fits in it.
	ExecutorMemoryBytes  int64  `json:"executorMemoryBytes"`
	ExecutorMemorySource string `json:"executorMemorySource"`
	FitsMemory           bool   `json:"fitsMemory"`
	// BatchLimited is true when a batch at the planned rate reached
	// dedupsim's limit on a batch's rows (nothing else measured there).
	BatchLimited bool `json:"batchLimited"`
	// MemoryAtMaxRateBytes is the largest executor's state memory at
	// MaxSustainableRate.
	MemoryAtMaxRateBytes int64 `json:"memoryAtMaxRateBytes"`
	// RateBound names what bounded MaxSustainableRate: "cluster" (falls
	// behind above it), "memory" (the state does not fit above it),
	// "batch-limit" (dedupsim's limit on a batch's rows), "cost-limit"
	// (dedupsim's bound on a cost) or "search-limit" (2^20 times the
	// planned rate); RateBoundText says it in words.
	RateBound     string `json:"rateBound"`
	RateBoundText string `json:"rateBoundText"`
	// SimulationsAtBatchLimit counts the search's simulations in which a
	// batch met dedupsim's limit on its rows.
	SimulationsAtBatchLimit int `json:"simulationsAtBatchLimit"`
}

// json returns the spark part of a plan's JSON form.
func (s *SparkResult) json() *JSONSpark {
	j := &JSONSpark{
		Partitions: s.Config.Partitions, Provider: s.Config.Provider, Executors: s.Config.Executors, CoresPerExecutor: s.Config.CoresPerExecutor,
		Cost: map[string]float64{}, DefaultCosts: s.DefaultCosts, RatePerSecond: s.Rate, TriggerMs: float64(s.Trigger.Milliseconds()),
		ExecutorPeakMemoryBytes: s.ExecutorPeakMemoryBytes, ExecutorPeakDiskBytes: s.ExecutorPeakDiskBytes,
		MaxSustainableRate: s.MaxSustainableRate, MaxSustainableRateBounded: s.MaxSustainableRateBounded,
		KeepsUp: s.KeepsUp, FallingBehindSinceSeconds: s.FallingBehindSinceSeconds,
		ExecutorMemoryBytes: s.ExecutorMemoryBytes, ExecutorMemorySource: s.ExecutorMemorySource, FitsMemory: s.FitsMemory,
		BatchLimited: s.BatchLimited, MemoryAtMaxRateBytes: s.MemoryAtMaxRateBytes, RateBound: s.RateBound, RateBoundText: s.BoundText(),
		SimulationsAtBatchLimit: s.LimitedRuns,
	}
	if c, ok := s.Config.Costs(); ok {
		j.Cost = map[string]float64{"batchOverheadMs": c.BatchOverheadMs, "rowNs": c.RowNs, "newKeyNs": c.NewKeyNs,
			"scanKeyNs": c.ScanKeyNs, "removeKeyNs": c.RemoveKeyNs, "partitionCommitMs": c.PartitionCommitMs}
	}
	j.BatchDurationMs.P50, j.BatchDurationMs.P99 = s.BatchP50Ms, s.BatchP99Ms
	return j
}

// Verdict is the plan's one-line answer on the cluster, such as "keeps up
// at 20,000/s with p99 batch 4.2 s of a 10 s trigger, state 300 MiB of
// the 1 GiB executor memory; largest sustainable rate 46,000/s (state
// 700 MiB there): falls behind above it".
func (s *SparkResult) Verdict() string {
	trig := fmtSeconds(s.Trigger)
	var b strings.Builder
	switch {
	case s.BatchLimited:
		fmt.Fprintf(&b, "falls behind at %s/s: a batch reached dedupsim's limit of %s rows (its memory and batch durations are not measured there)", formatRate(s.Rate), fmtCount(float64(scenario.MaxRowsPerBatch)))
	case s.KeepsUp:
		fmt.Fprintf(&b, "keeps up at %s/s with p99 batch %s of a %s trigger", formatRate(s.Rate), fmtMs(s.BatchP99Ms), trig)
	default:
		since := ""
		if s.FallingBehindSinceSeconds != nil {
			since = fmt.Sprintf(" from %s", fmtSeconds(time.Duration(*s.FallingBehindSinceSeconds*float64(time.Second))))
		}
		fmt.Fprintf(&b, "falls behind at %s/s%s (p99 batch %s of a %s trigger)", formatRate(s.Rate), since, fmtMs(s.BatchP99Ms), trig)
	}
	if !s.BatchLimited {
		fits := "of"
		if !s.FitsMemory {
			fits = "does not fit in"
		}
		fmt.Fprintf(&b, ", state %s %s the %s executor memory", interval.Bytes(s.ExecutorPeakMemoryBytes), fits, interval.Bytes(s.ExecutorMemoryBytes))
	}
	switch {
	case s.MaxSustainableRate == 0:
		b.WriteString("; ")
		b.WriteString(s.BoundText())
	default:
		fmt.Fprintf(&b, "; largest sustainable rate %s/s (state %s there): %s", formatRate(s.MaxSustainableRate), interval.Bytes(s.MemoryAtMaxRateBytes), s.BoundText())
	}
	return b.String()
}

// BoundText says in words what bounded the largest sustainable rate
// (RateBound), such as "falls behind above it".
func (s *SparkResult) BoundText() string {
	if s.MaxSustainableRate == 0 {
		switch s.RateBound {
		case BoundMemory:
			return "the state does not fit in the executor memory at any rate tried"
		case BoundBatchLimit:
			return fmt.Sprintf("falls behind at any rate tried: a batch reached dedupsim's limit of %s rows", fmtCount(float64(scenario.MaxRowsPerBatch)))
		}
		return "falls behind at any rate: the batch overhead and commits alone overrun the trigger"
	}
	above := formatRate(s.FallsBehindAbove)
	if above == formatRate(s.MaxSustainableRate) {
		// Within 1%: whole rates tell the ends of the bracket apart.
		above = interval.Count(int64(math.Ceil(s.FallsBehindAbove)))
	}
	switch s.RateBound {
	case BoundMemory:
		return fmt.Sprintf("memory-bound: above it the state does not fit in the %s executor memory (at %s/s it does not)", interval.Bytes(s.ExecutorMemoryBytes), above)
	case BoundBatchLimit:
		return fmt.Sprintf("bound by dedupsim's limit, not measured on the cluster: at %s/s a batch reached dedupsim's limit of %s rows, read as falling behind", above, fmtCount(float64(scenario.MaxRowsPerBatch)))
	case BoundCostLimit:
		return "bound by dedupsim's limit, not the cluster: it kept up at every rate tried, up to where a per-row or per-key cost multiplied by the rate would pass dedupsim's bound on a cost; the true bound may be higher"
	case BoundSearch:
		return fmt.Sprintf("bound by the search, not the cluster: it kept up at every rate tried, up to 2^%d times the planned rate; the true bound may be higher", MaxRateDoublings)
	}
	return fmt.Sprintf("falls behind above it (at %s/s)", above)
}

// MemoryHint suggests executor memory settings for the state at the
// planned rate, with the overhead Spark adds (sparkmodel.MemoryOverhead);
// "" when the state was not measured there.
func (s *SparkResult) MemoryHint() string {
	if s.BatchLimited {
		return ""
	}
	st := s.ExecutorPeakMemoryBytes
	if s.Config.Provider == sparkmodel.RocksDB {
		o := sparkmodel.MemoryOverhead(sparkmodel.DefaultExecutorMemory)
		return fmt.Sprintf("RocksDB's %s of native memory lies outside the heap, where Spark's default spark.executor.memoryOverhead, max(384 MiB, 10%% of spark.executor.memory), does not count it: set spark.executor.memoryOverhead to that plus the state, such as %s with spark.executor.memory=1g (%s + %s), plus the headroom the job needs",
			interval.Bytes(st), interval.Bytes(o+st), interval.Bytes(o), interval.Bytes(st))
	}
	h := sparkmodel.HeapFor(st)
	o := sparkmodel.MemoryOverhead(h)
	return fmt.Sprintf("the state's %s of JVM heap fits spark.executor.memory=%dg, with no headroom for the rest of the job (not counted); Spark adds spark.executor.memoryOverhead = max(384 MiB, 10%%) = %s, so each executor's container asks %s",
		interval.Bytes(st), h>>30, interval.Bytes(o), interval.Bytes(h+o))
}

// writeText writes the spark part of a plan's text form.
func (s *SparkResult) writeText(b *strings.Builder) {
	c := s.Config
	at := "as written"
	if s.HasDelay {
		at = "at " + fmtDelay(s.Delay)
	}
	fmt.Fprintln(b)
	fmt.Fprintf(b, "  on the cluster (%s, %s/s): %d partitions, %s, %d executors x %d cores\n", at, formatRate(s.Rate), c.Partitions, c.Provider, c.Executors, c.CoresPerExecutor)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	mem := "heap"
	if c.Provider == "rocksdb" {
		mem = "native memory"
	}
	fmt.Fprintf(tw, "    executor peak\t%s of %s, %s of local disk\n", interval.Bytes(s.ExecutorPeakMemoryBytes), mem, interval.Bytes(s.ExecutorPeakDiskBytes))
	fmt.Fprintf(tw, "    batch duration\tp50 %s, p99 %s, max %s (trigger %s)\n", fmtMs(s.BatchP50Ms), fmtMs(s.BatchP99Ms), fmtMs(s.BatchMaxMs), fmtSeconds(s.Trigger))
	fmt.Fprintf(tw, "    verdict\t%s\n", s.Verdict())
	tw.Flush()
	fmt.Fprintln(b)
	if s.DefaultCosts {
		fmt.Fprintf(b, "  note: the batch durations use %s's default costs, estimates until calibrated: simulate calibrate a real job's progress log and pass it with --cost\n", c.Provider)
	}
	fmt.Fprintf(b, "  note: executor memory %s (%s); state memory is the state stores' only: JVM headroom and everything outside the state store are not counted\n", interval.Bytes(s.ExecutorMemoryBytes), s.ExecutorMemorySource)
	if h := s.MemoryHint(); h != "" {
		fmt.Fprintf(b, "  hint: %s\n", h)
	}
	fmt.Fprintf(b, "  note: memory, disk and batch durations are simulated at %s/s (the scenario's seed, at the planned delay); the search for the largest rate that keeps up ran %d simulations there, with the per-row and per-key costs multiplied by each rate over it%s\n", formatRate(s.Rate), s.Simulations, s.limitNote())
}

// fmtMs renders milliseconds as seconds to two significant digits above
// a second ("4.2 s"), else as milliseconds ("180 ms").
func fmtMs(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.3g s", ms/1000)
	}
	return fmt.Sprintf("%.3g ms", ms)
}

// fmtSeconds renders a duration in seconds ("10 s").
func fmtSeconds(d time.Duration) string {
	return fmt.Sprintf("%.4g s", d.Seconds())
}

// limitNote says how many of the search's simulations met dedupsim's
// limit on a batch's rows; "" for none.
func (s *SparkResult) limitNote() string {
	if s.LimitedRuns == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them met dedupsim's limit on a batch's rows, read as falling behind)", s.LimitedRuns)
}
