package calibrate

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/dedupsim/dedupsim/metrics/progresslog"

	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// base is a generated log in which every term is identified: three runs
// (each from a new checkpoint) with 64, 200 and 400 partitions, of 1600
// batches each (4 h 27 min of a 10 s trigger), 5% noise, idle triggers
// and a warm-up. Its load varies as a calibration log's should: up to 2
// million rows a batch, one in ten a no-data batch, 0 to 90% duplicates,
// eviction from the 400th batch of a run on, of up to 8% of the state.
// Telling the cost of a row from that of a new key is the hardest part:
// with 5% noise, newKeyNs has a standard error of about 2.5% here (over
// seeds 1 to 20 its error is at most 5.4%).
func base(seed uint64) genLog {
	return genLog{
		seed: seed, costs: truth(), executors: 2, cores: 4,
		runs: []int{64, 200, 400}, perRun: 1600, noise: 0.05,
		dupMax: 0.9, evictMax: 0.08, evictFrom: 400,
		idleEvery: 7, warmupMs: 4000, otherPhasesMs: 120,
	}
}

// relErr returns |got-want|/want.
func relErr(got, want float64) float64 { return math.Abs(got-want) / want }

// checkRecovered checks that every identified coefficient of res is
// within 10% of want, and returns the largest relative error.
func checkRecovered(t *testing.T, res Result, want sparkmodel.Costs) float64 {
	t.Helper()
	worst := 0.0
	for _, k := range res.Coefficients {
		if !k.Identified {
			continue
		}
		e := relErr(k.Value, want.Get(k.Term))
		worst = max(worst, e)
		if e > 0.10 {
			t.Errorf("%s = %.4g ± %.2g, want %.4g (error %.1f%%)", k.Term, k.Value, k.StdErr, want.Get(k.Term), 100*e)
		}
	}
	return worst
}

func TestRecoversEveryCoefficient(t *testing.T) {
	worst := 0.0
	for seed := uint64(1); seed <= 5; seed++ {
		g := base(seed)
		recs := g.generate()
		res, err := Fit(recs, Options{Source: "gen", Executors: 2, CoresPerExecutor: 4})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, k := range res.Coefficients {
			if !k.Identified || k.AtZero {
				t.Errorf("seed %d: %s identified %v (%s), at zero %v; want identified", seed, k.Term, k.Identified, k.Reason, k.AtZero)
			}
			// The standard error is honest: the truth is within 4 of them.
			if d := math.Abs(k.Value - truth().Get(k.Term)); d > 4*k.StdErr {
				t.Errorf("seed %d: %s = %.4g ± %.2g, %.1f standard errors from %.4g", seed, k.Term, k.Value, k.StdErr, d/k.StdErr, truth().Get(k.Term))
			}
		}
		worst = max(worst, checkRecovered(t, res, truth()))
		// 3 runs of 1600 batches; every 7th is followed by an idle
		// trigger (228 per run); the first of each run is a warm-up.
		if res.Records != 3*(1600+228) || res.Idle != 684 || res.Warmup != 3 || res.Batches != 4797 || res.Repeated != 0 {
			t.Errorf("seed %d: %d records, %d idle, %d warm-up, %d used; want 5484, 684, 3, 4797", seed, res.Records, res.Idle, res.Warmup, res.Batches)
		}
		if res.R2 < 0.9 || res.Residuals.P50 > res.Residuals.P90 || res.Residuals.P90 > res.Residuals.P99 {
			t.Errorf("seed %d: R² %.3f, residuals %+v", seed, res.R2, res.Residuals)
		}
		if res.Slots != 8 || res.QueryName != "generated" || !slices.Equal(res.QueryIDs, []string{"q-1"}) || !slices.Equal(res.Operators, []string{"dedupeWithinWatermark"}) {
			t.Errorf("seed %d: slots %d, query %q %v, operators %v", seed, res.Slots, res.QueryName, res.QueryIDs, res.Operators)
		}
	}
	t.Logf("largest error over 5 seeds: %.2f%%", 100*worst)
}

