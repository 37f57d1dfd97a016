package plan

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
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
}

// json returns the spark part of a plan's JSON form.
func (s *SparkResult) json() *JSONSpark {
	j := &JSONSpark{
		Partitions: s.Config.Partitions, Provider: s.Config.Provider, Executors: s.Config.Executors, CoresPerExecutor: s.Config.CoresPerExecutor,
		Cost: map[string]float64{}, DefaultCosts: s.DefaultCosts, RatePerSecond: s.Rate, TriggerMs: float64(s.Trigger.Milliseconds()),
		ExecutorPeakMemoryBytes: s.ExecutorPeakMemoryBytes, ExecutorPeakDiskBytes: s.ExecutorPeakDiskBytes,
		MaxSustainableRate: s.MaxSustainableRate, MaxSustainableRateBounded: s.MaxSustainableRateBounded,
		KeepsUp: s.KeepsUp, FallingBehindSinceSeconds: s.FallingBehindSinceSeconds,
	}
	if c, ok := s.Config.Costs(); ok {
		j.Cost = map[string]float64{"batchOverheadMs": c.BatchOverheadMs, "rowNs": c.RowNs, "newKeyNs": c.NewKeyNs,
			"scanKeyNs": c.ScanKeyNs, "removeKeyNs": c.RemoveKeyNs, "partitionCommitMs": c.PartitionCommitMs}
	}
	j.BatchDurationMs.P50, j.BatchDurationMs.P99 = s.BatchP50Ms, s.BatchP99Ms
	return j
}

// Verdict is the plan's one-line answer on the cluster, such as "keeps up
// at 20,000/s with p99 batch 4.2 s of a 10 s trigger; falls behind above
// 46,000/s".
func (s *SparkResult) Verdict() string {
	trig := fmtSeconds(s.Trigger)
	var b strings.Builder
	if s.KeepsUp {
		fmt.Fprintf(&b, "keeps up at %s/s with p99 batch %s of a %s trigger", formatRate(s.Rate), fmtMs(s.BatchP99Ms), trig)
	} else {
		since := ""
		if s.FallingBehindSinceSeconds != nil {
			since = fmt.Sprintf(" from %s", fmtSeconds(time.Duration(*s.FallingBehindSinceSeconds*float64(time.Second))))
		}
		fmt.Fprintf(&b, "falls behind at %s/s%s (p99 batch %s of a %s trigger)", formatRate(s.Rate), since, fmtMs(s.BatchP99Ms), trig)
	}
	switch {
	case s.MaxSustainableRateBounded:
		fmt.Fprintf(&b, "; keeps up at every rate tried, up to %s/s", formatRate(s.MaxSustainableRate))
	case s.MaxSustainableRate == 0:
		b.WriteString("; falls behind at any rate: the batch overhead and commits alone overrun the trigger")
	case s.KeepsUp:
		fmt.Fprintf(&b, "; falls behind above %s/s", formatRate(s.MaxSustainableRate))
	default:
		fmt.Fprintf(&b, "; keeps up below %s/s", formatRate(s.MaxSustainableRate))
	}
	return b.String()
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
	fmt.Fprintf(b, "  note: memory, disk and batch durations are simulated at %s/s (the scenario's seed, at the planned delay); the search for the largest rate that keeps up ran %d simulations there, with the per-row and per-key costs multiplied by each rate over it\n", formatRate(s.Rate), s.Simulations)
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
