package reports

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
)

// committedDir holds the committed results of experiments/.
const committedDir = "../results"

// TestCommittedResults checks every committed results folder for what a
// design review must be able to defend: no finding computed from the
// drain, no saturated sweep point without its mark, no loss without its
// cause, no false alarm, and the findings before the scenario.
func TestCommittedResults(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(committedDir, "*", "summary.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no committed results under %s (%v)", committedDir, err)
	}
	for _, f := range dirs {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s, ts, err := ReadResults(dir)
			if err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(dir, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			report := string(md)
			res := newResults(s, ts)
			findings := sectionItems(report, "## Findings")
			if len(findings) == 0 {
				t.Fatal("report.md has no findings")
			}
			if i, j := strings.Index(report, "## Findings"), strings.Index(report, "## Scenario as run"); i < 0 || j < 0 || i > j {
				t.Error("the findings do not come before the scenario as run")
			}
			checkNoDrainFinding(t, res, findings)
			checkSaturationMarked(t, res, report, findings)
			checkLossesHaveCauses(t, res, findings)
			checkNoFalseAlarm(t, res, findings)
		})
	}
}

// sectionItems returns the "- " items of a report.md section.
func sectionItems(md, heading string) []string {
	i := strings.Index(md, heading+"\n")
	if i < 0 {
		return nil
	}
	body := md[i+len(heading)+1:]
	if j := strings.Index(body, "\n## "); j >= 0 {
		body = body[:j]
	}
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if item, ok := strings.CutPrefix(l, "- "); ok {
			out = append(out, item)
		}
	}
	return out
}

// checkNoDrainFinding: the summary's traffic-window fields are those of
// the batches of the traffic window (so no finding drawn from them reads
// the drain), and every moment a finding names falls in that window.
func checkNoDrainFinding(t *testing.T, res *results, findings []string) {
	t.Helper()
	w := res.sum.Windows
	if w == nil {
		t.Fatal("summary.json does not say which window each field covers")
	}
	for _, r := range res.runs {
		q := r.sum
		var peak, peakBytes int64
		lag := math.Inf(-1)
		for _, b := range res.traffic(r) {
			peak, peakBytes = max(peak, b.StateRows), max(peakBytes, b.StateBytes)
			if b.WatermarkSet() {
				lag = max(lag, float64(b.ProcessingTime-b.Watermark)/1000)
			}
		}
		if q.PeakStateRows != peak || q.PeakStateBytes != peakBytes {
			t.Errorf("%s @ %s: peak %d rows, %d B; the traffic window's batches peak at %d, %d", q.Name, formatDelay(q.Delay), q.PeakStateRows, q.PeakStateBytes, peak, peakBytes)
		}
		if q.MaxWatermarkLagSeconds != nil && *q.MaxWatermarkLagSeconds != lag {
			t.Errorf("%s @ %s: max lag %vs; the traffic window's batches give %vs", q.Name, formatDelay(q.Delay), *q.MaxWatermarkLagSeconds, lag)
		}
	}
	clock := regexp.MustCompile(`\b(\d\d):(\d\d)(?::(\d\d))?\b`)
	for _, f := range findings {
		for _, m := range clock.FindAllStringSubmatch(f, -1) {
			if sec := atoi(m[1])*3600 + atoi(m[2])*60 + atoi(m[3]); float64(sec) > w.LastTrafficBatch {
				t.Errorf("a finding names %s, in the drain (traffic ends at %s): %s", m[0], formatOffset(w.TrafficEnd), f)
			}
		}
	}
}