// Fitting addBatch instead of triggerExecution: the phases outside
// addBatch (120 ms here) leave the overhead.
func TestFitsAddBatch(t *testing.T) {
	res, err := Fit(base(11).generate(), Options{Source: "gen", Executors: 2, CoresPerExecutor: 4, Duration: AddBatch})
	if err != nil {
		t.Fatal(err)
	}
	want := truth()
	want.BatchOverheadMs -= 120
	checkRecovered(t, res, want)
	if res.Duration != AddBatch || !strings.Contains(res.YAML(), "fitting durationMs.addBatch") {
		t.Errorf("duration %v; YAML:\n%s", res.Duration, res.YAML())
	}
}

// A term the log cannot identify keeps its default, says why, and its
// default's share is taken out before the others are fitted.
func TestUnidentifiedTerms(t *testing.T) {
	def := sparkmodel.DefaultCosts(sparkmodel.HDFS)
	slots := 8.0
	cases := []struct {
		name   string
		change func(*genLog)
		term   sparkmodel.Term
		reason string
		// want is what the identified terms recover.
		want func() sparkmodel.Costs
	}{
		{
			name:   "every row a new key",
			change: func(g *genLog) { g.allNew = true },
			term:   sparkmodel.NewKey, reason: "moves with rowNs",
			want: func() sparkmodel.Costs {
				c := truth()
				c.RowNs += c.NewKeyNs - def.NewKeyNs
				return c
			},
		},
		{
			name:   "partitions absent",
			change: func(g *genLog) { g.noPartitions = true; g.runs = []int{200, 200, 200} },
			term:   sparkmodel.PartitionCommit, reason: "absent from the log (numShufflePartitions)",
			want: func() sparkmodel.Costs {
				c := truth()
				c.BatchOverheadMs += c.PartitionCommitMs * 200 / slots
				return c
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := base(21)
			c.change(&g)
			res, err := Fit(g.generate(), Options{Source: "gen", Executors: 2, CoresPerExecutor: 4})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range res.Coefficients {
				if k.Term == c.term {
					if k.Identified || k.Reason != c.reason || k.Value != def.Get(k.Term) || k.StdErr != 0 {
						t.Errorf("%s: identified %v, reason %q, value %v ± %v; want the default %v because %q", k.Term, k.Identified, k.Reason, k.Value, k.StdErr, def.Get(k.Term), c.reason)
					}
				} else if !k.Identified {
					t.Errorf("%s not identified: %s", k.Term, k.Reason)
				}
			}
			checkRecovered(t, res, c.want())
			if y := res.YAML(); !strings.Contains(y, c.term.String()+": "+format(def.Get(c.term), 4)+"  # default: "+c.reason+"\n") {
				t.Errorf("YAML does not show the default:\n%s", y)
			}
		})
	}
}

// A log without eviction: numRowsRemoved always 0.
func TestNoEviction(t *testing.T) {
	recs := base(31).generate()
	for i := range recs {
		op := &recs[i].StateOperators[0]
		op.NumRowsTotal.Value += op.NumRowsRemoved.Value
		op.NumRowsRemoved.Value = 0
	}
	res, err := Fit(recs, Options{Source: "gen", Executors: 2, CoresPerExecutor: 4})
	if err != nil {
		t.Fatal(err)
	}
	if k := res.Coefficients[sparkmodel.RemoveKey]; k.Identified || k.Reason != "always 0 in the log" {
		t.Errorf("removeKeyNs: identified %v, reason %q", k.Identified, k.Reason)
	}
}

