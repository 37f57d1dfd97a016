package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSweepCurve runs `simulate sweep --curve --json`: it prints the
// curves, which equal curves.json in the results folder; at each swept
// delay the curve holds the sweep's own run's rates, false drops by cause
// and peak state (summary.json); between them it has a point every
// second; a swept query the curve does not support is named in one line
// on stderr, and the report's chart says which lines are curves. --json
// without --curve and --curve with --shard are refused in one line.
func TestSweepCurve(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.yaml")
	yaml := smallScenario + "  - name: global\n    query: withWatermark(\"event_time\", \"1 minute\").dropDuplicates([\"event_id\"])\n"
	if err := os.WriteFile(sc, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := simulate(t, "sweep", sc, "--curve", "--json", "--delay", "1s,3s,30s", "--quiet", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "no curve for global") || !strings.Contains(lines[0], "never evicts") {
		t.Errorf("stderr %q: want one line naming global and why", stderr)
	}
	file, err := os.ReadFile(filepath.Join(out, "curves.json"))
	if err != nil {
		t.Fatal(err)
	}
	type point struct {
		DelaySeconds      float64          `json:"delaySeconds"`
		MissedRate        float64          `json:"missedRate"`
		FalseDropRate     float64          `json:"falseDropRate"`
		FalseDropsByCause map[string]int64 `json:"falseDropsByCause"`
		PeakStateRows     *int64           `json:"peakStateRows"`
		PeakStateBytes    *int64           `json:"peakStateBytes"`
	}
	var printed, written struct {
		Format  string `json:"format"`
		Queries []struct {
			Query  string  `json:"query"`
			Points []point `json:"points"`
		} `json:"queries"`
	}
	if err := json.Unmarshal([]byte(stdout), &printed); err != nil {
		t.Fatalf("--json: %v in %q", err, stdout)
	}
	if err := json.Unmarshal(file, &written); err != nil {
		t.Fatal(err)
	}
	if len(written.Queries) != 1 || written.Queries[0].Query != "within" || len(printed.Queries) != 1 ||
		len(printed.Queries[0].Points) != len(written.Queries[0].Points) || printed.Format != "dedupsim-curves/1" {
		t.Fatalf("printed %d curves (format %q), curves.json %d: want within's curve in both", len(printed.Queries), printed.Format, len(written.Queries))
	}
	pts := written.Queries[0].Points
	if len(pts) != 30 {
		t.Errorf("%d points, want one a second from 1s to 30s", len(pts))
	}
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Queries []struct {
			Name                string           `json:"name"`
			Delay               *float64         `json:"delay"`
			MissedDuplicateRate float64          `json:"missedDuplicateRate"`
			FalseDropRate       float64          `json:"falseDropRate"`
			FalseDropsByCause   map[string]int64 `json:"falseDropsByCause"`
			PeakStateRows       int64            `json:"peakStateRows"`
			PeakStateBytes      int64            `json:"peakStateBytes"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	seen, missed := 0, map[float64]bool{}
	for _, q := range sum.Queries {
		if q.Name != "within" {
			continue
		}
		seen++
		missed[q.MissedDuplicateRate] = true
		var p *point
		for i := range pts {
			if pts[i].DelaySeconds == *q.Delay {
				p = &pts[i]
			}
		}
		switch {
		case p == nil:
			t.Errorf("no point at the swept %vs", *q.Delay)
		case p.MissedRate != q.MissedDuplicateRate || p.FalseDropRate != q.FalseDropRate || !sameCauses(p.FalseDropsByCause, q.FalseDropsByCause) ||
			p.PeakStateRows == nil || *p.PeakStateRows != q.PeakStateRows || *p.PeakStateBytes != q.PeakStateBytes:
			t.Errorf("at %vs: curve %+v, run %+v", *q.Delay, *p, q)
		}
	}
	if seen != 3 || len(missed) < 3 {
		t.Errorf("%d runs of within with missed rates %v: want 3 that differ", seen, missed)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "The lines of within are their exact one-pass curves") || !strings.Contains(string(md), "No curve for global") {
		t.Errorf("report.md does not say which lines are curves")
	}
	// The chart's lines go through the curve's 30 points, not the 3 runs.
	svg, err := os.ReadFile(filepath.Join(out, "horizon-tradeoff.svg"))
	if err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, m := range regexp.MustCompile(`<path d="([^"]*)"`).FindAllSubmatch(svg, -1) {
		longest = max(longest, strings.Count(string(m[1]), "L"))
	}
	if longest < 29 {
		t.Errorf("the horizon chart's longest line has %d segments, want the curve's 29", longest)
	}
	for _, args := range [][]string{{"--json"}, {"--curve", "--shard", "0/2"}} {
		o := filepath.Join(dir, "refused")
		code, _, stderr := simulate(t, append([]string{"sweep", sc, "--delay", "2s,7s", "--quiet", "--out", o}, args...)...)
		if code == 0 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q: want one line and a failure", args, code, stderr)
		}
		if _, err := os.Stat(o); err == nil {
			t.Errorf("%v: %s written", args, o)
		}
	}
}

func sameCauses(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
