package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// knownGaps is steady traffic whose re-stamped retries have known gaps
// (lognormal, median 15s, p99 2m) and short arrival delays.
const knownGaps = `
name: known-gaps
seed: 5
duration: 10m
trigger: 5s
workload:
  rate: 200/s
  arrivalDelay: {dist: exponential, mean: 1s}
  retries:
    probability: 0.1
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 15s, p99: 2m}
    timestamp: restamp
queries:
  - name: within-watermark
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
  - name: pair-keyed
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])
  - name: global
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id"])
  - name: unbounded
    query: dropDuplicates(["event_id"])
`

// uniformGaps is another steady workload: uniform gaps between copies,
// several copies, a longer trigger, an arrival-delay tail past the
// smallest delays.
const uniformGaps = `
name: uniform-gaps
seed: 8
duration: 12m
trigger: 10s
workload:
  rate: 150/s
  ids: int
  arrivalDelay: {dist: lognormal, median: 2s, p99: 20s}
  retries:
    probability: 0.2
    copies: {dist: uniform, min: 1, max: 3}
    delay: {dist: uniform, min: 5s, max: 3m}
    timestamp: restamp
queries:
  - name: within-watermark
    query: withWatermark("event_time", "2 minutes").dropDuplicatesWithinWatermark(["event_id"])
`

func parse(t *testing.T, yaml string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func search(t *testing.T, sc *scenario.Scenario, query string, tg Targets, workers int) *Result {
	t.Helper()
	r, err := Search(context.Background(), sc, query, tg, Options{Workers: workers})
	if err != nil {
		t.Fatalf("plan %s: %v", query, err)
	}
	return r
}

// checkRecommended checks that a plan's delay meets the targets in
// simulation, that the delay one resolution step below fails, that an
// independent run of the scenario at that delay agrees, and that the
// closed-form peak state is within 20% of the simulated one.
func checkRecommended(t *testing.T, sc *scenario.Scenario, r *Result, tg Targets) {
	t.Helper()
	if r.Recommended == nil {
		t.Fatalf("%s: no delay recommended: %s", r.Query, r.Reason)
	}
	d := *r.Recommended
	q := r.Point.Summary
	if q.MissedDuplicateRate > tg.MaxMissedRate || q.FalseDropRate > tg.MaxFalseDropRate {
		t.Errorf("%s at %s: missed %.5f, false drops %.6f; targets %.5f, %.6f", r.Query, d, q.MissedDuplicateRate, q.FalseDropRate, tg.MaxMissedRate, tg.MaxFalseDropRate)
	}
	// Smallest: the largest simulated delay below it fails, within the
	// resolution.
	var below *Point
	for i := range r.Points {
		if r.Points[i].Delay < d {
			below = &r.Points[i]
		}
	}
	if d > time.Second {
		if below == nil || below.Meets {
			t.Errorf("%s: the delay below %s was not simulated or passes: %+v", r.Query, d, below)
		} else if gap := d - below.Delay; gap > max(time.Second, d/100) {
			t.Errorf("%s: bisection stopped %s below %s; want at most 1s or 1%%", r.Query, gap, d)
		}
	}
	// An independent run of the whole scenario at that delay, as
	// `simulate sweep --delay` would run it, gives the same numbers.
	full := *sc
	full.Sweep = &scenario.Sweep{Delay: []interval.Duration{interval.Duration(d)}}
	res, err := runner.Run(context.Background(), &full, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	for _, s := range res.Summary.Queries {
		if s.Name == r.Query && (s.MissedDuplicates != q.MissedDuplicates || s.PeakStateRows != q.PeakStateRows) {
			t.Errorf("%s at %s: an independent run gives missed %d, peak %d; the plan %d, %d", r.Query, d, s.MissedDuplicates, s.PeakStateRows, q.MissedDuplicates, q.PeakStateRows)
		}
	}
	// The closed-form model against the simulation, in steady traffic.
	rows, ok := r.PredictedRows()
	if !ok {
		t.Fatalf("%s: no prediction", r.Query)
	}
	sim := r.SimulatedRows()
	if math.Abs(rows/sim-1) > 0.2 {
		t.Errorf("%s at %s: predicted peak %.0f rows, simulated %.0f: off by %+.1f%%, want within 20%%", r.Query, d, rows, sim, 100*(rows/sim-1))
	}
	b, _ := r.PredictedBytes()
	if math.Abs(b/r.SimulatedBytes()-1) > 0.2 {
		t.Errorf("%s at %s: predicted peak %.0f B, simulated %.0f B", r.Query, d, b, r.SimulatedBytes())
	}
	t.Logf("%s: %s, missed %.4f%% (model %.4f%%), peak rows %.0f (model %.0f, %+.1f%%), %d delays simulated",
		r.Query, d, 100*q.MissedDuplicateRate, 100*r.Model.MissedRate, sim, rows, 100*(rows/sim-1), len(r.Points))
}

// TestPlanWithinWatermarkKnownGaps: on re-stamped retries with known gaps,
// the planned within-watermark delay meets the target in simulation, is
// the smallest to 1s or 1%, does not depend on the number of workers, and
// the model's peak state is within 20% of the simulated one.
func TestPlanWithinWatermarkKnownGaps(t *testing.T) {
	sc := parse(t, knownGaps)
	tg := Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001}
	r1 := search(t, sc, "within-watermark", tg, 1)
	checkRecommended(t, sc, r1, tg)
	r3 := search(t, sc, "within-watermark", tg, 3)
	var a, b bytes.Buffer
	if err := r1.WriteJSON(&a); err != nil {
		t.Fatal(err)
	}
	if err := r3.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("plan differs between 1 and 3 workers:\n%s\n%s", a.String(), b.String())
	}
	if r1.Shape != WithinWatermark || !strings.Contains(r1.Reason, "smallest delay meeting") {
		t.Errorf("shape %v, reason %q", r1.Shape, r1.Reason)
	}
}

