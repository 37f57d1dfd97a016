package reports

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
)

// curveReview is a small review with a curve: five delays, the state
// tracked at three of them (60s is not), and both providers' executor
// memory there.
func curveReview() *Review {
	d := 120.0
	i := func(v int64) *int64 { return &v }
	return &Review{
		Scenario: "small.yaml", Query: "within", QueryText: `withWatermark("event_time", "2 minutes").dropDuplicatesWithinWatermark(["event_id"])`,
		RecommendedDelaySeconds: &d, Reason: "2m is the smallest delay meeting the targets.", MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001,
		ScenarioRate: 100, PlannedRate: 100, Quantile: 1, TriggerSeconds: 5, Seeds: []ReviewSeed{{Seed: 7, DelaySeconds: &d}},
		Cluster: &ReviewCluster{Partitions: 8, Executors: 2, CoresPerExecutor: 2, Providers: []ReviewProvider{
			{Provider: "hdfs", MemoryKind: "JVM heap", ExecutorPeakMemoryBytes: 5 << 20, ExecutorMemoryBytes: 1 << 30, FitsMemory: true, KeepsUp: true},
			{Provider: "rocksdb", MemoryKind: "native memory", ExecutorPeakMemoryBytes: 3 << 20, ExecutorMemoryBytes: 1 << 30, FitsMemory: true, KeepsUp: true},
		}},
		Curve: []ReviewCurvePoint{
			{DelaySeconds: 10, MissedRate: 0.21, FalseDropRate: 0.013, FalseDropsByCause: metrics.FalseDropCauses{Late: 130}},
			{DelaySeconds: 30, MissedRate: 0.047, FalseDropRate: 0.0012, FalseDropsByCause: metrics.FalseDropCauses{Late: 11, BadClock: 1},
				PeakStateRows: i(3000), PeakStateBytes: i(672000), ExecutorMemoryBytes: []int64{1900000, 1100000}},
			{DelaySeconds: 60, MissedRate: 0.011, FalseDropRate: 0.0003, FalseDropsByCause: metrics.FalseDropCauses{Late: 3}},
			{DelaySeconds: 120, MissedRate: 0.0041, FalseDropRate: 0, PeakStateRows: i(12000), PeakStateBytes: i(2688000), ExecutorMemoryBytes: []int64{5 << 20, 3 << 20}},
			{DelaySeconds: 300, MissedRate: 0, FalseDropRate: 0, PeakStateRows: i(30000), PeakStateBytes: i(6720000), ExecutorMemoryBytes: []int64{13000000, 4000000}},
		},
		CurveMemory: "Estimated from the sizing at the pick.",
		Assumptions: []string{"a test"}, Command: "simulate plan small.yaml --out review",
	}
}

// chromium returns the headless browser's path. Without one the test
// fails when DEDUPSIM_LONG_TESTS=1 (CI installs it: .ci/run) and is
// skipped, saying so, otherwise.
func chromium(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err == nil {
		return p
	}
	if os.Getenv("DEDUPSIM_LONG_TESTS") == "1" {
		t.Fatalf("chromium is not on PATH (%v): CI installs it (apt-get install -y chromium, .ci/run)", err)
	}
	t.Skip("chromium is not on PATH: apt-get install -y chromium to run the review's interactive chart (CI fails without it)")
	return ""
}

// dumpDOM loads url in headless chromium and returns the DOM once its
// scripts ran.
func dumpDOM(t *testing.T, bin, url string) string {
	t.Helper()
	cmd := exec.Command(bin, "--headless=new", "--disable-gpu", "--no-sandbox", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--virtual-time-budget=5000", "--dump-dom", url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v: %s", url, err, stderr.String())
	}
	return string(out)
}

// shown is a readout's text and its data-value.
type shown struct{ text, value string }

func readout(t *testing.T, dom, id string) shown {
	t.Helper()
	m := regexp.MustCompile(`id="` + regexp.QuoteMeta(id) + `" data-value="([^"]*)">([^<]*)<`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no %s readout in the page", id)
	}
	return shown{text: m[2], value: m[1]}
}

