package plan

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

var update = flag.Bool("update", false, "rewrite docs/model-accuracy.md from the committed results")

// The closed-form model against the committed simulations: this test
// writes docs/model-accuracy.md (with -update) from experiments/*.yaml and
// results/*/summary.json, and checks that the committed file is what the
// committed results give, and that every row in the model's scope is
// within the tolerances that file states. Nothing is simulated: the
// simulated values are the committed results'.
//
//	go test ./sim/plan -run TestModelAccuracy -update
const (
	accuracyDoc = "../../docs/model-accuracy.md"
	resultsDir  = "../../results"
	expDir      = "../../experiments"
	// The tolerances of docs/model-accuracy.md, over the rows in scope:
	// peak state rows within ±tolPeak relative; a missed or false-drop
	// rate within ±tolRate relative where the simulation counts at least
	// minCount missed duplicates (or lost events), and within tolAbs
	// (absolute, as a share) everywhere.
	tolPeak  = 0.02
	tolRate  = 0.15
	tolAbs   = 0.01
	minCount = 100
)

// accuracyRow is one query (and delay) of one committed experiment.
type accuracyRow struct {
	experiment, query, delay string
	scope                    string // "" in scope, else why not
	simPeak, modPeak         float64
	simMissed, modMissed     float64
	missedCount              int64
	simFD, modFD             float64
	fdCount                  int64
}

// outOfScope says why the model does not describe a scenario: what it
// ignores (bad clocks, stalls, lost checkpoints); "" when it does.
func outOfScope(sc *scenario.Scenario) string {
	var why []string
	if sc.Workload.FutureTimestamps.Probability > 0 || slices.ContainsFunc(sc.Faults, func(f scenario.Fault) bool { return f.Kind == scenario.BadClock }) {
		why = append(why, "bad clock")
	}
	for _, seg := range sc.Workload.Profile {
		if seg.Rate == 0 {
			why = append(why, "stall")
			break
		}
	}
	if slices.ContainsFunc(sc.Faults, func(f scenario.Fault) bool { return f.Kind == scenario.LoseCheckpoint }) {
		why = append(why, "lost checkpoint")
	}
	if sc.Spark != nil && len(sc.Spark.Downtime) > 0 {
		why = append(why, "downtime")
	}
	return strings.Join(why, ", ")
}