// TestPlanUniformGapsAndProductionRate plans another workload for a
// production rate: the search simulates at that rate (the scenario's rate
// multiplied to it), so the recommendation, the rates and the state are
// those of a direct run at that rate, nothing scaled after the fact, and
// the output says so. Before, the state was the scenario's times the
// factor and the rates the scenario's own.
func TestPlanUniformGapsAndProductionRate(t *testing.T) {
	sc := parse(t, uniformGaps)
	tg := Targets{MaxMissedRate: 0.01, MaxFalseDropRate: 0.001, ProductionRate: 300}
	r := search(t, sc, "within-watermark", tg, 0)
	at, err := AtRate(sc, 300)
	if err != nil {
		t.Fatal(err)
	}
	if got := PeakRate(at); got != 300 {
		t.Fatalf("AtRate: peak %v/s, want 300/s", got)
	}
	// Meets the targets, the delay below fails, and a direct run of the
	// scenario at 300/s agrees on every count.
	checkRecommended(t, at, r, tg)
	if r.Scale != 2 || r.ScenarioRate != 150 || r.PlannedRate != 300 {
		t.Errorf("scale %v, scenario rate %v, planned rate %v; want 2, 150, 300", r.Scale, r.ScenarioRate, r.PlannedRate)
	}
	if got, want := r.SimulatedRows(), float64(r.Point.Summary.PeakStateRows); got != want {
		t.Errorf("rows %v, want the simulation's own %v", got, want)
	}
	j := r.JSON()
	if j.Simulated.PeakStateBytes != r.Point.Summary.PeakStateBytes || j.Simulated.MissedRate != r.Point.Summary.MissedDuplicateRate {
		t.Errorf("JSON not the simulation at the production rate: %+v", j.Simulated)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text, "uniform-gaps.yaml", sc.Seed); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if !strings.Contains(out, "simulated at --production-rate 300/s") || strings.Contains(out, "do not depend on the rate") {
		t.Errorf("text does not say the plan was simulated at the production rate:\n%s", out)
	}
}

// TestPlanPairKeyedRestampedUnreachable: a pair-keyed query sees every
// re-stamped copy as a new key, so no delay meets a missed target; the
// plan says so, why, and names dropDuplicatesWithinWatermark.
func TestPlanPairKeyedRestampedUnreachable(t *testing.T) {
	sc := parse(t, knownGaps)
	r := search(t, sc, "pair-keyed", DefaultTargets, 0)
	if r.Recommended != nil {
		t.Fatalf("pair-keyed with re-stamped retries: recommended %s; want none", *r.Recommended)
	}
	for _, want := range []string{"unreachable", "re-stamped", "new key at any delay", `dropDuplicatesWithinWatermark(["event_id"])`} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, r.Reason)
		}
	}
	// The evidence from 1 s to the longest delays: the simulated points
	// of a bisection, or, read off the one-pass curve, every seed's curve
	// (whose picks the direct runs confirm).
	if len(r.Curves) > 0 {
		for _, c := range r.Curves {
			if len(c.Points) < 2 || c.Points[0].DelaySeconds != 1 {
				t.Errorf("seed %d: want the curve from 1s to the longest delays, got %d points", c.Seed, len(c.Points))
			}
			for _, p := range c.Points {
				if p.MissedRate < 0.99 {
					t.Errorf("seed %d, pair-keyed at %gs: missed %.4f; want ~100%%", c.Seed, p.DelaySeconds, p.MissedRate)
				}
			}
		}
	} else if len(r.Points) < 2 || r.Points[0].Delay != time.Second {
		t.Errorf("want evidence from 1s and the longest delays, got %d points", len(r.Points))
	}
	for _, p := range r.Points {
		if p.Summary.MissedDuplicateRate < 0.99 {
			t.Errorf("pair-keyed at %s: missed %.4f; want ~100%%", p.Delay, p.Summary.MissedDuplicateRate)
		}
	}
	if r.Point.Delay != time.Minute {
		t.Errorf("values shown at %s, want the query's own delay 1m", r.Point.Delay)
	}
	if j := r.JSON(); j.RecommendedDelaySeconds != nil || j.Predicted.PeakStateRows == nil {
		t.Errorf("JSON: recommended %v (want null), predicted rows %v (want a number)", j.RecommendedDelaySeconds, j.Predicted.PeakStateRows)
	}
}