// checkSaturationMarked: each query entry's saturated flag is its
// horizon reaching the traffic window; every saturated run is said to be
// in the findings, and in a sweep marked on the horizon chart.
func checkSaturationMarked(t *testing.T, res *results, report string, findings []string) {
	t.Helper()
	for _, r := range res.runs {
		q := r.sum
		h, ok := res.horizonOf(q)
		if want := ok && h >= res.durationSeconds(); q.Saturated != want {
			t.Errorf("%s @ %s: saturated %v; its horizon %v (%v) against %vs of traffic says %v", q.Name, formatDelay(q.Delay), q.Saturated, h, ok, res.durationSeconds(), want)
		}
		if !q.Saturated {
			continue
		}
		if !containsAll(findings, q.Name, "saturated") {
			t.Errorf("%s @ %s is saturated, and no finding says so", q.Name, formatDelay(q.Delay))
		}
		if res.isSweep() && !strings.Contains(report, "Hollow markers: saturated runs") {
			t.Errorf("%s @ %s is saturated, and the horizon chart does not mark it", q.Name, formatDelay(q.Delay))
		}
	}
}

// containsAll reports whether some finding contains every word.
func containsAll(findings []string, words ...string) bool {
	for _, f := range findings {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(f, w)
		}
		if ok {
			return true
		}
	}
	return false
}

// causeNames are the words a finding names a cause of lost events with.
func causeNames() []string { return []string{"bad clock", "as late", "late", "key collisions"} }

// checkLossesHaveCauses: a query that lost events has a finding naming its
// dominant cause, a bad clock with its marker; every finding that reports
// lost events (or a false-drop rate above 0) names a cause.
func checkLossesHaveCauses(t *testing.T, res *results, findings []string) {
	t.Helper()
	c := func(q *metrics.QuerySummary) int64 {
		return q.FalseDropsByCause.Late + q.FalseDropsByCause.BadClock + q.FalseDropsByCause.Collision
	}
	for _, r := range res.runs {
		q := r.sum
		if q.FalseDrops != c(q) {
			t.Errorf("%s: false drops %d != late + bad clock + collision %d", q.Name, q.FalseDrops, c(q))
		}
		if q.FalseDrops == 0 {
			continue
		}
		word := map[string]string{"bad clock": "bad clock", "late": "late", "collision": "key collisions"}[mainCause(q)]
		if !containsAll(findings, q.Name, word) {
			t.Errorf("%s @ %s lost %d events, mostly %s, and no finding names it", q.Name, formatDelay(q.Delay), q.FalseDrops, mainCause(q))
		}
		marker := regexp.MustCompile(`to (the bad clock|bad clocks, the first) at \d\d:\d\d`)
		if mainCause(q) == "bad clock" && !slices.ContainsFunc(findings, func(f string) bool { return strings.Contains(f, q.Name) && marker.MatchString(f) }) {
			t.Errorf("%s: its bad-clock losses name no bad-clock marker", q.Name)
		}
	}
	lossy := regexp.MustCompile(`\blost [0-9,]+ events|false-drop rate (went from|stayed at) [0-9.]*[1-9]`)
	for _, f := range findings {
		if !lossy.MatchString(f) {
			continue
		}
		named := false
		for _, w := range causeNames() {
			named = named || strings.Contains(f, w)
		}
		if !named {
			t.Errorf("a loss without its cause: %s", f)
		}
	}
}

// checkNoFalseAlarm: no "Unexpected" finding on the committed results
// (each would be a documented behaviour misread, or a bug), and no
// "caught all" for copies that were not all dropped as duplicates.
func checkNoFalseAlarm(t *testing.T, res *results, findings []string) {
	t.Helper()
	for _, f := range findings {
		if strings.HasPrefix(f, "Unexpected") {
			t.Errorf("an alarm on a committed result: %s", f)
		}
	}
	for _, r := range res.runs {
		q := r.sum
		if q.DroppedDuplicates < q.TrueDuplicates && containsAll(findings, q.Name, "caught all") {
			for _, f := range findings {
				if strings.Contains(f, "caught all") && strings.Contains(f, q.Name) {
					t.Errorf("%s dropped %d of %d copies as duplicates, yet: %s", q.Name, q.DroppedDuplicates, q.TrueDuplicates, f)
				}
			}
		}
	}
}
