// Package calibrate fits dedupsim's batch-cost model to the progress
// records of a real Spark query (read by metrics/progresslog), so that
// the simulator's batch durations are the cluster's, not placeholders.
//
// The model: a micro-batch's duration in milliseconds is
//
//	batchOverheadMs
//	  + sum over the query's state operators of
//	      (rowNs × numInputRows + newKeyNs × numRowsUpdated
//	       + scanKeyNs × (numRowsTotal + numRowsRemoved)
//	       + removeKeyNs × numRowsRemoved) / 1e6 / slots
//	      + partitionCommitMs × numShufflePartitions / slots
//
// where slots = executors × coresPerExecutor of the cluster the log came
// from. numRowsTotal + numRowsRemoved is the store's rows before eviction,
// the keys a dedup operator visits when it evicts, charged only to an
// operator that scans (see ScanRule); numRowsUpdated is the keys it
// stored. An operator's input rows (numInputRows above) are
// numRowsDroppedByWatermark + numRowsUpdated + numDroppedDuplicateRows,
// each input row being late, new or a duplicate (the batch's numInputRows
// when the log lacks the last). The overhead is paid once per batch by
// the driver; the other terms are work spread over the slots, so their
// coefficients are per-task costs.
//
// Fit estimates the coefficients by non-negative least squares (see
// Fit); Result.YAML renders them as a scenario's spark: cost: block.
package calibrate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// Coefficient is one fitted coefficient.
type Coefficient struct {
	// Term is the coefficient's term; its String is the spark.cost key.
	Term sparkmodel.Term
	// Value is the coefficient, per batch (BatchOverheadMs) or per task,
	// in the unit its key names. A term the log cannot identify keeps its
	// default.
	Value float64
	// Identified is false when the log cannot tell the term's cost from
	// the others' (see Reason); Value is then the default.
	Identified bool
	// Reason says why the term is not identified, such as "never
	// varies" or "moves with rowNs"; "" when it is.
	Reason string
	// StdErr is the standard error of Value, in its unit, from the least
	// squares over the terms the fit left free; 0 when the term is not
	// identified or held at zero.
	StdErr float64
	// AtZero is true when the data asked for a negative cost: the fit
	// holds the term at zero. It suggests the model misses something the
	// cluster does.
	AtZero bool
	// InOverhead is true for a term that never varies in the log (Reason
	// "never varies"): the log cannot split the batch's constant part,
	// so BatchOverheadMs holds its cost and Value is 0.
	InOverhead bool
}

// Percentiles are percentiles of the absolute residuals, in milliseconds.
type Percentiles struct {
	P50, P90, P99 float64
}

// Result is the outcome of a fit.
type Result struct {
	// Source names the log.
	Source string
	// QueryName is the name of the query fitted, "" when it has none;
	// QueryIDs are its ids (one per checkpoint), in the order first seen.
	QueryName string
	QueryIDs  []string
	// Operators names the query's state operators, as the log does, in
	// the order first seen.
	Operators []string
	// Duration is the duration fitted.
	Duration Duration
	// Executors and CoresPerExecutor are the cluster's, as given; Slots
	// is their product.
	Executors, CoresPerExecutor, Slots int
	// Records is the number of the query's records; Batches the number
	// the fit used. The others were Idle (triggers that ran no batch:
	// no durationMs.addBatch), Warmup (the first batch of each run, unless
	// Options.IncludeWarmup) or Repeated (a record seen before: same run,
	// batch and timestamp).
	Records, Batches, Idle, Warmup, Repeated int
	// Coefficients holds one Coefficient per Term, in Term order.
	Coefficients []Coefficient
	// R2 is the coefficient of determination of the model (identified
	// terms fitted, the others at their defaults) over the batches used:
	// 1 - sum of squared residuals / sum of squared deviations from the
	// mean duration. When every duration is the same it is 1 for a
	// perfect fit and 0 otherwise.
	R2 float64
	// Residuals are percentiles of |duration - model| over the batches
	// used.
	Residuals Percentiles
	// Scans says, per state operator (by position, as the log lists
	// them), whether the fit charged it the eviction scan, and why.
	Scans []OperatorScan
	// InputRowsFromBatch is true when some operator's input rows had to
	// be taken as the batch's numInputRows (the log has no
	// numDroppedDuplicateRows); otherwise each operator's input is
	// numRowsDroppedByWatermark + numRowsUpdated + numDroppedDuplicateRows.
	InputRowsFromBatch bool
	// Provider is the state store provider whose defaults the terms the
	// log cannot identify keep, and ProviderFrom where it comes from (the
	// options or the log's custom metrics).
	Provider, ProviderFrom string
	// Merged are the terms that never vary in the log: their cost is in
	// BatchOverheadMs, their value 0.
	Merged []sparkmodel.Term
}

