package calibrate

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics/progresslog"

	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// The example (#19): 200 partitions on 1 slot, a true constant
// cost of 150 ms a batch, rowNs 1500 and scanKeyNs 60. The partitions
// never vary, so partitionCommitMs cannot be split from the overhead;
// taking its default (2 ms x 200 partitions = 400 ms) out of every
// duration first asked for a negative overhead and the fit collapsed to
// batchOverheadMs 0, rowNs 0, newKeyNs 0 (R² 0.90). The constant part is
// now fitted as one term.
func TestConstantPartIsOneTerm(t *testing.T) {
	want := sparkmodel.Costs{BatchOverheadMs: 150, RowNs: 1500, ScanKeyNs: 60}
	g := genLog{seed: 7, costs: want, executors: 1, cores: 1, runs: []int{200}, perRun: 800,
		noise: 0.02, dupMax: 0.5, evictMax: 0.05, evictFrom: 100}
	res, err := Fit(g.generate(), Options{Source: "gen"})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Costs()
	if relErr(got.BatchOverheadMs, 150) > 0.1 || relErr(got.RowNs, 1500) > 0.1 || relErr(got.ScanKeyNs, 60) > 0.1 || got.NewKeyNs > 100 {
		t.Errorf("fitted %+v, want about %+v", got, want)
	}
	if k := res.Coefficients[sparkmodel.PartitionCommit]; !k.InOverhead || k.Value != 0 {
		t.Errorf("partitionCommitMs %+v, want 0 and in the overhead", k)
	}
	if y := res.YAML(); !strings.Contains(y, "batchOverheadMs holds the cost of partitionCommitMs too") ||
		!strings.Contains(y, "partitionCommitMs: 0  # in batchOverheadMs: never varies (the log cannot split the constant part)") {
		t.Errorf("YAML does not say so:\n%s", y)
	}
	if res.R2 < 0.95 {
		t.Errorf("R² %.3f", res.R2)
	}
}

// A query without a watermark never scans its store: no scan term, even
// though its state grows; a dedupe operator that never removed a row is
// taken as not scanning unless told; dedupeWithinWatermark always scans.
func TestScanOnlyWhereSparkScans(t *testing.T) {
	truthNoScan := truth()
	truthNoScan.ScanKeyNs = 0
	for _, tc := range []struct {
		name      string
		change    func(*genLog)
		rule      ScanRule
		scans     bool
		why       string
		scanTruth float64
	}{
		{"no watermark", func(g *genLog) { g.opName, g.noWatermark, g.evictMax = "dedupe", true, 0 }, ScanInferred, false, "no watermark in the log: Spark never evicts", 0},
		{"dedupe that removes", func(g *genLog) { g.opName = "dedupe" }, ScanInferred, true, "removed rows in the log: the event time is among its keys", 60},
		{"dedupe that never removes", func(g *genLog) { g.opName, g.evictMax = "dedupe", 0 }, ScanInferred, false, "removed no row in the log: taken as without the event time among its keys (say so if it has it)", 0},
		{"dedupe told to scan", func(g *genLog) { g.opName, g.evictMax = "dedupe", 0 }, ScanAlways, true, "told: dedupe operators scan", 60},
		{"within watermark", func(g *genLog) {}, ScanNever, true, "dedupeWithinWatermark: evicts by expiry every batch", 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := base(3)
			g.runs = []int{64, 200, 400}
			tc.change(&g)
			if tc.scanTruth == 0 {
				g.costs.ScanKeyNs = 0
			}
			res, err := Fit(g.generate(), Options{Source: "gen", Executors: 2, CoresPerExecutor: 4, DedupeScans: tc.rule})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Scans) != 1 || res.Scans[0].Scans != tc.scans || res.Scans[0].Why != tc.why {
				t.Fatalf("scans %+v, want %v because %q", res.Scans, tc.scans, tc.why)
			}
			k := res.Coefficients[sparkmodel.ScanKey]
			if !tc.scans && (k.Identified || k.Reason != "no operator scans its store (see scans)") {
				t.Errorf("scanKeyNs %+v, want not fitted", k)
			}
			want := g.costs
			if !tc.scans {
				want.ScanKeyNs = sparkmodel.DefaultCosts(sparkmodel.HDFS).ScanKeyNs
			}
			checkRecovered(t, res, want)
		})
	}
}

