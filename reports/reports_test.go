package reports

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/dedupsim/dedupsim/metrics"
)

// readDir returns every file of dir by name.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		if e.IsDir() {
			continue // progress/, written by the runner, not by Render
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = data
	}
	return out
}

func TestRenderWritesEveryFile(t *testing.T) {
	cases := []struct {
		name    string
		fixture func(testing.TB) (*metrics.Summary, []metrics.BatchRecord)
		charts  []string
	}{
		{"three queries with a stall", singleRun, []string{"state-rows", "state-bytes", "watermark"}},
		{"sweep of three queries by five delays", sweepRun, []string{"state-rows", "state-bytes", "watermark", "horizon-tradeoff"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ts := c.fixture(t)
			dir := writeResults(t, s, ts)
			if err := Render(dir); err != nil {
				t.Fatal(err)
			}
			files := readDir(t, dir)
			want := []string{"report.md", "report.html"}
			for _, ch := range c.charts {
				want = append(want, ch+".png", ch+".svg")
			}
			for _, name := range want {
				if len(files[name]) == 0 {
					t.Errorf("%s: missing or empty", name)
				}
			}
			for _, name := range chartNames() {
				if !slices.Contains(c.charts, name) {
					if _, ok := files[name+".png"]; ok {
						t.Errorf("%s.png written, but the results do not call for it", name)
					}
				}
			}
			for _, ch := range c.charts {
				img, err := png.Decode(bytes.NewReader(files[ch+".png"]))
				if err != nil {
					t.Fatalf("%s.png: %v", ch, err)
				}
				if w := img.Bounds().Dx(); w != 8*pngDPI {
					t.Errorf("%s.png is %d px wide, want %d (8in at %d dpi)", ch, w, 8*pngDPI, pngDPI)
				}
				if !bytes.HasPrefix(files[ch+".svg"], []byte("<?xml")) || !bytes.Contains(files[ch+".svg"], []byte("</svg>")) {
					t.Errorf("%s.svg is not a complete SVG document", ch)
				}
				md := string(files["report.md"])
				if !strings.Contains(md, "("+ch+".png)") {
					t.Errorf("report.md does not show %s.png", ch)
				}
			}
			// Atomic writes leave no temporary files behind.
			for name := range files {
				if strings.Contains(name, ".tmp-") {
					t.Errorf("temporary file %s left behind", name)
				}
			}
		})
	}
}

func TestRenderTwiceIsByteIdentical(t *testing.T) {
	s, ts := sweepRun(t)
	dir := writeResults(t, s, ts)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	first := readDir(t, dir)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	second := readDir(t, dir)
	// And in another folder, from files written anew: nothing may depend
	// on the folder, the clock or map order.
	other := writeResults(t, s, ts)
	if err := Render(other); err != nil {
		t.Fatal(err)
	}
	third := readDir(t, other)
	if len(first) != len(second) || len(first) != len(third) {
		t.Fatalf("file sets differ: %d, %d and %d files", len(first), len(second), len(third))
	}
	for name, data := range first {
		if !bytes.Equal(data, second[name]) {
			t.Errorf("%s differs between two renders of one folder", name)
		}
		if !bytes.Equal(data, third[name]) {
			t.Errorf("%s differs between two folders holding the same results", name)
		}
	}
}

