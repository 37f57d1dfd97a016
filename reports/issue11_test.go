package reports

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupsim/dedupsim/metrics"
)

// TestDrainIsCutAndShaded: the charts over processing time end a short
// tail after the traffic window, not at the last late copy, and say what
// they cut; no finding reads a batch of the drain.
func TestDrainIsCutAndShaded(t *testing.T) {
	s, ts := singleRun(t)
	res := newResults(s, ts)
	runs, _ := res.timelineRuns()
	if !res.drained(runs) {
		t.Fatal("the fixture has no drain")
	}
	end := res.runEnd(runs)
	ax := res.newTimeAxis(runs)
	// 2h of traffic: a tail of 12 minutes (a tenth), inside the 20-minute
	// drain.
	if ax.end != 7200+720 || end <= ax.end {
		t.Errorf("axis ends at %vs (the run at %vs); want 2h + 12m, before the run's end", ax.end, end)
	}
	if ax.drain == nil || ax.drain[0] != 7200 || ax.drain[1] != ax.end {
		t.Errorf("drain span %v; want from the traffic's end to the axis' end", ax.drain)
	}
	for _, want := range []string{"drain", "ended at 02:00", formatOffset(end), "totals only"} {
		if !strings.Contains(ax.note, want) {
			t.Errorf("axis note lacks %q: %s", want, ax.note)
		}
	}
	// Every moment a finding names is in the traffic window.
	clock := regexp.MustCompile(`\b(\d\d):(\d\d)(?::(\d\d))?\b`)
	for _, f := range Findings(s, ts) {
		for _, m := range clock.FindAllStringSubmatch(f, -1) {
			sec := atoi(m[1])*3600 + atoi(m[2])*60 + atoi(m[3])
			if float64(sec) > res.lastTrafficBatch() {
				t.Errorf("finding names %s, in the drain: %s", m[0], f)
			}
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = 10*n + int(c-'0')
	}
	return n
}

// TestSaturatedSweepPoints: a sweep point whose key horizon reaches the
// run is saturated, drawn hollow, named in the chart's note with the run
// length that would resolve it, and qualified in the findings.
func TestSaturatedSweepPoints(t *testing.T) {
	s, ts := sweepRun(t) // a 1h run: within-watermark at 40m keeps keys 80m10s
	res := newResults(s, ts)
	var sat []string
	for _, r := range res.runs {
		if res.saturated(r.sum) {
			sat = append(sat, r.sum.Name+"@"+formatDelay(r.sum.Delay))
		}
	}
	if !slices.Equal(sat, []string{"within-watermark@40m"}) {
		t.Fatalf("saturated runs %v; want within-watermark at 40m alone (2 x 40m + 10s >= 1h; pair-keyed's 40m10s is not)", sat)
	}
	h, ok := newHorizon(res)
	if !ok {
		t.Fatal("no horizon chart")
	}
	for _, se := range h.ss {
		for _, r := range se.pts {
			_, hollow := h.glyph(se, r).Shape.(draw.RingGlyph)
			if want := res.saturated(r.sum) && se.flavour == metrics.FlavourWithin; hollow != want {
				t.Errorf("%s at %s: hollow %v, want %v", se.name, formatDelay(r.sum.Delay), hollow, want)
			}
		}
	}
	note := res.saturationNote(h)
	for _, want := range []string{"Hollow markers", "within-watermark at 40m", "1h traffic window", "A run of 5h"} {
		if !strings.Contains(note, want) {
			t.Errorf("chart note lacks %q: %s", want, note)
		}
	}
	if !slices.ContainsFunc(Findings(s, ts), func(f string) bool {
		return strings.Contains(f, "within-watermark") && strings.Contains(f, "saturated") && strings.Contains(f, "40m")
	}) {
		t.Errorf("no finding says within-watermark is saturated at 40m:\n%s", strings.Join(Findings(s, ts), "\n"))
	}
	if resolvingDuration(4810) != 5*3600 {
		t.Errorf("3 x 80m10s rounds up to %v s, want 5h", resolvingDuration(4810))
	}
}

// TestLossesNameTheirCause: a finding that reports a loss names its
// dominant cause, and for a bad clock the marker that moved the
// watermark; "caught all" is never said of copies mostly dropped late.
func TestLossesNameTheirCause(t *testing.T) {
	q := metrics.QuerySummary{
		Name: "w", Query: `withWatermark("event_time", "10 minutes").dropDuplicatesWithinWatermark(["event_id"])`, Delay: ptr(600),
		InputRows: 2000, LogicalEvents: 1500, TrueDuplicates: 500, EmittedRows: 1000, FalseDrops: 500,
		FalseDropsByCause:  metrics.FalseDropCauses{Late: 100, BadClock: 300, Collision: 100},
		DroppedByWatermark: 900, DroppedDuplicates: 100, PeakStateRows: 10, FinalStateRows: 1,
	}
	s := &metrics.Summary{Format: metrics.ResultsFormat, Queries: []metrics.QuerySummary{q},
		Scenario: []byte(`{"name":"x","start":"1970-01-01T00:00:00Z","duration":"1h","trigger":"10s"}`),
		Markers:  []metrics.Marker{{Kind: "bad-clock", At: 1620, Label: "bad-clock fault: one row stamped 30m ahead"}}}
	ts := []metrics.BatchRecord{
		{Query: "w", Delay: ptr(600), ProcessingTime: 1610_000, Watermark: 1000_000, HasWatermark: true},
		{Query: "w", Delay: ptr(600), ProcessingTime: 1630_000, Watermark: 2820_000, HasWatermark: true},
	}
	fs := Findings(s, ts)
	var loss string
	for _, f := range fs {
		if strings.Contains(f, "lost") {
			loss = f
		}
		if strings.Contains(f, "caught all") {
			t.Errorf("said %q of copies mostly dropped late (100 of 500 caught)", f)
		}
	}
	for _, want := range []string{"lost 500 events", "most (300) to the bad clock at 00:27 (bad-clock fault: one row stamped 30m ahead)",
		"up to 19m50s ahead of processing time", "100 as late", "100 to key collisions"} {
		if !strings.Contains(loss, want) {
			t.Errorf("loss finding lacks %q: %s", want, loss)
		}
	}
	if mainCause(&q) != "bad clock" {
		t.Errorf("main cause %q, want bad clock", mainCause(&q))
	}
}

func ptr(v float64) *float64 { return &v }

// TestOneLookPerAPI: a query's colour and dash come from its flavour
// alone, whatever its place among the queries, and its legend names the
// API.
func TestOneLookPerAPI(t *testing.T) {
	within := &run{sum: &metrics.QuerySummary{Name: "w", Flavour: metrics.FlavourWithin}}
	pair := &run{sum: &metrics.QuerySummary{Name: "p", Flavour: metrics.FlavourPairKeyed}}
	old := &run{sum: &metrics.QuerySummary{Name: "o", Query: `withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])`}}
	a, b := newStyles([]*run{within, pair}), newStyles([]*run{pair, within, old})
	if a[within].Color != b[within].Color || !slices.Equal(a[within].Dashes, b[within].Dashes) {
		t.Errorf("within-watermark drawn %v %v first, %v %v second", a[within].Color, a[within].Dashes, b[within].Color, b[within].Dashes)
	}
	if a[within].Color == a[pair].Color || slices.Equal(a[within].Dashes, a[pair].Dashes) {
		t.Error("two flavours share a colour or a dash")
	}
	// A second query of a flavour keeps the dash, in another shade.
	if b[old].Color == b[within].Color || !slices.Equal(b[old].Dashes, b[within].Dashes) {
		t.Errorf("a second within-watermark query: %v %v against %v %v", b[old].Color, b[old].Dashes, b[within].Color, b[within].Dashes)
	}
	if got := legendName(within, "w"); got != "dropDuplicatesWithinWatermark (w)" {
		t.Errorf("legend %q", got)
	}
}

// TestAxesReadInTheirUnits: a lag of days reads in days, not "-8k"
// minutes; rate panels fit their data and put zeros on a baseline of
// their own.
func TestAxesReadInTheirUnits(t *testing.T) {
	for _, c := range []struct {
		sec  float64
		unit string
	}{{-8000 * 60, "d"}, {-20 * 60, "min"}, {6 * 3600, "h"}, {90 * 60, "min"}} {
		if u := spanUnit(c.sec); u.name != c.unit {
			t.Errorf("a span of %vs reads in %s, want %s", c.sec, u.name, c.unit)
		}
	}
	sc := newLogScale([]float64{0, 0.038, 4.34}, 2)
	if sc.lo != -2 || sc.hi != 1 || !sc.zeros || sc.y(0) >= sc.lo || sc.y(0) <= sc.min() {
		t.Errorf("scale %+v: want the decades of 0.038 to 4.34 (-2 to 1) and a zero baseline below them", sc)
	}
	var labels []string
	for _, tk := range sc.ticks(pctLabel).Ticks(0, 0) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := "0 0.01% 0.1% 1% 10%"; strings.Join(labels, " ") != want {
		t.Errorf("rate ticks %q, want %q (no empty decades below the data)", strings.Join(labels, " "), want)
	}
	if y := newLogScale([]float64{0.22, 29}, 2); y.lo != -1 || math.Abs(y.y(0.22)-math.Log10(0.22)) > 1e-12 {
		t.Errorf("0.22%% on %+v: it must be visible above the axis' floor", y)
	}
}

// TestTerminalTableFits: the terminal table is at most 100 columns wide,
// long names included, and prints counts with thousands separators.
func TestTerminalTableFits(t *testing.T) {
	s, _ := sweepRun(t)
	long := strings.Repeat("very-long-query-name-", 4)
	s.Queries[0].Name = long
	s.Queries[1].MissedDuplicates, s.Queries[1].TrueDuplicates = 1234567, 2345678
	s.Queries[2].FalseDrops, s.Queries[2].LogicalEvents = 1234567, 9876543
	s.Queries[2].FalseDropsByCause = metrics.FalseDropCauses{BadClock: 1234567}
	out := terminalTable(s, TerminalWidth)
	for i, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > TerminalWidth {
			t.Errorf("line %d is %d columns: %q", i, n, l)
		}
	}
	for _, want := range []string{"1,234,567", "(52.6%)", "bad clock", "very-long"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "1234567") {
		t.Errorf("a count without separators:\n%s", out)
	}
}

// TestTableUnlimitedKeepsNamesWhole: with no width limit (stdout not a
// terminal) a long query name stays whole on one line, never wrapped.
func TestTableUnlimitedKeepsNamesWhole(t *testing.T) {
	s, _ := sweepRun(t)
	long := strings.Repeat("very-long-query-name-", 6) + "end"
	s.Queries[0].Name = long
	var b strings.Builder
	if err := SummaryTableWidth(&b, s, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), long) {
		t.Errorf("the name %q is not whole on one line:\n%s", long, b.String())
	}
}
