package reports

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/dedupsim/dedupsim/metrics"
)

// sparkFixture is singleRun with a spark: block's results: every query
// split over 8 partitions, the first query's batches growing from 1 s by
// 20 ms a batch (over the 10 s trigger from batch 451, at 4,520 s, to the
// end), the second's state three times as full in its fullest partition
// as in the mean one. withCost false leaves the durations out, as a
// spark: block without a cost block does.
func sparkFixture(t testing.TB, withCost bool) (*metrics.Summary, []metrics.BatchRecord, []byte) {
	t.Helper()
	s, ts := singleRun(t)
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if err := cw.Write(metrics.SparkHeader); err != nil {
		t.Fatal(err)
	}
	var row []string
	k := map[string]int{}
	for _, b := range ts {
		i := k[b.Query]
		k[b.Query]++
		rec := metrics.SparkRecord{Query: b.Query, Delay: b.Delay, BatchID: b.BatchID, Start: b.ProcessingTime * 1000, End: b.ProcessingTime * 1000,
			InputRows: b.InputRows, MeanPartitionRows: float64(b.StateRows) / 8, MaxPartitionRows: (b.StateRows + 7) / 8,
			ExecutorMemoryBytes: b.StateRows * 300}
		if b.Query == s.Queries[1].Name {
			rec.MaxPartitionRows = 3 * b.StateRows / 8
		}
		if withCost {
			rec.DurationMs, rec.HasDuration = 1000+20*float64(i), true
			if b.Query != s.Queries[0].Name {
				rec.DurationMs = 1000
			}
			rec.End += int64(rec.DurationMs * 1000)
		}
		if b.InputRows > 0 {
			rec.ProcessingLagSeconds, rec.HasLag = 10+float64(rec.End-rec.Start)/1e6, true
		}
		row = rec.Record(row)
		if err := cw.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	cw.Flush()
	for i := range s.Queries {
		q := &s.Queries[i]
		sp := &metrics.SparkSummary{Partitions: metrics.PartitionSummary{Count: 8, PeakRowsMean: float64(q.PeakStateRows) / 8, PeakRowsMax: (q.PeakStateRows + 7) / 8},
			ExecutorPeakMemoryBytes: q.PeakStateRows * 300}
		if i == 1 {
			sp.Partitions.PeakRowsMax = 3 * q.PeakStateRows / 8
		}
		if withCost {
			sp.BatchDurationMs = &metrics.DurationPercentiles{P50: 1000, P99: 1000, Max: 1000}
			if i == 0 {
				behind := 4520.0
				sp.FallingBehindSinceSeconds = &behind
				sp.BatchDurationMs = &metrics.DurationPercentiles{P50: 9400, P99: 17600, Max: 17780}
			}
		}
		q.SparkSummary = sp
	}
	return s, ts, buf.Bytes()
}

// writeSparkResults writes the fixture's folder, spark.csv included.
func writeSparkResults(t *testing.T, withCost bool) (string, *metrics.Summary) {
	t.Helper()
	s, ts, sp := sparkFixture(t, withCost)
	dir := writeResults(t, s, ts)
	if err := os.WriteFile(filepath.Join(dir, "spark.csv"), sp, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, s
}

// TestRenderSparkCharts: a results folder with spark.csv gets the spark
// charts, the cluster table and the findings on falling behind and skew;
// without a cost block, no batch-duration chart (there are no durations).
func TestRenderSparkCharts(t *testing.T) {
	dir, s := writeSparkResults(t, true)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	files := readDir(t, dir)
	md, page := string(files["report.md"]), string(files["report.html"])
	for _, ch := range []string{"batch-duration", "processing-lag", "partition-rows"} {
		if len(files[ch+".png"]) == 0 || len(files[ch+".svg"]) == 0 {
			t.Errorf("%s: not drawn", ch)
		}
		if !strings.Contains(md, "("+ch+".png)") {
			t.Errorf("report.md does not show %s", ch)
		}
	}
	// The trigger line is in the legend of the duration chart.
	if !bytes.Contains(files["batch-duration.svg"], []byte("trigger 10s")) {
		t.Error("batch-duration.svg does not name the trigger line")
	}
	for _, doc := range []string{md, page} {
		if !strings.Contains(doc, "Spark cluster (modelled)") {
			t.Error("no cluster section")
		}
	}
	findings := sectionItems(md, "## Findings")
	q0, q1 := s.Queries[0].Name, s.Queries[1].Name
	if !containsAll(findings, q0+" falls behind from 01:15:20") {
		t.Errorf("no finding says %s falls behind from 01:15:20: %q", q0, findings)
	}
	if !containsAll(findings, q1+"'s state is skewed", "3.0 times the mean") {
		t.Errorf("no finding says %s's state is skewed 3.0 times: %q", q1, findings)
	}
	if containsAll(findings, q0+"'s state is skewed") || containsAll(findings, q1+" falls behind") {
		t.Errorf("a spark finding on the wrong query: %q", findings)
	}
	// The table's rows: partitions, durations, falling behind, skew.
	for _, want := range []string{"| " + q0 + " |", "9.4 s / 17.6 s / 17.8 s", "01:15:20", "keeps up", "3.00 ("} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md's cluster table lacks %q", want)
		}
	}

	noCost, _ := writeSparkResults(t, false)
	if err := Render(noCost); err != nil {
		t.Fatal(err)
	}
	files = readDir(t, noCost)
	if _, ok := files["batch-duration.png"]; ok {
		t.Error("a batch-duration chart without durations")
	}
	for _, ch := range []string{"processing-lag", "partition-rows"} {
		if len(files[ch+".png"]) == 0 {
			t.Errorf("%s: not drawn without a cost block", ch)
		}
	}
	if !strings.Contains(string(files["report.md"]), "| instantaneous |") {
		t.Error("the cluster table does not say batches are instantaneous without a cost block")
	}
}

