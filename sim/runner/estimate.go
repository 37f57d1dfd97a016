package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// timeseriesRowBytes is about what one batch's timeseries.csv row takes
// (the committed results average 96 bytes with short query names).
const timeseriesRowBytes = 100

// ReportSizeWarning returns a warning line, before the run, when s's
// timeseries.csv may grow past what the report reads back
// (fileio.MaxTimeseriesBytes): up to one row per trigger and job. RunTo
// still publishes the results if the report then fails; "" when the file
// fits.
func ReportSizeWarning(s *scenario.Scenario) string {
	trig := s.Trigger.Std()
	if trig <= 0 {
		return ""
	}
	rows := int64(s.Duration.Std()/trig) * int64(s.Jobs())
	est := rows * timeseriesRowBytes
	if est <= fileio.MaxTimeseriesBytes {
		return ""
	}
	return fmt.Sprintf("warning: timeseries.csv may hold up to %s rows (one per trigger and query), about %s, over the %s the report reads back: the results are published even if the report fails; --no-report skips it",
		interval.Count(rows), interval.Bytes(est), interval.Bytes(fileio.MaxTimeseriesBytes))
}

// The stated figures the estimate of a run rests on, chosen so that it
// errs towards "fits": a refusal is certain, an acceptance is not.
const (
	// EstimateRowsPerSecond is the speed the estimate of time assumes, per
	// core and job: above what the executor measures on one core
	// (BENCHMARKS.md, "Numbers behind the code's comments"), so that the
	// time estimated is at least what the run takes on such a machine.
	EstimateRowsPerSecond = 5e6
	// EstimateBatchesPerSecond is the rate of a processing-time query's
	// batches at a trigger with no rows that the estimate assumes per
	// worker: above what a worker runs (BENCHMARKS.md, "Numbers behind the
	// code's comments"), so that the time is at least what the run takes.
	EstimateBatchesPerSecond = 1e5
	// EstimateEntryBytes is the least memory a key that expires takes in
	// the memory store (BENCHMARKS.md, BenchmarkKeyBytes: the smallest
	// entry it measures).
	EstimateEntryBytes = 37
	// EstimateNumberedBytes is the least a key that never expires takes:
	// memstore.Numbered keeps keys that decode to event numbers in a
	// Roaring bitmap, about a bit a key.
	EstimateNumberedBytes = 1.0 / 8
	// MaxEstimatedSeconds is the longest run accepted without --go-ahead:
	// a day at EstimateRowsPerSecond.
	MaxEstimatedSeconds = 24 * 3600
	// LongWorkSeconds is the estimated time from which the estimate is
	// printed before the run.
	LongWorkSeconds = 60
)

// Estimate is what a run of a scenario takes, estimated before anything
// is generated (EstimateRun).
type Estimate struct {
	// Rows is the stream's rows (every copy and heartbeat), which every
	// job reads; Jobs the number of jobs, Workers how many run at once.
	Rows          float64
	Jobs, Workers int
	// PeakStateRows is the keys held at once by the jobs on the memory
	// store, all together: a job that never evicts keeps every event, one
	// that evicts about a key horizon's worth; PeakStateBytes is their
	// least size, EstimateEntryBytes a key that expires and
	// EstimateNumberedBytes one that never does.
	PeakStateRows, PeakStateBytes float64
	// Batches is the batches of processing-time queries (one at every
	// trigger until their state has expired, a TTL after the traffic),
	// all jobs together.
	Batches float64
	// Seconds is the time at EstimateRowsPerSecond (and
	// EstimateBatchesPerSecond) per worker.
	Seconds float64
	// Memory is the machine's memory in bytes, 0 when unknown.
	Memory int64
}

