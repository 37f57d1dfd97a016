package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
)

// withEngines returns a copy of s whose query i runs on engines[i] (the
// last repeats; "" is Spark) with that engine's store, no state bytes,
// and, for an engine other than Spark, the counters the runner writes.
func withEngines(s *metrics.Summary, engines ...string) *metrics.Summary {
	c := *s
	c.Queries = append([]metrics.QuerySummary(nil), s.Queries...)
	stores := map[string]string{"flink": "heap", "kafka-streams": "rocksdb-window-store", "beam": "direct-runner"}
	for i := range c.Queries {
		q := &c.Queries[i]
		e := engines[min(i, len(engines)-1)]
		if e == "" {
			continue
		}
		// The delay stays: the fixture's timeseries is grouped by it.
		q.Engine, q.Store = e, stores[e]
		q.PeakStateBytes, q.FinalStateBytes = 0, 0
		q.EngineCounters = map[string]int64{"peakPhysicalStateRows": q.PeakStateRows + 7, "finalPhysicalStateRows": 5}
		// What sim/registry writes in summary.json, by hand: the reports
		// know no engine's counters of their own.
		q.EngineCounterInfo = []metrics.CounterInfo{
			{Name: "peakPhysicalStateRows", Header: "peak physical state rows", Explanation: e + " physical rows."},
			{Name: "finalPhysicalStateRows", Header: "final physical state rows", Explanation: e + " physical rows."}}
		switch e {
		case "kafka-streams":
			q.EngineCounters["droppedRecordsTotal"] = 1234
			q.EngineCounterInfo = append(q.EngineCounterInfo, metrics.CounterInfo{Name: "droppedRecordsTotal", Header: "dropped records (Kafka Streams)", Explanation: "dropped records note."})
		case "beam":
			q.EngineCounters["timersFired"] = 4321
			q.EngineCounterInfo = append(q.EngineCounterInfo, metrics.CounterInfo{Name: "timersFired", Header: "timers fired (Beam)", Explanation: "timers note."})
		}
	}
	return &c
}

// mdRows splits a Markdown table's lines into trimmed cells.
func mdRows(md string) [][]string {
	var out [][]string
	for _, line := range strings.Split(strings.TrimSpace(md), "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		out = append(out, cells)
	}
	return out
}

// TestSummaryTableShowsEngines: when some query ran on an engine other
// than Spark, the summary tables gain an engine column after the query's
// name ("spark" for a Spark query), before the store column, and show
// "—" for state bytes the engine's model does not give; when every query
// is Spark's, they have no engine column.
func TestSummaryTableShowsEngines(t *testing.T) {
	s, _ := singleRun(t)
	if len(s.Queries) < 2 {
		t.Fatalf("the fixture has %d queries, want at least 2", len(s.Queries))
	}
	tables := func(s *metrics.Summary) (md, term string) {
		var a, b bytes.Buffer
		if err := SummaryTable(&a, s, true); err != nil {
			t.Fatal(err)
		}
		if err := SummaryTable(&b, s, false); err != nil {
			t.Fatal(err)
		}
		return a.String(), b.String()
	}
	md, term := tables(s)
	if strings.Contains(md, "engine") || strings.Contains(term, "engine") {
		t.Errorf("an engine column with Spark queries only:\n%s%s", md, term)
	}

	mixed := withEngines(s, "", "kafka-streams")
	md, term = tables(mixed)
	rows := mdRows(md)
	if h := rows[0]; len(h) < 3 || h[0] != "query" || h[1] != "engine" || h[2] != "store" {
		t.Fatalf("Markdown header %q, want query, engine, store", rows[0])
	}
	if a := rows[1]; a[1] != ":--" && !strings.HasPrefix(a[1], ":") {
		t.Errorf("the engine column is not left-aligned: %q", a)
	}
	bytesCol := len(rows[0]) - 2
	for i := range mixed.Queries {
		q := &mixed.Queries[i]
		c := rows[i+2]
		if len(c) != len(rows[0]) || c[0] != q.Name || c[1] != engineName(q) || c[2] != q.Store {
			t.Errorf("Markdown row %d: %q, want %s, %s, %s", i, c, q.Name, engineName(q), q.Store)
		}
		wantBytes := c[bytesCol] == "—"
		if wantBytes != (q.Engine != "") {
			t.Errorf("Markdown row %d: peak state bytes %q; want — exactly for the other engine's query", i, c[bytesCol])
		}
	}
	if rows[2][1] != "spark" {
		t.Errorf("a Spark query's engine cell is %q, want spark", rows[2][1])
	}
	tl := strings.Split(term, "\n")
	if f := strings.Fields(tl[0]); len(f) < 3 || f[0] != "query" || f[1] != "engine" || f[2] != "store" {
		t.Fatalf("terminal header %q, want query, engine, store", tl[0])
	}
	if !strings.Contains(term, "kafka-") || !strings.Contains(term, "spark") {
		t.Errorf("terminal table does not name both engines:\n%s", term)
	}
	for _, l := range tl {
		if len([]rune(l)) > TerminalWidth {
			t.Errorf("terminal line wider than %d: %q", TerminalWidth, l)
		}
	}

	// Queries of one other engine on one store: an engine column, no
	// store column.
	one := withEngines(s, "beam")
	md, _ = tables(one)
	if h := mdRows(md)[0]; h[1] != "engine" || h[2] == "store" {
		t.Errorf("beam only: header %q, want an engine column and no store column", h)
	}
}