// TestRenderBadSparkFile: a spark.csv that is not the runner's is one
// line naming the folder, the file and the line, and nothing is written.
func TestRenderBadSparkFile(t *testing.T) {
	for _, c := range []struct{ name, content, want string }{
		{"header", "query,delay\n", "spark.csv: header has 2 columns"},
		{"row", strings.Join(metrics.SparkHeader, ",") + "\nq,,0,2026-01-01T00:00:10.000Z,2026-01-01T00:00:10.000Z,,x,1,1,,1,0\n", "spark.csv: line 2: inputRows: want a whole number, got x"},
		{"time", strings.Join(metrics.SparkHeader, ",") + "\nq,,0,yesterday,2026-01-01T00:00:10.000Z,,1,1,1,,1,0\n", "spark.csv: line 2: start: want a time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := writeSparkResults(t, true)
			if err := os.WriteFile(filepath.Join(dir, "spark.csv"), []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			err := Render(dir)
			if err == nil {
				t.Fatal("rendered a folder with a bad spark.csv")
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, dir) || strings.Contains(msg, "\n") {
				t.Errorf("error %q; want one line naming %s and saying %q", msg, dir, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "report.md")); !os.IsNotExist(err) {
				t.Error("report.md written despite the error")
			}
		})
	}
}