// EstimateRun estimates a run of s with workers jobs at once (0: every
// core) and, when store is not "", every job on that store.
func EstimateRun(s *scenario.Scenario, workers int, store string) (Estimate, error) {
	jobs, err := Jobs(s)
	if err != nil {
		return Estimate{}, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(jobs)))
	rows, originals := s.Workload.MeanRows(s.Duration)
	e := Estimate{Rows: rows, Jobs: len(jobs), Workers: workers, Memory: machineMemory()}
	trigger := s.Trigger.Std().Seconds()
	secs := s.Duration.Std().Seconds()
	for _, j := range jobs {
		for _, i := range j.Plan.Dedups() {
			// A batch at every trigger while a key may be in state: up to
			// the TTL after the last row.
			if op := j.Plan.Nodes[i].Op; op.Kind == chain.TransformWithStateDedup && op.TTLMs > 0 && trigger > 0 {
				e.Batches += (secs + float64(op.TTLMs)/1000) / trigger
				break
			}
		}
		if cmpOr(store, j.Store) == scenario.StorePebble || j.Engine != "" || secs <= 0 {
			// Pebble keeps its state on disk; another engine's model
			// keeps its own (left out: the estimate is a lower bound).
			continue
		}
		switch h, ok := keyHorizon(j.Plan, trigger); {
		case ok:
			keys := min(originals, originals/secs*h)
			e.PeakStateRows += keys
			e.PeakStateBytes += keys * EstimateEntryBytes
		case len(j.Plan.Dedups()) > 0:
			e.PeakStateRows += originals
			e.PeakStateBytes += originals * EstimateNumberedBytes
		}
	}
	e.Seconds = rows*float64(len(jobs))/(EstimateRowsPerSecond*float64(workers)) + e.Batches/(EstimateBatchesPerSecond*float64(workers))
	return e, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// String is the estimate in one line.
func (e Estimate) String() string {
	batches := ""
	if e.Batches > 0 {
		batches = fmt.Sprintf(" and %s batches/s", interval.Count(EstimateBatchesPerSecond))
	}
	return fmt.Sprintf("about %s rows for each of %d jobs%s, a peak state of about %s keys in memory (at least %s), and at least %s at %s rows/s%s on each of %d workers",
		countOf(e.Rows), e.Jobs, batchesOf(e.Batches), countOf(e.PeakStateRows), bytesOf(e.PeakStateBytes), interval.FormatSeconds(math.Ceil(e.Seconds)), interval.Count(EstimateRowsPerSecond), batches, e.Workers)
}

// batchesOf names the batches of processing-time queries, when there are.
func batchesOf(v float64) string {
	if v <= 0 {
		return ""
	}
	return " and " + countOf(v) + " batches of processing-time queries"
}

// Check refuses, in one line, a run the estimate says cannot finish: a
// peak state over the machine's memory, or a time over
// MaxEstimatedSeconds. goAhead (the commands' --go-ahead) lets it run.
func (e Estimate) Check(goAhead bool) error {
	if goAhead {
		return nil
	}
	switch {
	case e.Memory > 0 && e.PeakStateBytes > float64(e.Memory):
		return fmt.Errorf("the run cannot finish on this machine: %s, over its %s of memory; shorten the duration, lower the rate, bound the dedup with a watermark (or run it on --store pebble), or give --go-ahead to run it anyway", e, interval.Bytes(e.Memory))
	case e.Seconds > MaxEstimatedSeconds:
		return fmt.Errorf("the run would take too long: %s, over the limit of %s; shorten the duration, lower the rate or run fewer jobs, or give --go-ahead to run it anyway", e, interval.FormatSeconds(MaxEstimatedSeconds))
	}
	return nil
}

// Long reports whether the estimate is worth printing before the run.
func (e Estimate) Long() bool { return e.Seconds >= LongWorkSeconds }

// countOf renders an estimated count: with separators while it fits an
// int64, else in scientific notation.
func countOf(v float64) string {
	if v < 1e15 {
		return interval.Count(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// bytesOf renders an estimated size as interval.Bytes does, beyond its
// range too.
func bytesOf(v float64) string {
	if v < math.MaxInt64/2 {
		return interval.Bytes(int64(v))
	}
	return strconv.FormatFloat(v/(1<<50), 'g', 2, 64) + " PiB"
}

// machineMemory returns the machine's memory in bytes (MemTotal of
// /proc/meminfo), 0 when it cannot tell.
func machineMemory() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemTotal:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