// TestReportShowsEngineCounters: a report whose queries carry engine
// counters has an Engine counters section in report.md, report.html and
// both contents, with a column per counter the queries carry and "—"
// where an engine has none; the HTML summary's label columns are text.
// A Spark-only report has neither the section nor the engine column.
func TestReportShowsEngineCounters(t *testing.T) {
	s, ts := singleRun(t)
	var svg string
	render := func(s *metrics.Summary) (md, page string) {
		dir := writeResults(t, s, ts)
		if err := Render(dir); err != nil {
			t.Fatal(err)
		}
		rows, err := os.ReadFile(filepath.Join(dir, "state-rows.svg"))
		if err != nil {
			t.Fatal(err)
		}
		svg = string(rows)
		a, err := os.ReadFile(filepath.Join(dir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		return string(a), string(b)
	}
	md, page := render(s)
	for _, x := range []string{md, page} {
		if strings.Contains(x, "Engine counters") || strings.Contains(x, "engine-counters") || strings.Contains(x, ">engine<") {
			t.Errorf("a Spark-only report shows engine counters or an engine column")
		}
	}

	mixed := withEngines(s, "", "kafka-streams", "beam")
	md, page = render(mixed)
	_, sec, ok := strings.Cut(md, "## Engine counters\n\n")
	if !ok {
		t.Fatalf("report.md has no Engine counters section:\n%s", md)
	}
	sec, _, _ = strings.Cut(sec, "\n\n")
	rows := mdRows(sec)
	wantHeader := []string{"query", "engine", "peak state rows", "final state rows", "peak physical state rows",
		"final physical state rows", "dropped records (Kafka Streams)", "timers fired (Beam)"}
	if strings.Join(rows[0], "|") != strings.Join(wantHeader, "|") {
		t.Errorf("counters header %q, want %q", rows[0], wantHeader)
	}
	var others int
	for _, q := range mixed.Queries {
		if q.Engine != "" {
			others++
		}
	}
	if len(rows)-2 != others {
		t.Fatalf("counters table has %d rows, want one per query of another engine (%d):\n%s", len(rows)-2, others, sec)
	}
	for _, r := range rows[2:] {
		switch r[1] {
		case "kafka-streams":
			if r[6] != "1,234" || r[7] != "—" {
				t.Errorf("kafka-streams row %q: want 1,234 dropped records and no timers", r)
			}
		case "beam":
			if r[6] != "—" || r[7] != "4,321" {
				t.Errorf("beam row %q: want no dropped records and 4,321 timers", r)
			}
		default:
			t.Errorf("counters row of engine %q", r[1])
		}
	}
	// The state-bytes chart leaves out the queries without modelled
	// bytes, and says so; the legends name the engines.
	if !strings.Contains(md, "Not drawn: "+mixed.Queries[1].Name) {
		t.Errorf("report.md does not say the state-bytes chart leaves out %s", mixed.Queries[1].Name)
	}
	for _, want := range []string{"kafka-streams dedup", "beam dedup"} {
		if !strings.Contains(svg, want) {
			t.Errorf("state-rows.svg's legend lacks %q", want)
		}
	}
	if !strings.Contains(md, "[Engine counters](#engine-counters)") {
		t.Error("report.md's contents do not link the Engine counters section")
	}
	for _, want := range []string{`<h2 id="engine-counters">Engine counters</h2>`, `<a href="#engine-counters">`,
		`<th class="text">engine</th><th class="text">store</th>`,
		`<td class="text" style="white-space: normal">kafka-streams</td><td class="text" style="white-space: normal">rocksdb-window-store</td>`,
		`<td class="num">1,234</td>`, `<td class="num">4,321</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %s", want)
		}
	}
}

// TestSweepOfOtherEnginesNamesTheirHorizon: in a sweep where a query runs
// on another engine (its own horizon swept), the horizon chart says
// horizon, not watermark delay, and the recommendation for that query
// does not send the reader to simulate plan, which searches Spark's delays
// only; a Spark-only sweep keeps both as they were.
func TestSweepOfOtherEnginesNamesTheirHorizon(t *testing.T) {
	s, ts := sweepRun(t)
	recs := func(s *metrics.Summary) (map[string]string, string) {
		dir := writeResults(t, s, ts)
		res, err := loadResults(dir)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range res.recommendations() {
			name, _, _ := strings.Cut(r, ":")
			out[name] = r
		}
		if err := Render(dir); err != nil {
			t.Fatal(err)
		}
		svg, err := os.ReadFile(filepath.Join(dir, "horizon-tradeoff.svg"))
		if err != nil {
			t.Fatal(err)
		}
		return out, string(svg)
	}
	spark, svg := recs(s)
	if !strings.Contains(svg, "watermark delay (min") || strings.Contains(svg, "what each horizon costs") {
		t.Error("a Spark-only sweep's chart does not speak of watermark delays")
	}
	if r := spark["global"]; !strings.Contains(r, "`simulate plan`") {
		t.Errorf("global on Spark: %q does not point to simulate plan", r)
	}
	// The sweep fixture has five delays of each of three queries: put the
	// last query's five runs on Kafka Streams (no state bytes modelled,
	// engine counters).
	mixed := *s
	mixed.Queries = append([]metrics.QuerySummary(nil), s.Queries...)
	for i := 10; i < 15; i++ {
		q := &mixed.Queries[i]
		q.Engine, q.Store = "kafka-streams", "rocksdb-window-store"
		q.PeakStateBytes, q.FinalStateBytes = 0, 0
		q.EngineCounters = map[string]int64{"droppedRecordsTotal": int64(i)}
	}
	other, svg := recs(&mixed)
	var md bytes.Buffer
	writeEngineCountersMarkdown(&md, &mixed)
	if !strings.Contains(md.String(), "| query | engine | delay | peak state rows |") || !strings.Contains(md.String(), "| global | kafka-streams | 20m |") {
		t.Errorf("the engine counters of a swept query have no delay column:\n%s", md.String())
	}
	if !strings.Contains(svg, "what each horizon costs") || !strings.Contains(svg, "horizon: watermark delay, TTL, window or duration") {
		t.Error("a sweep with a Flink query: the chart still speaks of watermark delays only")
	}
	flink, ok := other["global"]
	if !ok || len(other) != len(spark) {
		t.Fatalf("recommendations %v, want one per query as in %v", other, spark)
	}
	if !strings.Contains(flink, "searches Spark's delays only") || strings.Contains(flink, "finds the delay to the second") {
		t.Errorf("the Kafka Streams query's recommendation sends the reader to plan: %q", flink)
	}
	if strings.Contains(flink, " B)") || strings.Contains(flink, "0 B") {
		t.Errorf("the Kafka Streams query's recommendation quotes state bytes its model does not give: %q", flink)
	}
	if other["within-watermark"] != spark["within-watermark"] {
		t.Errorf("a Spark query's recommendation changed: %q", other["within-watermark"])
	}
}

// TestWrittenDelayOfOtherEngines: the horizon a scenario wrote for a query
// of another engine is its own setting, which the charts over processing
// time pick in a sweep, as they pick a Spark query's written delay.
func TestWrittenDelayOfOtherEngines(t *testing.T) {
	var res results
	if err := json.Unmarshal([]byte(`{"queries": [
		{"name": "spark", "query": "withWatermark(\"event_time\", \"10 minutes\").dropDuplicatesWithinWatermark([\"event_id\"])"},
		{"name": "flink", "engine": "flink", "query": "SELECT 1", "options": {"table.exec.state.ttl": "2 min", "table.exec.mini-batch.enabled": true}},
		{"name": "flink-no-ttl", "engine": "flink", "query": "SELECT 1"},
		{"name": "kstreams", "engine": "kafka-streams", "window": "20m", "time": "stream"},
		{"name": "beam", "engine": "beam", "timeDomain": "event", "duration": "90s"}]}`), &res.sc); err != nil {
		t.Fatal(err)
	}
	// The keys sim/registry names in each summary's horizon, by hand; the
	// Beam query also sets a fixed window, which is not its horizon.
	res.sc.Queries[4].Window = "1m"
	for name, key := range map[string]string{"flink": "options.table.exec.state.ttl", "flink-no-ttl": "options.table.exec.state.ttl", "kstreams": "window", "beam": "duration"} {
		res.runs = append(res.runs, &run{sum: &metrics.QuerySummary{Name: name, Horizon: &metrics.Horizon{Name: "x", Key: key}}})
	}
	for name, want := range map[string]float64{"spark": 600, "flink": 120, "flink-no-ttl": -1, "kstreams": 1200, "beam": 90} {
		got, ok := res.writtenDelay(name)
		if want < 0 && ok || want >= 0 && (!ok || got != want) {
			t.Errorf("%s: written delay %v, %v; want %v", name, got, ok, want)
		}
	}
}

// TestEngineCountersFlinkChangelog: a Flink query's changelog counters
// (the runner's insertsEmitted, updatesEmitted, retractionsEmitted) get
// the headers summary.json's engineCounterInfo gives them, in its order,
// whatever the map's; a counter it does not describe gets its own name,
// after them; the note says each explanation once.
func TestEngineCountersFlinkChangelog(t *testing.T) {
	s, _ := singleRun(t)
	mixed := withEngines(s, "", "flink")
	for i := 1; i < len(mixed.Queries); i++ {
		mixed.Queries[i].EngineCounters = map[string]int64{"retractionsEmitted": 0, "updatesEmitted": 12, "peakPhysicalStateRows": 9,
			"finalPhysicalStateRows": 5, "insertsEmitted": 3456, "numLateRecordsDropped": 7, "aNewCounter": 1}
		mixed.Queries[i].EngineCounterInfo = []metrics.CounterInfo{
			{Name: "peakPhysicalStateRows", Header: "peak physical state rows", Explanation: "Heap note."},
			{Name: "finalPhysicalStateRows", Header: "final physical state rows", Explanation: "Heap note."},
			{Name: "numLateRecordsDropped", Header: "late records dropped (Flink)", Explanation: "Late note."},
			{Name: "insertsEmitted", Header: "+I rows (Flink)", Explanation: "+I, +U and -U rows: retractions are 0."},
			{Name: "updatesEmitted", Header: "+U rows (Flink)", Explanation: "+I, +U and -U rows: retractions are 0."},
			{Name: "retractionsEmitted", Header: "-U rows: retractions (Flink)", Explanation: "+I, +U and -U rows: retractions are 0."}}
	}
	h := engineCountersHeader(mixed)
	want := []string{"query", "engine", "peak state rows", "final state rows", "peak physical state rows", "final physical state rows",
		"late records dropped (Flink)", "+I rows (Flink)", "+U rows (Flink)", "-U rows: retractions (Flink)", "aNewCounter"}
	if strings.Join(h, "|") != strings.Join(want, "|") {
		t.Errorf("header %q, want %q", h, want)
	}
	rows := engineCountersRows(mixed)
	if len(rows) == 0 || strings.Join(rows[0][6:], "|") != "7|3,456|12|0|1" {
		t.Errorf("rows %q, want the counters 7, 3,456, 12, 0, 1 after the state rows", rows)
	}
	note := engineCountersNote(mixed)
	for _, w := range []string{"Heap note.", "Late note.", "+I, +U and -U rows: retractions are 0."} {
		if strings.Count(note, w) != 1 {
			t.Errorf("the note says %q %d times, want once:\n%s", w, strings.Count(note, w), note)
		}
	}
}