// OperatorScan is whether a fit charges one state operator the eviction
// scan (scanKeyNs per key of its store).
type OperatorScan struct {
	Operator string
	Scans    bool
	Why      string
}

// Costs returns the result's coefficients, fitted or default.
func (r Result) Costs() sparkmodel.Costs {
	var c sparkmodel.Costs
	for _, k := range r.Coefficients {
		c.Set(k.Term, k.Value)
	}
	return c
}

// YAML renders the coefficients as a scenario's cost block, to be placed
// under its spark: key (indented by two spaces), with comments that say
// where each value comes from:
//
//	# dedupsim calibrate: 118 batches of driver.log, query dedup-events ...
//	cost:
//	  batchOverheadMs: 412  # ± 9
//	  rowNs: 2090  # ± 40
//	  newKeyNs: 721  # default: moves with rowNs
//	  scanKeyNs: 0  # held at 0: the data ask for a negative cost
//	  removeKeyNs: 627  # ± 3100: the log barely determines it
//	  ...
//
// A term the log barely determines has a standard error above half its
// value: a log with more varied load (batch sizes, duplicate shares,
// state sizes, evictions) determines it better.
//
// Values have four significant digits.
func (r Result) YAML() string {
	var b strings.Builder
	name := r.QueryName
	if name == "" && len(r.QueryIDs) > 0 {
		name = r.QueryIDs[0]
	}
	fmt.Fprintf(&b, "# dedupsim calibrate: %d batches of %s, query %s, fitting durationMs.%s\n", r.Batches, echo(r.Source), echo(name), r.Duration)
	fmt.Fprintf(&b, "# on %d slots (%d executors x %d cores); R² %s; |residual| p50 %s ms, p90 %s ms, p99 %s ms\n",
		r.Slots, r.Executors, r.CoresPerExecutor, format(r.R2, 3), format(r.Residuals.P50, 3), format(r.Residuals.P90, 3), format(r.Residuals.P99, 3))
	if r.Provider != "" {
		fmt.Fprintf(&b, "# state store: %s (%s)\n", r.Provider, r.ProviderFrom)
	}
	for i, s := range r.Scans {
		verdict := "no scan"
		if s.Scans {
			verdict = "scans"
		}
		fmt.Fprintf(&b, "# operator %d (%s): %s: %s\n", i, echo(s.Operator), verdict, s.Why)
	}
	if r.InputRowsFromBatch {
		b.WriteString("# input rows: the batch's numInputRows for operators without numDroppedDuplicateRows (older Spark)\n")
	}
	if len(r.Merged) > 0 {
		names := make([]string, len(r.Merged))
		for i, t := range r.Merged {
			names[i] = t.String()
		}
		fmt.Fprintf(&b, "# the log cannot split the constant part of a batch: batchOverheadMs holds the cost of %s too\n", strings.Join(names, ", "))
	}
	b.WriteString("cost:\n")
	for _, k := range r.Coefficients {
		fmt.Fprintf(&b, "  %s: %s  # ", k.Term, format(k.Value, 4))
		switch {
		case k.InOverhead:
			b.WriteString("in batchOverheadMs: " + k.Reason + " (the log cannot split the constant part)")
		case !k.Identified:
			b.WriteString("default: " + k.Reason)
		case k.AtZero:
			b.WriteString("held at 0: the data ask for a negative cost")
		case k.StdErr > k.Value/2:
			b.WriteString("± " + format(k.StdErr, 2) + ": the log barely determines it")
		default:
			b.WriteString("± " + format(k.StdErr, 2))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// format renders v with at most digits significant digits, in plain
// decimal notation.
func format(v float64, digits int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		if v == 0 {
			return "0"
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