// An operator's input rows are late + new + duplicates, not the batch's
// numInputRows: in a chain the second operator reads only what the first
// emitted. Here the log has two operators; the first drops half its input
// as duplicates, the second sees the rest. Charging each the batch's rows
// would count the second operator's rows twice.
func TestOperatorInputRows(t *testing.T) {
	g := base(5)
	g.noise = 0.01
	recs := g.generate()
	// Split each record's operator into two of a chain: the first (nearer
	// the source, listed last) takes every row; the second reads only
	// the first's new keys, all new to it. Durations are rebuilt so that
	// rowNs is charged per operator input.
	for i := range recs {
		p := &recs[i]
		if !p.DurationMs.AddBatch.OK {
			continue
		}
		op := p.StateOperators[0]
		second := op
		second.NumRowsTotal = op.NumRowsTotal
		second.CustomMetrics = map[string]int64{"numDroppedDuplicateRows": 0}
		p.StateOperators = []progresslog.StateOperator{second, op}
		extra := float64(op.NumRowsUpdated.Value) * (truth().RowNs + truth().NewKeyNs) / 1e6 / 8
		extra += float64(op.NumRowsTotal.Value+op.NumRowsRemoved.Value) * truth().ScanKeyNs / 1e6 / 8
		extra += float64(op.NumRowsRemoved.Value) * truth().RemoveKeyNs / 1e6 / 8
		extra += float64(op.NumShufflePartitions.Value) * truth().PartitionCommitMs / 8
		p.DurationMs.TriggerExecution.Value += int64(extra)
		p.DurationMs.AddBatch.Value += int64(extra)
	}
	res, err := Fit(recs, Options{Source: "gen", Executors: 2, CoresPerExecutor: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.InputRowsFromBatch {
		t.Error("input rows taken from numInputRows")
	}
	if e := relErr(res.Costs().RowNs, truth().RowNs); e > 0.1 {
		t.Errorf("rowNs %.4g, want %.4g", res.Costs().RowNs, truth().RowNs)
	}
}

// A log whose durations are all 0 is refused in one line; an older log
// without numDroppedDuplicateRows falls back to numInputRows and says so.
func TestZeroDurationsAndOldLogs(t *testing.T) {
	g := base(9)
	g.perRun, g.runs = 50, []int{64}
	recs := g.generate()
	zero := make([]progresslog.Progress, len(recs))
	copy(zero, recs)
	for i := range zero {
		zero[i].DurationMs.TriggerExecution.Value = 0
		zero[i].DurationMs.AddBatch.Value = 0
	}
	_, err := Fit(zero, Options{Source: "zero.log"})
	if err == nil || err.Error() != "zero.log: every one of query generated's 49 batches lasted 0 ms (durationMs.triggerExecution): nothing to fit" {
		t.Errorf("got %v", err)
	}
	g.noDups = true
	res, err := Fit(g.generate(), Options{Source: "old.log"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.InputRowsFromBatch || !strings.Contains(res.YAML(), "# input rows: the batch's numInputRows") {
		t.Errorf("no fallback said:\n%s", res.YAML())
	}
}

// The provider comes from the log's custom metrics, and its defaults are
// the ones the unidentified terms keep.
func TestProviderFromTheLog(t *testing.T) {
	g := base(11)
	g.perRun, g.runs, g.allNew = 200, []int{64}, true
	g.rocksdbMetrics = true
	of := func(p string) sparkmodel.Costs {
		c := sparkmodel.DefaultCosts(sparkmodel.HDFS)
		if p == ProviderRocksDB {
			c.NewKeyNs = 4242
		}
		return c
	}
	res, err := Fit(g.generate(), Options{Source: "r.log", Executors: 2, CoresPerExecutor: 4, DefaultsOf: of})
	if err != nil {
		t.Fatal(err)
	}
	if res.Provider != ProviderRocksDB || res.Coefficients[sparkmodel.NewKey].Value != 4242 || !strings.Contains(res.YAML(), "# state store: rocksdb (from the log's rocksdb* custom metrics)") {
		t.Errorf("provider %q (%s), newKeyNs %v\n%s", res.Provider, res.ProviderFrom, res.Coefficients[sparkmodel.NewKey].Value, res.YAML())
	}
	res, err = Fit(g.generate(), Options{Source: "r.log", Executors: 2, CoresPerExecutor: 4, DefaultsOf: of, Provider: ProviderHDFS})
	if err != nil {
		t.Fatal(err)
	}
	if res.Provider != ProviderHDFS || res.ProviderFrom != "as given, although the log's custom metrics are rocksdb's" {
		t.Errorf("provider %q (%s)", res.Provider, res.ProviderFrom)
	}
}

// TestRealStructuredLog reads the excerpt of a real Spark 4.3.0 structured
// driver log (metrics/progresslog/testdata/spark43-structured.log, two
// dedupeWithinWatermark queries, one on each provider): the provider comes
// from each query's custom metrics, and each batch's operator input (late +
// new + duplicates) is exactly its numInputRows, as Spark counted it.
func TestRealStructuredLog(t *testing.T) {
	for _, tc := range []struct{ query, provider, from string }{
		{"hdfs_within", ProviderHDFS, "from the log's loadedMapCache* custom metrics"},
		{"rocksdb_within", ProviderRocksDB, "from the log's rocksdb* custom metrics"},
	} {
		f, err := os.Open(filepath.Join("..", "..", "..", "metrics", "progresslog", "testdata", "spark43-structured.log"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := newCollector(Options{Source: "s", Query: tc.query, IncludeWarmup: true})
		if err != nil {
			t.Fatal(err)
		}
		rd := progresslog.NewReader(f, "s")
		var inputRows float64
		for {
			p, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name == tc.query {
				inputRows += float64(p.NumInputRows.Value)
			}
			if err := c.add(&p); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		q, err := c.pick()
		if err != nil {
			t.Fatal(err)
		}
		if p, from := c.provider(q); p != tc.provider || from != tc.from {
			t.Errorf("%s: provider %s (%s)", tc.query, p, from)
		}
		var rows float64
		for _, b := range q.batches {
			rows += b.rows
		}
		if len(q.batches) != 9 || rows != inputRows || rows != 300 || q.inputRowsUsed {
			t.Errorf("%s: %d batches, operator input %v rows, numInputRows %v", tc.query, len(q.batches), rows, inputRows)
		}
		if s := c.scans(q, true); len(s) != 1 || !s[0].Scans {
			t.Errorf("%s: scans %+v", tc.query, s)
		}
	}
}

// Spark 4.x reports numRowsReadDuringEviction, which says whether a dedupe
// scans even before it removed anything. pyspark 4.3.0 (local[2], 2
// partitions, 5 s delay) reported it 0 for dropDuplicates(["id"]) with and
// without a watermark, and numRowsTotal + numRowsRemoved (9, 9, 15, 15,
// 15, 15) for withWatermark(...).dropDuplicates(["id", "t"]).
func TestScanFromEvictionReads(t *testing.T) {
	for _, reads := range []int64{0, 7} {
		g := base(13)
		g.opName, g.evictMax = "dedupe", 0
		if reads == 0 {
			g.costs.ScanKeyNs = 0
		}
		recs := g.generate()
		for i := range recs {
			for k := range recs[i].StateOperators {
				op := &recs[i].StateOperators[k]
				m := map[string]int64{"numRowsReadDuringEviction": reads}
				for name, v := range op.CustomMetrics {
					m[name] = v
				}
				op.CustomMetrics = m
			}
		}
		res, err := Fit(recs, Options{Source: "gen", Executors: 2, CoresPerExecutor: 4})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Scans[0].Scans; got != (reads > 0) || !strings.Contains(res.Scans[0].Why, "numRowsReadDuringEviction") {
			t.Errorf("reads %d: scans %+v", reads, res.Scans[0])
		}
	}
}