// TestPlanBudgetAndUnbounded: a budget below the state the targets need
// fails the plan; queries that never evict cannot meet any budget.
func TestPlanBudgetAndUnbounded(t *testing.T) {
	sc := parse(t, knownGaps)
	tg := Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001, MemoryBudget: 1 << 20}
	r := search(t, sc, "within-watermark", tg, 0)
	if r.Recommended != nil || !r.BudgetExceeded || !strings.Contains(r.Reason, "exceeds the memory budget of 1.00 MiB") {
		t.Errorf("1 MiB budget: recommended %v, exceeded %v, reason %q", r.Recommended, r.BudgetExceeded, r.Reason)
	}
	if !strings.Contains(r.Reason, "largest delay simulated that fits") {
		t.Errorf("reason does not name what fits: %s", r.Reason)
	}

	u := search(t, sc, "unbounded", Targets{MaxMissedRate: 0.001, MaxFalseDropRate: 0.001, MemoryBudget: 1 << 30}, 0)
	if u.Recommended != nil || u.Shape != NeverEvicts || !u.Model.Unbounded {
		t.Errorf("unbounded: recommended %v, shape %v, model unbounded %v", u.Recommended, u.Shape, u.Model.Unbounded)
	}
	for _, want := range []string{"no watermark delay to plan", "without bound", "no memory budget", "dropDuplicatesWithinWatermark"} {
		if !strings.Contains(u.Reason, want) {
			t.Errorf("unbounded reason lacks %q: %s", want, u.Reason)
		}
	}
	if j := u.JSON(); j.Predicted.PeakStateRows != nil || j.Predicted.PeakStateBytes != nil {
		t.Errorf("unbounded: predicted %v, %v; want null (infinite)", j.Predicted.PeakStateRows, j.Predicted.PeakStateBytes)
	}

	g := search(t, sc, "global", Targets{MaxMissedRate: 0.001, MaxFalseDropRate: 0.001, MemoryBudget: 1 << 30}, 0)
	if g.Recommended != nil || !g.BudgetExceeded || !strings.Contains(g.Reason, "never evicts") {
		t.Errorf("global with a budget: recommended %v, exceeded %v, reason %q", g.Recommended, g.BudgetExceeded, g.Reason)
	}
}

// TestInputErrors: bad inputs are errors of one line naming what was
// expected.
func TestInputErrors(t *testing.T) {
	sc := parse(t, knownGaps)
	_, err := Search(context.Background(), sc, "nope", DefaultTargets, Options{})
	var nf *QueryNotFoundError
	if !errors.As(err, &nf) || !slices.Equal(nf.Names, []string{"within-watermark", "pair-keyed", "global", "unbounded"}) {
		t.Errorf("unknown query: %v", err)
	}
	_, err = Search(context.Background(), sc, "pair-keyed", Targets{MaxMissedRate: 2}, Options{})
	if err == nil {
		t.Error("missed rate 2: want an error")
	}
	for _, s := range []string{"", "4 gigs", "-1GiB", "0", "12XB", "GiB", "1e400"} {
		if _, err := ParseSize(s); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSize(%q) = %v; want a one-line error", s, err)
		}
	}
	sizes := map[string]int64{"4GiB": 4 << 30, "512MiB": 512 << 20, "2GB": 2e9, "1.5 KiB": 1536, "1000": 1000, "64Mi": 64 << 20}
	for s, want := range sizes {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for s, want := range map[string]float64{"0.001": 0.001, "0.1%": 0.001, "0": 0, "100%": 1} {
		if got, err := ParseShare(s); err != nil || math.Abs(got-want) > 1e-15 {
			t.Errorf("ParseShare(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "x", "2", "-0.1", "150%", "NaN"} {
		if _, err := ParseShare(s); err == nil {
			t.Errorf("ParseShare(%q): want an error", s)
		}
	}
}

var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  error
)

// TestMain removes the command built for the command-line tests, which
// would otherwise stay in the temporary folder after every run.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// simulateBinary builds cmd/simulate once for the command-line tests.
func simulateBinary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build cmd/simulate")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dedupsim-plan-test-")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		binPath = filepath.Join(dir, "simulate")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/dedupsim/dedupsim/cmd/simulate").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building cmd/simulate: %v", buildErr)
	}
	return binPath
}