func TestRenderRemovesStaleCharts(t *testing.T) {
	s, ts := sweepRun(t)
	dir := writeResults(t, s, ts)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	// Overwrite the results with a single run, as a rerun without the
	// sweep would.
	s1, ts1 := singleRun(t)
	one := writeResults(t, s1, ts1)
	for _, name := range []string{"summary.json", "timeseries.csv"} {
		data, err := os.ReadFile(filepath.Join(one, name))
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
	for _, ext := range []string{".png", ".svg"} {
		if _, err := os.Stat(filepath.Join(dir, "horizon-tradeoff"+ext)); err == nil {
			t.Errorf("stale horizon-tradeoff%s kept after the results lost their sweep", ext)
		}
	}
}

func TestSummaryTableHasARowPerQuery(t *testing.T) {
	for _, fixture := range []func(testing.TB) (*metrics.Summary, []metrics.BatchRecord){singleRun, sweepRun} {
		s, _ := fixture(t)
		var buf bytes.Buffer
		if err := SummaryTable(&buf, s, true); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != len(s.Queries)+2 {
			t.Fatalf("markdown table has %d lines, want header, separator and %d rows:\n%s", len(lines), len(s.Queries), buf.String())
		}
		if !regexp.MustCompile(`^\|[-:| ]+\|$`).MatchString(lines[1]) {
			t.Errorf("second line %q is not a Markdown separator row", lines[1])
		}
		for i, q := range s.Queries {
			row := lines[i+2]
			cells := strings.Split(strings.Trim(row, "|"), "|")
			if got := strings.TrimSpace(cells[0]); got != q.Name {
				t.Errorf("row %d names %q, want %q", i, got, q.Name)
			}
			if got := strings.TrimSpace(cells[1]); got != formatDelay(q.Delay) {
				t.Errorf("row %d delay %q, want %q", i, got, formatDelay(q.Delay))
			}
			if len(cells) != len(summaryHeader(s)) {
				t.Errorf("row %d has %d cells, want %d", i, len(cells), len(summaryHeader(s)))
			}
		}

		buf.Reset()
		if err := SummaryTable(&buf, s, false); err != nil {
			t.Fatal(err)
		}
		for _, q := range s.Queries {
			if !strings.Contains(buf.String(), q.Name) {
				t.Errorf("terminal table lacks query %s", q.Name)
			}
		}
	}
}

// findingsFixture is a two-query run built to show two lessons: pair-keyed
// emits every re-stamped copy, unbounded keeps every key.
func findingsFixture() *metrics.Summary {
	d := 1200.0
	lag := 1230.0
	return &metrics.Summary{
		Format:   metrics.ResultsFormat,
		Seed:     1,
		Scenario: []byte(`{"name":"lessons","workload":{"retries":{"probability":0.1,"timestamp":"restamp","metadata":["attempt"]}}}`),
		Queries: []metrics.QuerySummary{
			{
				Name: "pair-keyed", Query: `withWatermark("event_time", "20 minutes").dropDuplicates(["event_id", "event_time"])`, Delay: &d,
				InputRows: 11000, LogicalEvents: 10000, TrueDuplicates: 1000, EmittedRows: 11000, MissedDuplicates: 1000,
				PeakStateRows: 2500, FinalStateRows: 2400, PeakStateBytes: 300000, MaxWatermarkLagSeconds: &lag,
			},
			{
				Name: "unbounded", Query: `dropDuplicates(["event_id"])`,
				InputRows: 11000, LogicalEvents: 10000, TrueDuplicates: 1000, EmittedRows: 10000, DroppedDuplicates: 1000,
				PeakStateRows: 10000, FinalStateRows: 10000, PeakStateBytes: 1200000, FinalStateBytes: 1200000,
			},
		},
	}
}

func TestFindingsNameTheRightQuery(t *testing.T) {
	fs := Findings(findingsFixture(), nil)
	find := func(substr string) string {
		for _, f := range fs {
			if strings.Contains(f, substr) {
				return f
			}
		}
		t.Fatalf("no finding mentions %q; findings:\n%s", substr, strings.Join(fs, "\n"))
		return ""
	}
	missed := find("missed 100% of duplicates")
	if !strings.HasPrefix(missed, "pair-keyed ") || strings.Contains(missed, "unbounded") {
		t.Errorf("the missed-every-copy finding should be about pair-keyed alone: %q", missed)
	}
	if !strings.Contains(missed, "1,000") || !strings.Contains(missed, "event_time") {
		t.Errorf("the missed-every-copy finding should give the count and the event_time key: %q", missed)
	}
	kept := find("final state = logical events")
	if !strings.HasPrefix(kept, "unbounded ") || strings.Contains(kept, "pair-keyed") {
		t.Errorf("the kept-every-key finding should be about unbounded alone: %q", kept)
	}
	if !strings.Contains(kept, "10,000") || !strings.Contains(kept, "without a watermark") {
		t.Errorf("the kept-every-key finding should give the count and the missing watermark: %q", kept)
	}
	for _, f := range fs {
		if strings.Count(f, ". ") > 0 && !strings.Contains(f, "e.g. ") {
			t.Errorf("finding is more than one sentence: %q", f)
		}
		if strings.Contains(f, subject) {
			t.Errorf("finding still holds the name placeholder: %q", f)
		}
	}
}

func TestFindingsDoNotClaimUnshownCauses(t *testing.T) {
	s := findingsFixture()
	// Same numbers, but copies keep their timestamp: nothing shows why
	// pair-keyed missed them, so no cause may be given.
	s.Scenario = []byte(`{"name":"lessons","workload":{"retries":{"timestamp":"same","metadata":[]}}}`)
	for _, f := range Findings(s, nil) {
		if strings.HasPrefix(f, "pair-keyed emitted") && strings.Contains(f, ":") {
			t.Errorf("finding gives a cause the numbers do not show: %q", f)
		}
	}
	// A watermarked query that evicted (final state below emitted rows)
	// must not be said to keep every key.
	for _, f := range Findings(findingsFixture(), nil) {
		if strings.HasPrefix(f, "pair-keyed") && strings.Contains(f, "never evicted") {
			t.Errorf("pair-keyed evicted keys, yet: %q", f)
		}
	}
}

func TestFindingsUseTheTimeseries(t *testing.T) {
	s, ts := singleRun(t)
	fs := Findings(s, ts)
	var badClock, stall bool
	for _, f := range fs {
		badClock = badClock || strings.Contains(f, "to the bad clock at 01:20:10 (row 25m in the future), which moved the watermark up to")
		stall = stall || strings.Contains(f, "during the stall from 00:50 to 01:00")
	}
	if !badClock || !stall {
		t.Errorf("want findings placing losses after the bad clock (%v) and the lag in the stall (%v):\n%s", badClock, stall, strings.Join(fs, "\n"))
	}
}

func TestSweepFindings(t *testing.T) {
	s, ts := sweepRun(t)
	fs := Findings(s, ts)
	want := []string{
		"pair-keyed missed every duplicate at every delay",
		"within-watermark neither missed a duplicate nor lost an event from a 20m delay on",
		"global never evicted a key at any delay",
	}
	for _, w := range want {
		if !slices.ContainsFunc(fs, func(f string) bool { return strings.HasPrefix(f, w) }) {
			t.Errorf("no finding starts %q:\n%s", w, strings.Join(fs, "\n"))
		}
	}
	if slices.ContainsFunc(fs, func(f string) bool { return strings.HasPrefix(f, "Unexpected") }) {
		t.Errorf("a monotone sweep was flagged:\n%s", strings.Join(fs, "\n"))
	}
	idx := func(name string) []int {
		var out []int
		for i, q := range s.Queries {
			if q.Name == name {
				out = append(out, i)
			}
		}
		return out
	}
	// More duplicates through at a longer delay from a pair-keyed query
	// with re-stamped copies is its documented behaviour (fewer late
	// drops, more copies emitted): explained, never flagged.
	pk := idx("pair-keyed")
	s.Queries[pk[0]].MissedDuplicates -= 100
	fs = Findings(s, ts)
	if slices.ContainsFunc(fs, func(f string) bool { return strings.HasPrefix(f, "Unexpected") }) ||
		!slices.ContainsFunc(fs, func(f string) bool {
			return strings.HasPrefix(f, "pair-keyed let more duplicates through at 5m") && strings.Contains(f, "as expected")
		}) {
		t.Errorf("pair-keyed's rising missed count was flagged or not explained:\n%s", strings.Join(fs, "\n"))
	}
	s.Queries[pk[0]].MissedDuplicates += 100
	// The same rise at a shorter delay that dropped rows as late has a
	// reason too: copies late there reach the dedup at the longer delay.
	ww := idx("within-watermark")
	a, b := &s.Queries[ww[0]], &s.Queries[ww[len(ww)-1]]
	a.MissedDuplicates, b.MissedDuplicates = b.MissedDuplicates, a.MissedDuplicates
	fs = Findings(s, ts)
	if slices.ContainsFunc(fs, func(f string) bool { return strings.HasPrefix(f, "Unexpected") }) {
		t.Errorf("a rise explained by late drops was flagged:\n%s", strings.Join(fs, "\n"))
	}
	// Without late drops and with copies that share their key, a rise is
	// unexpected, and flagged.
	for _, i := range ww {
		s.Queries[i].DroppedByWatermark = 0
	}
	fs = Findings(s, ts)
	if !slices.ContainsFunc(fs, func(f string) bool {
		return strings.HasPrefix(f, "Unexpected: within-watermark let more duplicates through")
	}) {
		t.Errorf("a rising missed rate was not flagged:\n%s", strings.Join(fs, "\n"))
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	s, ts := singleRun(t)
	dir := writeResults(t, s, ts)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, bad := range []string{`src="http`, `src='http`, "<script", "<link", "@import", "<img", "<iframe"} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html contains %q: it must stand alone", bad)
		}
	}
	// Links only within the page (the contents).
	for _, m := range regexp.MustCompile(`href=("[^"]*"|'[^']*'|[^\s>]*)`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(strings.Trim(m[1], `'"`), "#") {
			t.Errorf("report.html links to %s: it must stand alone", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`url\(([^)]*)\)`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(strings.Trim(m[1], `'"`), "data:") {
			t.Errorf("report.html refers to %s", m[0])
		}
	}
	if n := strings.Count(page, "<svg"); n != 3 {
		t.Errorf("report.html embeds %d charts, want 3", n)
	}
	if strings.Contains(page, "<?xml") {
		t.Error("report.html embeds an XML prolog inside the page")
	}
	for _, q := range s.Queries {
		if !strings.Contains(page, "<h3>"+q.Name+"</h3>") {
			t.Errorf("report.html has no warnings section for %s", q.Name)
		}
	}
	if !strings.Contains(page, "seed 42") || !strings.Contains(page, "mobile-retries") {
		t.Error("report.html does not name the scenario and its seed")
	}
}

func TestReportShowsTheScenarioAsRun(t *testing.T) {
	s, ts := sweepRun(t)
	dir := writeResults(t, s, ts)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"```yaml\n", "name: horizon-tradeoff", "seed: 7", "delay: [1m, 5m, 10m, 20m, 40m]", "timestamp: restamp"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

func TestRenderErrorsNameTheFile(t *testing.T) {
	s, ts := singleRun(t)
	noTimeseries := writeResults(t, s, ts)
	if err := os.Remove(filepath.Join(noTimeseries, "timeseries.csv")); err != nil {
		t.Fatal(err)
	}
	badSummary := writeResults(t, s, ts)
	if err := os.WriteFile(filepath.Join(badSummary, "summary.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ dir, want string }{
		{filepath.Join(t.TempDir(), "nope"), "no such results folder"},
		{t.TempDir(), "summary.json is missing"},
		{noTimeseries, "timeseries.csv is missing"},
		{badSummary, "summary.json"},
	}
	for _, c := range cases {
		err := Render(c.dir)
		if err == nil {
			t.Errorf("Render(%s) succeeded", c.dir)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("Render(%s) = %q, want one line containing %q", c.dir, msg, c.want)
		}
	}
}

func TestHumanFormats(t *testing.T) {
	cases := []struct{ got, want string }{
		{humanNumber(0), "0"},
		{humanNumber(1500), "1.5k"},
		{humanNumber(10000), "10k"},
		{humanNumber(2.5e6), "2.5M"},
		{humanNumber(-10000), "-10k"},
		{formatOffset(2400), "00:40"},
		{formatOffset(4810), "01:20:10"},
		{formatOffset(100000), "27:46:40"},
		{formatSpan(290), "4m50s"},
		{formatSpan(7 * 86400), "7d"},
		{formatSpan(167 * 3600), "6d23h"},
		{percentLabel(1e-4), "0.01%"},
		{percentLabel(0.01), "1%"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
	d := 1200.0
	if got := formatDelay(&d); got != "20m" {
		t.Errorf("formatDelay(1200) = %q, want 20m", got)
	}
	if got := formatDelay(nil); got != "none" {
		t.Errorf("formatDelay(nil) = %q, want none", got)
	}
}

func TestTicksAreRound(t *testing.T) {
	labels := func(ts []string) string { return strings.Join(ts, " ") }
	var got []string
	for _, tk := range (humanTicks{n: 6}).Ticks(0, 540000) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if want := "0 100k 200k 300k 400k 500k"; labels(got) != want {
		t.Errorf("state ticks %q, want %q", labels(got), want)
	}
	got = nil
	for _, tk := range (timeTicks{"h"}).Ticks(0, 72) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if want := "0 12 24 36 48 60 72"; labels(got) != want {
		t.Errorf("hour ticks %q, want %q", labels(got), want)
	}
}

func TestThinKeepsExtremes(t *testing.T) {
	in := make(plotter.XYs, 10000)
	for i := range in {
		in[i] = plotter.XY{X: float64(i), Y: float64(i % 100)}
	}
	in[5000].Y = 1e6
	line := thin(in, 200)
	if len(line) > 210 {
		t.Errorf("thin kept %d points, want about 200", len(line))
	}
	if !slices.ContainsFunc(line, func(p plotter.XY) bool { return p.Y == 1e6 }) {
		t.Error("thin dropped the peak")
	}
	if line[0].X != 0 || line[len(line)-1].X != 9999 {
		t.Errorf("thin lost an end: first x %v, last x %v", line[0].X, line[len(line)-1].X)
	}
	for i := 1; i < len(line); i++ {
		if line[i].X <= line[i-1].X {
			t.Fatalf("thin broke x order at %d", i)
		}
	}
}

func TestRenderSparseResults(t *testing.T) {
	// No scenario, no batches, no markers: the report still says what it
	// can instead of failing.
	s := findingsFixture()
	s.Scenario = nil
	dir := writeResults(t, s, nil)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	files := readDir(t, dir)
	md := string(files["report.md"])
	for _, want := range []string{"The results do not record the scenario.", "The timeseries holds no batches to draw.", "| pair-keyed ", "| unbounded "} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, name := range chartNames() {
		if _, ok := files[name+".png"]; ok {
			t.Errorf("%s.png drawn without batches", name)
		}
	}
}