func TestTooFewBatches(t *testing.T) {
	g := base(41)
	g.perRun, g.runs, g.idleEvery, g.evictFrom = 11, []int{64}, 0, 0
	recs := g.generate()
	_, err := Fit(recs, Options{Source: "small.log", Executors: 2, CoresPerExecutor: 4})
	want := "small.log: too few batches to fit: 10 usable (of query generated's 11 records: 0 idle triggers, 1 warm-up, 0 repeated); 5 terms to fit need at least 10"
	// With one run, partitions never vary: 5 terms, 10 batches needed,
	// and 10 are usable: it fits. One fewer does not.
	if err != nil {
		t.Fatalf("11 records: %v", err)
	}
	_, err = Fit(recs[:10], Options{Source: "small.log", Executors: 2, CoresPerExecutor: 4})
	want = strings.Replace(strings.Replace(want, "10 usable", "9 usable", 1), "11 records", "10 records", 1)
	var fe *Error
	if err == nil || err.Error() != want || !errors.As(err, &fe) {
		t.Errorf("got %v\nwant %s", err, want)
	}
	_, err = Fit(recs[:1], Options{Source: "small.log"})
	if want := "small.log: no batch to fit (of query generated's 1 records: 0 idle triggers, 1 warm-up, 0 repeated)"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// The first batch of each run is left out unless asked for; a log read
// twice counts each batch once.
func TestWarmupAndRepeats(t *testing.T) {
	g := base(51)
	g.warmupMs = 20000 // JIT, class loading, the first loads of the stores
	recs := g.generate()
	res, err := Fit(append(slices.Clone(recs), recs...), Options{Source: "gen", IncludeWarmup: true})
	if err != nil {
		t.Fatal(err)
	}
	// Idle triggers are not checked for repeats.
	if res.Batches != 4800 || res.Warmup != 0 || res.Repeated != 4800 || res.Idle != 1368 {
		t.Errorf("%d used, %d warm-up, %d repeated, %d idle; want 4800, 0, 4800, 1368", res.Batches, res.Warmup, res.Repeated, res.Idle)
	}
	// The warm-up batches (20 s more) pull the overhead up.
	skip, err := Fit(recs, Options{Source: "gen"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Coefficients[sparkmodel.BatchOverhead].Value < skip.Coefficients[sparkmodel.BatchOverhead].Value+20 || res.R2 >= skip.R2 {
		t.Errorf("overhead %.1f (R² %.3f) with warm-up, %.1f (R² %.3f) without", res.Coefficients[sparkmodel.BatchOverhead].Value, res.R2, skip.Coefficients[sparkmodel.BatchOverhead].Value, skip.R2)
	}
}

func TestQuerySelection(t *testing.T) {
	a := base(61).generate()
	b := base(62).generate()
	for i := range b {
		b[i].ID, b[i].Name = "q-2", "other"
	}
	// An unnamed query is known by its id.
	c := base(63).generate()
	for i := range c {
		c[i].ID, c[i].Name = "q-3", ""
	}
	all := slices.Concat(a, b, c)
	_, err := Fit(all, Options{Source: "two.log"})
	if want := "two.log: the log holds 3 queries: generated, other, q-3; choose one by id or name"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	for _, sel := range []string{"other", "q-2"} {
		res, err := Fit(all, Options{Source: "two.log", Query: sel})
		if err != nil || res.QueryName != "other" || res.Batches != 4797 {
			t.Errorf("query %q: %v, %q, %d batches", sel, err, res.QueryName, res.Batches)
		}
	}
	_, err = Fit(all, Options{Source: "two.log", Query: "nope"})
	if want := "two.log: no progress record of query nope (by id or name)"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	// A query restarted from a new checkpoint has a new id and the same
	// name: its records are one query.
	for i := range b {
		b[i].Name = "generated"
	}
	res, err := Fit(slices.Concat(a, b), Options{Source: "two.log"})
	if err != nil || !slices.Equal(res.QueryIDs, []string{"q-1", "q-2"}) {
		t.Errorf("%v, ids %v", err, res.QueryIDs)
	}
}

func TestRecordProblems(t *testing.T) {
	good := base(71).generate()[:40]
	cases := []struct {
		name   string
		change func(*progresslog.Progress)
		want   string
	}{
		{"no operators", func(p *progresslog.Progress) { p.StateOperators = nil }, ""},
		{"no input rows", func(p *progresslog.Progress) { p.NumInputRows.OK = false }, "in: line 5: numInputRows is absent; the cost model needs it"},
		{"negative", func(p *progresslog.Progress) { p.StateOperators[0].NumRowsTotal.Value = -3 }, "in: line 5: stateOperators[0].numRowsTotal is -3, want a count (0 or more)"},
		{"no trigger duration", func(p *progresslog.Progress) { p.DurationMs.TriggerExecution.OK = false }, "in: line 5: durationMs.triggerExecution is absent; the cost model needs it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs := slices.Clone(good)
			for i := range recs {
				recs[i].StateOperators = slices.Clone(recs[i].StateOperators)
			}
			c.change(&recs[4])
			_, err := Fit(recs, Options{Source: "in"})
			if c.want == "" {
				if err != nil {
					t.Errorf("one batch without operators: %v", err)
				}
				return
			}
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v, want %s", err, c.want)
			}
		})
	}
	stateless := slices.Clone(good)
	for i := range stateless {
		stateless[i].StateOperators = nil
	}
	_, err := Fit(stateless, Options{Source: "in"})
	if want := "in: query generated has no state operators: the cost model describes stateful (dedup) queries"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// Every fixture of progresslog (invented values in the shape of real
// records) fits, or fails with one clear line when it is too short.
func TestRealShapedLogs(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "metrics", "progresslog", "testdata")
	for _, name := range []string{"driver.log", "listener.jsonl", "pretty.json", "recent-progress.json"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		res, err := FitReader(f, Options{Source: name, Executors: 2, CoresPerExecutor: 4})
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		// 27 records: 1 idle trigger, 2 runs.
		if res.Batches != 24 || res.Idle != 1 || res.Warmup != 2 {
			t.Errorf("%s: %d batches, %d idle, %d warm-up; want 24, 1, 2", name, res.Batches, res.Idle, res.Warmup)
		}
		// 200 partitions throughout; 4% duplicates and 0.2% late rows in
		// every batch, so the new keys move with the rows.
		if k := res.Coefficients[sparkmodel.PartitionCommit]; k.Identified || k.Reason != "never varies" || !k.InOverhead || k.Value != 0 {
			t.Errorf("%s: partitionCommitMs %+v", name, k)
		}
		if k := res.Coefficients[sparkmodel.NewKey]; k.Identified || k.Reason != "moves with rowNs" {
			t.Errorf("%s: newKeyNs %+v", name, k)
		}
		if _, err := parseCost(res.YAML()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		// 24 batches with little spread in evictions.
		if k := res.Coefficients[sparkmodel.RemoveKey]; !k.Identified || k.StdErr < k.Value/2 || !strings.Contains(res.YAML(), "\n  removeKeyNs: "+format(k.Value, 4)+"  # ± "+format(k.StdErr, 2)+": the log barely determines it\n") {
			t.Errorf("%s: removeKeyNs %+v in\n%s", name, k, res.YAML())
		}
	}
	for _, name := range []string{"hdfs-pretty.json", "spark22-driver.log"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		_, err = FitReader(f, Options{Source: name})
		f.Close()
		if err == nil || !strings.HasPrefix(err.Error(), name+": no batch to fit (of query ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A log that is not Spark's fails with progresslog's line.
	_, err := FitReader(strings.NewReader("hello\n"), Options{Source: "x.txt"})
	if err == nil || !strings.HasPrefix(err.Error(), "x.txt: line 1: want Spark StreamingQueryProgress JSON") {
		t.Errorf("got %v", err)
	}
}

// parseCost parses a cost block as a scenario loader would.
func parseCost(y string) (map[string]float64, error) {
	var doc struct {
		Cost map[string]float64 `yaml:"cost"`
	}
	if err := yaml.Unmarshal([]byte(y), &doc); err != nil {
		return nil, err
	}
	return doc.Cost, nil
}

func TestYAML(t *testing.T) {
	res, err := Fit(base(81).generate(), Options{Source: "gen.log", Executors: 2, CoresPerExecutor: 4})
	if err != nil {
		t.Fatal(err)
	}
	y := res.YAML()
	got, err := parseCost(y)
	if err != nil {
		t.Fatalf("%v in\n%s", err, y)
	}
	costs := res.Costs()
	if len(got) != int(sparkmodel.NumTerms) {
		t.Errorf("%d keys, want %d:\n%s", len(got), sparkmodel.NumTerms, y)
	}
	for term := range sparkmodel.NumTerms {
		want := costs.Get(term)
		if v, ok := got[term.String()]; !ok || relErr(v, want) > 5e-4 {
			t.Errorf("%s: %v in the YAML, %v fitted", term, v, want)
		}
	}
	for _, s := range []string{"# dedupsim calibrate: 4797 batches of gen.log, query generated, fitting durationMs.triggerExecution\n", "on 8 slots (2 executors x 4 cores)", "\ncost:\n  batchOverheadMs: "} {
		if !strings.Contains(y, s) {
			t.Errorf("YAML lacks %q:\n%s", s, y)
		}
	}
}

func TestFormat(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1503.7: "1504", 0.000123456: "0.0001235", 60: "60", 12345678: "12350000", -2.5: "-2.5"} {
		if got := format(v, 4); got != want {
			t.Errorf("format(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestTermString(t *testing.T) {
	want := []string{"batchOverheadMs", "rowNs", "newKeyNs", "scanKeyNs", "removeKeyNs", "partitionCommitMs"}
	for term := range sparkmodel.NumTerms {
		if term.String() != want[term] {
			t.Errorf("%d: %q", term, term.String())
		}
	}
	if sparkmodel.Term(9).String() != "Term(9)" {
		t.Error(sparkmodel.Term(9).String())
	}
}

// Names from the log or the caller are echoed on one line, escaped and
// cut: a query name cannot break a message or the YAML.
func TestNamesAreEscaped(t *testing.T) {
	recs := base(91).generate()
	evil := "x\ncost:\n  rowNs: 1 " + strings.Repeat("é", 100)
	for i := range recs {
		recs[i].Name = evil
	}
	res, err := Fit(recs, Options{Source: "in\x1b.log"})
	if err != nil {
		t.Fatal(err)
	}
	y := res.YAML()
	got, err := parseCost(y)
	if err != nil || got["rowNs"] != must(format(res.Costs().RowNs, 4)) {
		t.Errorf("%v, rowNs %v in\n%s", err, got["rowNs"], y)
	}
	if !strings.HasPrefix(y, `# dedupsim calibrate: 4797 batches of "in\x1b.log", query "x\ncost:\n  rowNs: 1 éé`) {
		t.Errorf("YAML:\n%s", y)
	}
	_, err = Fit(recs[:3], Options{Source: "in\x1b.log"})
	if err == nil || strings.ContainsAny(err.Error(), "\n\x1b") || !strings.Contains(err.Error(), `é"...'s 3 records`) {
		t.Errorf("got %q", err)
	}
}

func must(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return v
}

// The standard errors say how far a fitted cost may be from the truth:
// over many generated logs, the errors measured in standard errors have
// a root mean square near 1 (1.08 measured for seeds 100 to 129; an
// unweighted fit, whose standard errors ignore that the noise grows with
// the duration, gives 1.53).
func TestStandardErrorsAreHonest(t *testing.T) {
	var sum float64
	n := 0
	for seed := uint64(100); seed < 130; seed++ {
		res, err := Fit(base(seed).generate(), Options{Source: "gen", Executors: 2, CoresPerExecutor: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range res.Coefficients {
			z := (k.Value - truth().Get(k.Term)) / k.StdErr
			sum += z * z
			n++
		}
	}
	if rms := math.Sqrt(sum / float64(n)); rms < 0.8 || rms > 1.3 {
		t.Errorf("root mean square of the errors in standard errors: %.3f, want about 1", rms)
	}
}

func TestOptionsAreChecked(t *testing.T) {
	d := sparkmodel.DefaultCosts(sparkmodel.HDFS)
	d.ScanKeyNs = -1
	_, err := Fit(nil, Options{Source: "in", Executors: -2, CoresPerExecutor: -1, Duration: 5, Defaults: &d})
	want := "in: options: executors -2, want 1 or more (0 means 1); cores per executor -1, want 1 or more (0 means 1); duration 5, want TriggerExecution or AddBatch; default scanKeyNs -1, want a cost (0 or more)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