// TestCommandLine runs `simulate plan` itself: flag and input errors are
// one line on stderr with exit status 1 and nothing on stdout; --json
// prints exactly the documented keys; an unreachable plan exits 2.
func TestCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/simulate")
	}
	bin := simulateBinary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	small := strings.Replace(knownGaps, "duration: 10m", "duration: 2m", 1)
	if err := os.WriteFile(file, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(small, "rate: 200/s", "rate: fast", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, append([]string{"plan"}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{file}, "--query: required"},
		{[]string{file, "--query", "nope"}, "its queries are: within-watermark, pair-keyed, global, unbounded"},
		{[]string{file, "--query", "pair-keyed", "--max-missed-rate", "lots"}, "--max-missed-rate"},
		{[]string{file, "--query", "pair-keyed", "--max-false-drop-rate", "1.5"}, "--max-false-drop-rate"},
		{[]string{file, "--query", "pair-keyed", "--memory-budget", "4 gigs"}, "--memory-budget"},
		{[]string{file, "--query", "pair-keyed", "--production-rate", "0/s"}, "--production-rate"},
		{[]string{file, "--query", "pair-keyed", "--workers", "-2"}, "--workers"},
		{[]string{file, "--query", "pair-keyed", "--seeds", "0"}, "--seeds"},
		{[]string{file, "--query", "pair-keyed", "--quantile", "1.5"}, "--quantile"},
		{[]string{file, "--query", "pair-keyed", "--bogus"}, "unknown flag"},
		{[]string{filepath.Join(dir, "missing.yaml"), "--query", "x"}, "missing.yaml"},
		{[]string{bad, "--query", "x"}, "workload.rate"},
		{[]string{}, "want one scenario file"},
	}
	for _, c := range cases {
		out, errs, code := run(c.args...)
		if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("plan %v: exit %d, stdout %q, stderr %q; want exit 1, one stderr line containing %q", c.args, code, out, errs, c.want)
		}
	}

	out, _, code := run(file, "--query", "pair-keyed", "--json", "--quiet")
	if code != exitNoPlan {
		t.Errorf("unreachable plan: exit %d, want %d", code, exitNoPlan)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("--json output %q: %v", out, err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var k []string
		for n := range m {
			k = append(k, n)
		}
		slices.Sort(k)
		return k
	}
	if got := keys(m); !slices.Equal(got, []string{"bindingTarget", "curves", "predicted", "query", "reason", "recommendedDelaySeconds", "seeds", "simulated", "spread"}) {
		t.Errorf("--json keys %v", got)
	}
	var seeds []map[string]json.RawMessage
	var spread map[string]map[string]float64
	json.Unmarshal(m["seeds"], &seeds)
	json.Unmarshal(m["spread"], &spread)
	if len(seeds) != 5 || string(seeds[0]["seed"]) != "5" || string(seeds[4]["seed"]) != "9" || string(seeds[0]["delaySeconds"]) != "null" {
		t.Errorf("--json seeds %s: want the 5 seeds 5 to 9 by default, none reaching a delay", m["seeds"])
	}
	for _, k := range []string{"missedRate", "falseDropRate"} {
		if sp, ok := spread[k]; !ok || len(sp) != 3 || sp["min"] > sp["median"] || sp["median"] > sp["max"] {
			t.Errorf("--json spread.%s = %v; want {min, median, max} in order", k, sp)
		}
	}
	if string(m["bindingTarget"]) != "null" {
		t.Errorf("--json bindingTarget %s for an unreachable plan; want null", m["bindingTarget"])
	}
	var pred, sim map[string]json.RawMessage
	json.Unmarshal(m["predicted"], &pred)
	json.Unmarshal(m["simulated"], &sim)
	if got := keys(pred); !slices.Equal(got, []string{"peakStateBytes", "peakStateRows"}) {
		t.Errorf("--json predicted keys %v", got)
	}
	if got := keys(sim); !slices.Equal(got, []string{"falseDropRate", "missedRate", "peakStateBytes", "peakStateRows"}) {
		t.Errorf("--json simulated keys %v", got)
	}
	if string(m["recommendedDelaySeconds"]) != "null" || string(m["query"]) != `"pair-keyed"` {
		t.Errorf("--json: recommendedDelaySeconds %s, query %s", m["recommendedDelaySeconds"], m["query"])
	}
}