func accuracyRows(t *testing.T) []accuracyRow {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(expDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiments: %v", err)
	}
	var rows []accuracyRow
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if name == "production-day" {
			// A day of 1e9 rows: its results are committed but it is not
			// rerun in the tests (a 1e7-row slice is, in sim/runner).
			continue
		}
		sc, err := scenario.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := metrics.ReadSummary(filepath.Join(resultsDir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sum.Seed != sc.Seed {
			t.Fatalf("%s: results of seed %d, the experiment's is %d", name, sum.Seed, sc.Seed)
		}
		scope := outOfScope(sc)
		for _, q := range sum.Queries {
			if q.Engine != "" && q.Engine != "spark" {
				// The model is Spark's; another engine's query has none.
				continue
			}
			info, err := classify(sc, q.Query)
			if err != nil {
				t.Fatalf("%s/%s: %v", name, q.Name, err)
			}
			r := accuracyRow{experiment: name, query: q.Name, delay: "none", scope: scope,
				simPeak: float64(q.PeakStateRows), simMissed: q.MissedDuplicateRate, missedCount: q.MissedDuplicates,
				simFD: q.FalseDropRate, fdCount: q.FalseDrops}
			d := 0.0
			if q.Delay != nil {
				d = *q.Delay
				r.delay = fmtDelay(secs(d))
			}
			switch {
			case q.Horizon != nil:
				// A horizon by its own name (transformWithState's
				// processing-time TTL): the model is of watermarks.
				r.scope = "processing-time TTL, no watermark"
			case !info.ok:
				r.scope = "several dedups"
			case !info.idKey:
				r.scope = "key without event_id"
			case info.shape == NeverEvicts:
				r.scope = "never evicts"
			}
			if r.scope == "" || r.scope == scope {
				est, ok, err := info.estimate(WorkloadOf(sc), d)
				if err != nil || !ok {
					t.Fatalf("%s/%s: no estimate (%v)", name, q.Name, err)
				}
				r.modPeak, r.modMissed, r.modFD = est.PeakStateRows, est.MissedRate, est.FalseDropRate
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// relErr returns (model - sim) / sim; ok is false when sim is 0.
func relErr(sim, mod float64) (float64, bool) {
	if sim == 0 {
		return 0, false
	}
	return (mod - sim) / sim, true
}

// errText renders the relative error of a row: "+1.2%", "exact" (both
// 0), or the model's value against a simulated 0.
func errText(sim, mod float64) string {
	e, ok := relErr(sim, mod)
	switch {
	case ok:
		return fmt.Sprintf("%+.1f%%", 100*e)
	case mod == 0:
		return "exact"
	}
	return "sim 0"
}

// pctText renders a rate; a model's rate too small to show reads "<0.0001%".
func pctText(v float64) string {
	if v > 0 && v < 1e-6 {
		return "<0.0001%"
	}
	return interval.Percent(v)
}

// pointsText renders a difference of rates in percentage points: "0.9
// percentage points", "1 percentage point".
func pointsText(v float64) string {
	s := strconv.FormatFloat(100*v, 'g', 3, 64) + " percentage point"
	if 100*v != 1 {
		s += "s"
	}
	return s
}

// tolText renders a tolerance or a bound: "2%", "0.5%".
func tolText(v float64) string { return strconv.FormatFloat(100*v, 'g', 3, 64) + "%" }

// accuracyDocText renders docs/model-accuracy.md.
func accuracyDocText(rows []accuracyRow) string {
	var b strings.Builder
	b.WriteString(`# The closed-form model against the simulation

` + "`simulate plan`" + ` prints a closed-form estimate ([sim/plan/model.go](../sim/plan/model.go))
beside its simulated values. This table measures the estimate against every
committed experiment: each query (and each delay of a sweep) of
` + "`experiments/*.yaml`" + `, the simulated values read from the committed
` + "`results/*/summary.json`" + ` (peak state rows over the traffic window, missed
duplicates per true duplicate, false drops per logical event, one seed), the
model's computed from the same scenario at the same delay. The error is
(model − simulation) / simulation.

It is generated, not written: ` + "`go test ./sim/plan -run TestModelAccuracy -update`" + `
rewrites it from the committed results (after ` + "`./experiments/regenerate.sh`" + `),
and ` + "`go test ./sim/plan`" + ` fails when the file and the results disagree, or when a
row in scope leaves the tolerances below.

A row is *in scope* when the model describes its scenario and query: one
dedup operator keyed on ` + "`event_id`" + ` (with or without the event time) that evicts,
steady traffic (no stall), no bad clock, no lost checkpoint, no query downtime. Other rows are
listed with the reason, and the model's values where it gives some, but are
left out of the tolerances.

`)
	var peakMax, rateRelMax, absMax float64
	var peakN, rateN, absN int
	for _, r := range rows {
		if r.scope != "" {
			continue
		}
		if e, ok := relErr(r.simPeak, r.modPeak); ok {
			peakMax, peakN = math.Max(peakMax, math.Abs(e)), peakN+1
		}
		for _, c := range []struct {
			sim, mod float64
			n        int64
		}{{r.simMissed, r.modMissed, r.missedCount}, {r.simFD, r.modFD, r.fdCount}} {
			absMax, absN = math.Max(absMax, math.Abs(c.mod-c.sim)), absN+1
			if e, ok := relErr(c.sim, c.mod); ok && c.n >= minCount {
				rateRelMax, rateN = math.Max(rateRelMax, math.Abs(e)), rateN+1
			}
		}
	}
	fmt.Fprintf(&b, "## What the table shows\n\nOver the %d rows in scope:\n\n", countInScope(rows))
	fmt.Fprintf(&b, "- **peak state rows** (%d rows): the model is within ±%s of the simulation on every row (largest error %.1f%%; the test's tolerance ±%s);\n",
		peakN, tolText(math.Ceil(100*peakMax)/100), 100*peakMax, tolText(tolPeak))
	fmt.Fprintf(&b, "- **missed and false-drop rates**, where the simulation counts at least %d missed duplicates or lost events (%d rates): within ±%s relative (largest error %.1f%%; tolerance ±%s). Below %d the count is too small to measure a relative error against;\n",
		minCount, rateN, tolText(math.Ceil(100*rateRelMax)/100), 100*rateRelMax, tolText(tolRate), minCount)
	fmt.Fprintf(&b, "- **every rate** (%d rates): within %s of the simulated rate (largest difference %.2f points; tolerance %s).\n\n",
		absN, pointsText(math.Ceil(1000*absMax)/1000), 100*absMax, pointsText(tolAbs))
	b.WriteString("The model is an estimate; `simulate plan` decides by simulation.\n\n## The rows\n\n")
	b.WriteString("| experiment | query | delay | peak rows: sim | model | error | missed: sim | model | error | false drops: sim | model | error | scope |\n")
	b.WriteString("|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|\n")
	for _, r := range rows {
		scope := "in scope"
		if r.scope != "" {
			scope = "outside: " + r.scope
		}
		modelled := r.modPeak != 0 || r.modMissed != 0 || r.modFD != 0
		cell := func(sim, mod float64, f func(float64) string) (string, string) {
			if !modelled {
				return "-", "-"
			}
			return f(mod), errText(sim, mod)
		}
		mp, mpe := cell(r.simPeak, r.modPeak, func(v float64) string { return fmtCount(v) })
		mm, mme := cell(r.simMissed, r.modMissed, pctText)
		mf, mfe := cell(r.simFD, r.modFD, pctText)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.experiment, r.query, r.delay, fmtCount(r.simPeak), mp, mpe, pctText(r.simMissed), mm, mme, pctText(r.simFD), mf, mfe, scope)
	}
	return b.String()
}

func countInScope(rows []accuracyRow) int {
	n := 0
	for _, r := range rows {
		if r.scope == "" {
			n++
		}
	}
	return n
}

// TestModelAccuracy checks docs/model-accuracy.md against the committed
// results, and every row in scope against the tolerances it states.
func TestModelAccuracy(t *testing.T) {
	rows := accuracyRows(t)
	text := accuracyDocText(rows)
	if *update {
		if err := os.WriteFile(accuracyDoc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(accuracyDoc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != text {
		t.Errorf("%s is not what the committed results give; rerun go test ./sim/plan -run TestModelAccuracy -update", accuracyDoc)
	}
	if countInScope(rows) < 10 {
		t.Fatalf("only %d rows in scope: the table measures too little", countInScope(rows))
	}
	for _, r := range rows {
		if r.scope != "" {
			continue
		}
		at := r.experiment + "/" + r.query + " @ " + r.delay
		if e, ok := relErr(r.simPeak, r.modPeak); !ok || math.Abs(e) > tolPeak {
			t.Errorf("%s: peak rows %v simulated, %v modelled: off by %s, tolerance ±%s", at, r.simPeak, r.modPeak, errText(r.simPeak, r.modPeak), pctText(tolPeak))
		}
		for _, c := range []struct {
			what     string
			sim, mod float64
			n        int64
		}{{"missed rate", r.simMissed, r.modMissed, r.missedCount}, {"false-drop rate", r.simFD, r.modFD, r.fdCount}} {
			if math.Abs(c.mod-c.sim) > tolAbs {
				t.Errorf("%s: %s %v simulated, %v modelled; tolerance %v absolute", at, c.what, c.sim, c.mod, tolAbs)
			}
			if e, ok := relErr(c.sim, c.mod); ok && c.n >= minCount && math.Abs(e) > tolRate {
				t.Errorf("%s: %s %v simulated (%d), %v modelled: off by %+.1f%%, tolerance ±%s", at, c.what, c.sim, c.n, c.mod, 100*e, pctText(tolRate))
			}
		}
	}
}