// TestCommittedReportsRerenderUnchanged: rendering a committed results
// folder anew, from its results files only, gives its committed report and
// charts byte for byte: what a spark: block adds changes nothing for
// results without one.
func TestCommittedReportsRerenderUnchanged(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(committedDir, "*", "summary.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no committed results under %s (%v)", committedDir, err)
	}
	for _, f := range dirs {
		src := filepath.Dir(f)
		if _, err := os.Stat(filepath.Join(src, "spark.csv")); err == nil {
			continue
		}
		t.Run(filepath.Base(src), func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{"summary.json", "timeseries.csv", "stores.json"} {
				data, err := os.ReadFile(filepath.Join(src, name))
				if name == "stores.json" && errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := Render(dir); err != nil {
				t.Fatal(err)
			}
			got := readDir(t, dir)
			want := readDir(t, src)
			for name, data := range got {
				if !strings.HasSuffix(name, ".md") && !strings.HasSuffix(name, ".html") && !strings.HasSuffix(name, ".svg") && !strings.HasSuffix(name, ".png") {
					continue
				}
				if !bytes.Equal(data, want[name]) {
					t.Errorf("%s differs from the committed one", name)
				}
			}
			for name := range want {
				if strings.HasSuffix(name, ".png") && got[name] == nil {
					t.Errorf("%s committed, not drawn", name)
				}
			}
			for _, ch := range []string{"batch-duration", "processing-lag", "partition-rows"} {
				if slices.Contains(keys(got), ch+".png") {
					t.Errorf("%s drawn for results without spark.csv", ch)
				}
			}
		})
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCommittedSparkReports: every committed result with spark.csv shows
// the spark charts and the cluster table, says when a query falls behind
// and names a skew of 2 or more, and says neither of a query that keeps
// up or splits evenly.
func TestCommittedSparkReports(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(committedDir, "*", "spark.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 6 {
		t.Fatalf("%d committed results with spark.csv; the six spark experiments have one each", len(dirs))
	}
	for _, f := range dirs {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s, _, err := ReadResults(dir)
			if err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(dir, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			report := string(md)
			for _, ch := range []string{"processing-lag", "partition-rows"} {
				if !strings.Contains(report, "("+ch+".png)") {
					t.Errorf("report.md does not show %s", ch)
				}
			}
			if !strings.Contains(report, "## Spark cluster (modelled)") {
				t.Error("no cluster table")
			}
			findings := sectionItems(report, "## Findings")
			for _, q := range s.Queries {
				sp := q.SparkSummary
				if sp == nil {
					t.Fatalf("%s: no spark fields", q.Name)
				}
				if sp.BatchDurationMs != nil && !strings.Contains(report, "(batch-duration.png)") {
					t.Errorf("%s has durations and the report no batch-duration chart", q.Name)
				}
				behind := containsAll(findings, q.Name+" falls behind from")
				if want := sp.FallingBehindSinceSeconds != nil; behind != want {
					t.Errorf("%s: falls behind %v, a finding says so %v", q.Name, want, behind)
				}
				skewed := containsAll(findings, q.Name+"'s state is skewed")
				if want := sp.Partitions.PeakRowsMean > 0 && float64(sp.Partitions.PeakRowsMax) >= skewFinding*sp.Partitions.PeakRowsMean; skewed != want {
					t.Errorf("%s: skew %d / %g, a finding names it %v", q.Name, sp.Partitions.PeakRowsMax, sp.Partitions.PeakRowsMean, skewed)
				}
			}
		})
	}
}

// TestDowntimeOnCharts: a scenario's spark.downtime becomes a "query
// down" span on the charts (the summary's own markers untouched); state
// holds its value across it, as a step at the first batch after it, and
// per-batch lines break there.
func TestDowntimeOnCharts(t *testing.T) {
	s := &metrics.Summary{Format: metrics.ResultsFormat, Scenario: []byte(`{"name":"d","duration":"1h","trigger":"10s","spark":{"downtime":[{"at":"20m","for":"30m"}]}}`),
		Queries: []metrics.QuerySummary{{Name: "q"}}}
	res := newResults(s, nil)
	if len(s.Markers) != 0 {
		t.Errorf("the summary's markers changed: %+v", s.Markers)
	}
	if rows := res.markerRows(); len(rows) != 1 || rows[0].Kind != "query down" || rows[0].At != "00:20" || rows[0].Until != "00:50" {
		t.Errorf("markers %+v; want one query down from 00:20 to 00:50", rows)
	}
	// Batches at 19:50 and 20:00 (minutes), then 50:00 after the downtime.
	xys := plotter.XYs{{X: 19 + 50.0/60, Y: 5}, {X: 20, Y: 6}, {X: 50, Y: 20}, {X: 50 + 10.0/60, Y: 7}}
	held := res.holdOverDowntime(xys, 60)
	want := plotter.XYs{xys[0], xys[1], {X: 50, Y: 6}, xys[2], xys[3]}
	if !slices.Equal(held, want) {
		t.Errorf("held %v, want %v", held, want)
	}
	sec := make(plotter.XYs, len(xys))
	for i, p := range xys {
		sec[i] = plotter.XY{X: p.X * 60, Y: p.Y}
	}
	if segs := res.splitAtDowntime(sec); len(segs) != 2 || len(segs[0]) != 2 || len(segs[1]) != 2 {
		t.Errorf("split into %v; want the two batches before and the two after", segs)
	}
	plain := newResults(&metrics.Summary{Format: metrics.ResultsFormat, Queries: []metrics.QuerySummary{{Name: "q"}}}, nil)
	if got := plain.holdOverDowntime(xys, 60); !slices.Equal(got, xys) {
		t.Errorf("without a downtime the line changed: %v", got)
	}
}