// exitNoPlan mirrors cmd/simulate's exit status for a plan without a
// recommended delay.
const exitNoPlan = 2

// TestPlanSeeds: over several seeds the plan recommends the smallest delay
// meeting the targets on every seed (the largest of the seeds' own
// delays, each that of an independent one-seed plan), simulates it on
// every seed and meets the targets on each, gives the spread there and
// the binding target; at a lower quantile, the quantile of the seeds'
// delays. The result does not depend on the number of workers.
func TestPlanSeeds(t *testing.T) {
	sc := parse(t, knownGaps)
	tg := Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001}
	plan := func(seeds, workers int, q float64) *Result {
		r, err := Search(context.Background(), sc, "within-watermark", tg, Options{Workers: workers, Seeds: seeds, Quantile: q})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := plan(3, 0, 0)
	if len(r.Seeds) != 3 || r.Seeds[0].Seed != 5 || r.Seeds[2].Seed != 7 {
		t.Fatalf("seeds %+v; want 5, 6, 7 (the scenario's and the next)", r.Seeds)
	}
	var largest, smallest time.Duration
	for i, sr := range r.Seeds {
		if sr.Delay == nil {
			t.Fatalf("seed %d reaches no delay", sr.Seed)
		}
		largest = max(largest, *sr.Delay)
		if i == 0 || *sr.Delay < smallest {
			smallest = *sr.Delay
		}
		if !sr.At.Meets || sr.At.Delay != *r.Recommended {
			t.Errorf("seed %d at the recommendation: %+v; want it simulated there and meeting the targets", sr.Seed, sr.At.Delay)
		}
	}
	if r.Recommended == nil || *r.Recommended != largest || largest == smallest {
		t.Fatalf("recommended %v; want the largest of the seeds' delays %s (smallest %s; the seeds must differ)", r.Recommended, largest, smallest)
	}
	// A seed's own delay is what a one-seed plan of it gives.
	one := *sc
	one.Seed = r.Seeds[1].Seed
	if solo := search(t, &one, "within-watermark", tg, 0); solo.Recommended == nil || *solo.Recommended != *r.Seeds[1].Delay {
		t.Errorf("seed %d: %v alone, %v within the plan", one.Seed, solo.Recommended, *r.Seeds[1].Delay)
	}
	var rates []float64
	for _, sr := range r.Seeds {
		rates = append(rates, sr.At.Summary.MissedDuplicateRate)
	}
	slices.Sort(rates)
	if sp := r.Spread.MissedRate; sp.Min != rates[0] || sp.Median != rates[1] || sp.Max != rates[2] {
		t.Errorf("missed spread %+v; the seeds give %v", sp, rates)
	}
	// The binding target: the rate target whose own delay is the longer,
	// neither longer than the recommendation.
	if r.MissedAlone == nil || r.FalseDropAlone == nil || *r.MissedAlone > *r.Recommended || *r.FalseDropAlone > *r.Recommended {
		t.Fatalf("targets alone: missed %v, false drops %v; want both at most %s", r.MissedAlone, r.FalseDropAlone, *r.Recommended)
	}
	want := BindMissedRate
	if *r.FalseDropAlone > *r.MissedAlone {
		want = BindFalseDropRate
	}
	if r.Binding != want {
		t.Errorf("binding %q; want %q (missed alone %s, false drops alone %s)", r.Binding, want, *r.MissedAlone, *r.FalseDropAlone)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text, "known-gaps.yaml", sc.Seed); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"per seed     5: ", "min / median / max", "decides: the", "margins: at " + fmtDelay(*r.Recommended) + ", worst seed"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, text.String())
		}
	}
	// The quantile: a third of the seeds takes the smallest delay.
	if lo := plan(3, 0, 1.0/3); lo.Recommended == nil || *lo.Recommended != smallest {
		t.Errorf("quantile 1/3: recommended %v; want the smallest seed delay %s", lo.Recommended, smallest)
	}
	var a, b bytes.Buffer
	if err := plan(3, 1, 0).WriteJSON(&a); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("plan differs between 1 worker and all:\n%s\n%s", a.String(), b.String())
	}
}
