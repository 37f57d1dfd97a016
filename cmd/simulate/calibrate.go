package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/sim/plan"
	"github.com/dedupsim/dedupsim/sim/spark/calibrate"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

func newCalibrateCmd(stdout io.Writer) *cobra.Command {
	var (
		query, provider, duration, scans string
		executors, cores                 int
		asJSON, warmup                   bool
	)
	cmd := &cobra.Command{
		Use:   "calibrate FILE...",
		Short: "Fit the spark: cost block to a real query's progress log",
		Long: `calibrate reads the StreamingQueryProgress records of a real Spark query and fits
the batch-duration model of a scenario's spark: block to them by non-negative
least squares: each executed batch's durationMs.triggerExecution (or addBatch,
with --duration addBatch) against, summed over the state operators, their
input rows (numRowsDroppedByWatermark + numRowsUpdated +
numDroppedDuplicateRows), numRowsUpdated (new keys), numRowsTotal +
numRowsRemoved (keys the eviction scan visits, for the operators that scan:
none without a watermark, dedupeWithinWatermark always, a dedupe as
--dedupe-scans says), numRowsRemoved and numShufflePartitions.

It reads the records in every form they come in, detected from the file:
JSON lines (a listener writing lastProgress.json), a JSON array
(recentProgress), pretty JSON records one after another (prettyJson), and a
driver log, where each "Streaming query made progress: {" starts a record and
every other line is skipped, and Spark 4's structured (JSON) driver log, where
an event's msg holds the record. Several files are read as one log: a record seen
twice (same runId, batchId and timestamp) counts once.

The fit leaves out triggers that ran no batch and the first batch of each run
(JIT and the first state loads; --include-warmup keeps it). The log shows
cluster-level costs; --executors and --cores-per-executor, the cluster the log
came from (default 1 and 1), convert them to the per-task costs of the cost:
block. A term the log cannot identify (absent, always 0, never varies, or
moving in step with the terms before it) keeps the default of the state store
provider (read from the log's custom metrics, or --provider) and the output
says why; a term that never varies is part of the constant batchOverheadMs.

It prints YAML: comment lines with the fit (batches, R², residual
percentiles) and the cost: block, to paste under a scenario's spark: key
or to give to simulate plan --cost. --json prints the same as JSON.

Exit status: 0 with a fit, 1 on errors (a file that is not a progress log,
too few batches for the terms to fit, several queries without --query).`,
		Example: `  simulate calibrate experiments/spark-sample/driver.log --executors 4 --cores-per-executor 4
  simulate calibrate experiments/spark-sample/driver.log --executors 4 --cores-per-executor 4 --provider rocksdb --json
  simulate calibrate experiments/spark-sample/driver.log --executors 4 --cores-per-executor 4 --duration addBatch --query dedup-events`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("want one or more progress logs, got none (e.g. simulate calibrate experiments/spark-sample/driver.log)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := calibrateOptions(cmd, query, provider, duration, scans, executors, cores, warmup)
			if err != nil {
				return err
			}
			f, err := calibrate.NewFitter(opts)
			if err != nil {
				return err
			}
			for _, path := range args {
				if err := f.ReadFile(path); err != nil {
					return err
				}
			}
			res, err := f.Fit()
			if err != nil {
				return err
			}
			// What calibrate prints, plan --cost reads: checked with
			// plan's own check, so that a fit it would refuse (durations
			// of 9e18 ms) is refused here instead.
			if _, err := plan.ParseCost("the fitted cost", []byte(calibrateText(res))); err != nil {
				return fmt.Errorf("%s: %w; the log's durations are beyond what the model can plan with (is it the log of a real query?)", strings.Join(args, ", "), err)
			}
			if asJSON {
				return writeCalibrateJSON(stdout, res, args)
			}
			_, err = io.WriteString(stdout, calibrateText(res))
			return err
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&executors, "executors", 1, "executors of the cluster the log came from")
	fl.IntVar(&cores, "cores-per-executor", 1, "cores (task slots) per executor of the cluster the log came from")
	fl.StringVar(&provider, "provider", "", "state store provider (hdfs or rocksdb) whose defaults the terms the log cannot identify keep; default: detected from the log's custom metrics (rocksdb*), else hdfs")
	fl.StringVar(&scans, "dedupe-scans", "inferred", "whether a dedupe operator of a watermarked query scans its store every batch (its keys hold the event time): inferred (when it removed rows in the log), always or never")
	fl.StringVar(&query, "query", "", "the query to fit, by name or id, when the log holds several")
	fl.StringVar(&duration, "duration", "triggerExecution", "the duration fitted: triggerExecution (the whole trigger) or addBatch")
	fl.BoolVar(&warmup, "include-warmup", false, "keep the first batch of each run")
	fl.BoolVar(&asJSON, "json", false, "print the fit as JSON: query, batches, r2, residualsMs, cost, terms")
	return cmd
}

// calibrateOptions checks calibrate's flags and returns the fit's options.
func calibrateOptions(cmd *cobra.Command, query, provider, duration, scans string, executors, cores int, warmup bool) (calibrate.Options, error) {
	if executors < 1 || executors > 10000 {
		return calibrate.Options{}, fmt.Errorf("--executors %d: want the executors of the cluster the log came from, 1 to 10000", executors)
	}
	if cores < 1 || cores > 1024 {
		return calibrate.Options{}, fmt.Errorf("--cores-per-executor %d: want the cores per executor of the cluster the log came from, 1 to 1024", cores)
	}
	if provider != "" && provider != sparkmodel.HDFS && provider != sparkmodel.RocksDB || provider == "" && cmd.Flags().Changed("provider") {
		return calibrate.Options{}, fmt.Errorf("--provider %s: want hdfs or rocksdb", plan.ShowValue(provider))
	}
	opts := calibrate.Options{Query: query, Provider: provider, Executors: executors, CoresPerExecutor: cores, IncludeWarmup: warmup}
	switch scans {
	case "inferred":
		opts.DedupeScans = calibrate.ScanInferred
	case "always":
		opts.DedupeScans = calibrate.ScanAlways
	case "never":
		opts.DedupeScans = calibrate.ScanNever
	default:
		return calibrate.Options{}, fmt.Errorf("--dedupe-scans %s: want inferred, always or never", plan.ShowValue(scans))
	}
	switch duration {
	case "triggerExecution":
		opts.Duration = calibrate.TriggerExecution
	case "addBatch":
		opts.Duration = calibrate.AddBatch
	default:
		return calibrate.Options{}, fmt.Errorf("--duration %s: want triggerExecution or addBatch", plan.ShowValue(duration))
	}
	if cmd.Flags().Changed("query") && strings.TrimSpace(query) == "" {
		return calibrate.Options{}, fmt.Errorf("--query: want a query's name or id, got an empty one")
	}
	opts.DefaultsOf = sparkmodel.DefaultCosts
	return opts, nil
}

// calibrateText renders a fit as YAML: comments, then the cost: block.
func calibrateText(res calibrate.Result) string {
	var b strings.Builder
	b.WriteString(res.YAML())
	var kept []string
	for _, k := range res.Coefficients {
		if !k.Identified && !k.InOverhead {
			kept = append(kept, k.Term.String())
		}
	}
	if len(kept) > 0 {
		fmt.Fprintf(&b, "# kept %s's default: %s (see each comment); a log with more varied load determines more terms\n", res.Provider, strings.Join(kept, ", "))
	}
	fmt.Fprintf(&b, "# per-task costs on %d slots; paste the cost: block under your scenario's spark: key (indented two spaces), or pass this file to simulate plan --cost\n", res.Slots)
	return b.String()
}

// calibrateTerm is one term of calibrate's JSON.
type calibrateTerm struct {
	Term       string  `json:"term"`
	Value      float64 `json:"value"`
	Identified bool    `json:"identified"`
	Reason     string  `json:"reason,omitempty"`
	StdErr     float64 `json:"stdErr"`
	AtZero     bool    `json:"atZero"`
	InOverhead bool    `json:"inOverhead,omitempty"`
}

// calibrateScan is one operator of calibrate's JSON: whether the fit
// charged it the eviction scan.
type calibrateScan struct {
	Operator string `json:"operator"`
	Scans    bool   `json:"scans"`
	Why      string `json:"why"`
}

// writeCalibrateJSON writes a fit as one JSON object.
func writeCalibrateJSON(w io.Writer, res calibrate.Result, files []string) error {
	cost := map[string]float64{}
	terms := make([]calibrateTerm, 0, len(res.Coefficients))
	for _, k := range res.Coefficients {
		cost[k.Term.String()] = k.Value
		terms = append(terms, calibrateTerm{Term: k.Term.String(), Value: k.Value, Identified: k.Identified, Reason: k.Reason, StdErr: k.StdErr, AtZero: k.AtZero, InOverhead: k.InOverhead})
	}
	scans := make([]calibrateScan, 0, len(res.Scans))
	for _, s := range res.Scans {
		scans = append(scans, calibrateScan{Operator: s.Operator, Scans: s.Scans, Why: s.Why})
	}
	inputRows := "per operator: numRowsDroppedByWatermark + numRowsUpdated + numDroppedDuplicateRows"
	if res.InputRowsFromBatch {
		inputRows = "the batch's numInputRows (no numDroppedDuplicateRows in the log)"
	}
	ids := res.QueryIDs
	if ids == nil {
		ids = []string{}
	}
	out := struct {
		Files            []string           `json:"files"`
		Query            string             `json:"query"`
		QueryIDs         []string           `json:"queryIds"`
		Operators        []string           `json:"operators"`
		Duration         string             `json:"duration"`
		Provider         string             `json:"provider"`
		ProviderFrom     string             `json:"providerFrom"`
		Scans            []calibrateScan    `json:"scans"`
		InputRows        string             `json:"inputRows"`
		Executors        int                `json:"executors"`
		CoresPerExecutor int                `json:"coresPerExecutor"`
		Slots            int                `json:"slots"`
		Records          int                `json:"records"`
		Batches          int                `json:"batches"`
		Idle             int                `json:"idle"`
		Warmup           int                `json:"warmup"`
		Repeated         int                `json:"repeated"`
		R2               float64            `json:"r2"`
		ResidualsMs      map[string]float64 `json:"residualsMs"`
		Cost             map[string]float64 `json:"cost"`
		Terms            []calibrateTerm    `json:"terms"`
	}{
		Files: files, Query: res.QueryName, QueryIDs: ids, Operators: res.Operators, Duration: res.Duration.String(),
		Provider: res.Provider, ProviderFrom: res.ProviderFrom, Scans: scans, InputRows: inputRows,
		Executors: res.Executors, CoresPerExecutor: res.CoresPerExecutor, Slots: res.Slots,
		Records: res.Records, Batches: res.Batches, Idle: res.Idle, Warmup: res.Warmup, Repeated: res.Repeated,
		R2: res.R2, ResidualsMs: map[string]float64{"p50": res.Residuals.P50, "p90": res.Residuals.P90, "p99": res.Residuals.P99},
		Cost: cost, Terms: terms,
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