// TestReviewCurveInChromium renders a review with a curve and opens its
// report.html in headless Chromium from the file, at two delays given in
// the address (#delay=...): at each, the readouts hold the curve's exact
// values at that delay (rates, peak state, each provider's executor
// memory), the numbers shown differ between the two, the chart is drawn
// (a path per line), and at a delay whose state was not tracked the state
// is shown as interpolated, not as exact.
func TestReviewCurveInChromium(t *testing.T) {
	bin := chromium(t)
	rv := curveReview()
	dir := t.TempDir()
	if err := RenderReview(dir, rv); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "http://") && !strings.Contains(string(page), `"http://www.w3.org/2000/svg"`) || strings.Contains(string(page), "https://") || strings.Contains(string(page), "<script src") {
		t.Errorf("report.html loads something from elsewhere")
	}
	url := "file://" + filepath.Join(dir, "report.html")
	texts := map[string][]string{}
	for _, c := range []struct {
		frag string
		at   int
	}{{"delay=30s", 1}, {"delay=5m", 4}} {
		dom := dumpDOM(t, bin, url+"#"+c.frag)
		p := rv.Curve[c.at]
		want := map[string]float64{"cv-delay": p.DelaySeconds, "cv-missed": p.MissedRate, "cv-fd": p.FalseDropRate,
			"cv-rows": float64(*p.PeakStateRows), "cv-bytes": float64(*p.PeakStateBytes),
			"cv-mem-0": float64(p.ExecutorMemoryBytes[0]), "cv-mem-1": float64(p.ExecutorMemoryBytes[1])}
		for id, w := range want {
			s := readout(t, dom, id)
			v, err := strconv.ParseFloat(s.value, 64)
			if err != nil || v != w {
				t.Errorf("#%s: %s shows %q, value %q; want %v", c.frag, id, s.text, s.value, w)
			}
			if !textShows(id, s.text, w) {
				t.Errorf("#%s: %s shows %q for %v", c.frag, id, s.text, w)
			}
			texts[id] = append(texts[id], s.text)
		}
		if n := strings.Count(dom, "<path "); n < 5 {
			t.Errorf("#%s: %d paths drawn, want the two rates, the state and two providers' memory", c.frag, n)
		}
	}
	for id, ts := range texts {
		if ts[0] == ts[1] {
			t.Errorf("%s shows %q at both delays", id, ts[0])
		}
	}
	dom := dumpDOM(t, bin, url+"#delay=1m")
	if s := readout(t, dom, "cv-missed"); s.value != fmt.Sprint(rv.Curve[2].MissedRate) {
		t.Errorf("#delay=1m: missed %+v, want %v", s, rv.Curve[2].MissedRate)
	}
	if s := readout(t, dom, "cv-rows"); s.value != "" || !strings.HasPrefix(s.text, "about ") {
		t.Errorf("#delay=1m: rows %+v, want an untracked delay's state marked as about, with no exact value", s)
	}
	if !strings.Contains(dom, "interpolated between the tracked delays 30s and 2m") {
		t.Errorf("#delay=1m: the state does not say it is interpolated")
	}
}

// TestReviewScreenshot writes a headless screenshot of a review with a
// curve for a person to look at: DEDUPSIM_SCREENSHOT=FILE.png.
func TestReviewScreenshot(t *testing.T) {
	out := os.Getenv("DEDUPSIM_SCREENSHOT")
	if out == "" {
		t.Skip("a picture to look at: DEDUPSIM_SCREENSHOT=/tmp/review.png")
	}
	bin := chromium(t)
	dir := t.TempDir()
	if err := RenderReview(dir, curveReview()); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless=new", "--disable-gpu", "--no-sandbox", "--user-data-dir="+t.TempDir(), "--hide-scrollbars",
		"--window-size=1200,1800", "--virtual-time-budget=5000", "--screenshot="+out, "file://"+filepath.Join(dir, "report.html")+"#delay=30s")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatal(errors.Join(err, errors.New(string(b))))
	}
}

// textShows reports whether a readout's text shows v: a rate as a
// percentage to three digits, a count in full, a delay as the page writes
// it; sizes only as something.
func textShows(id, text string, v float64) bool {
	switch id {
	case "cv-missed", "cv-fd":
		p, err := strconv.ParseFloat(strings.TrimSuffix(text, "%"), 64)
		return err == nil && strings.HasSuffix(text, "%") && math.Abs(p/100-v) <= 0.005*v
	case "cv-rows":
		return text == fmtInt(v)
	case "cv-delay":
		return text == fmtSecs(v)
	}
	return text != ""
}
