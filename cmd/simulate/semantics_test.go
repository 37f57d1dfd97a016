package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oneLineError checks a rejected command: exit 1, nothing on stdout, one
// line on stderr holding every want.
func oneLineError(t *testing.T, args []string, want ...string) {
	t.Helper()
	code, out, errs := simulate(t, args...)
	if code != 1 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || errs == "" {
		t.Errorf("%.80q: exit %d, stdout %.200q, stderr %.300q; want exit 1, no output, one line", args, code, out, errs)
		return
	}
	for _, w := range want {
		if !strings.Contains(errs, w) {
			t.Errorf("%.80q: stderr %q lacks %q", args, errs, w)
		}
	}
}

// TestExplainRejectsWhatSparkRejects: delays Spark's withWatermark does not
// parse (dedupsim used to accept them), more dedups than dedupsim numbers,
// and a second withWatermark, which Spark fails while the query runs.
func TestExplainRejectsWhatSparkRejects(t *testing.T) {
	for delay, class := range map[string]string{
		"10 s": "INVALID_UNIT", "10 sec": "INVALID_UNIT", "10 min": "INVALID_UNIT", "1 h": "INVALID_UNIT",
		"10ms": "INVALID_VALUE", "10seconds": "INVALID_VALUE", "1.5 minutes": "INVALID_FRACTION",
	} {
		oneLineError(t, []string{"explain", `withWatermark("event_time", "` + delay + `").dropDuplicates(["event_id"])`},
			"CANNOT_PARSE_INTERVAL", class)
	}
	// Parsed, then refused by withWatermark's own checks.
	oneLineError(t, []string{"explain", `withWatermark("t", "-5 seconds").dropDuplicates(["id"])`}, "should not be negative")
	oneLineError(t, []string{"explain", `withWatermark("t", "106751992 days").dropDuplicates(["id"])`}, "long overflow")

	many := `withWatermark("t", "1 minute")` + strings.Repeat(`.dropDuplicates(["id"])`, 256)
	oneLineError(t, []string{"explain", many}, "operator 257 (dropDuplicates): more than 255 dedup operators")

	oneLineError(t, []string{"explain", `withWatermark("t", "1 minute").withWatermark("t", "2 minutes").dropDuplicates(["id"])`},
		"operator 2 (withWatermark): Redefining watermark is disallowed", "first micro-batch it plans with a watermark other than 0")
}

// TestExplainCaseVariantKeys: with columns id and ID, dropDuplicates(["id"])
// keys on both, and explain says so.
func TestExplainCaseVariantKeys(t *testing.T) {
	code, out, errs := simulate(t, "explain", "--columns", "id,ID,t:timestamp", `withWatermark("t", "10 seconds").dropDuplicates(["id"])`)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"dedupe keys=[id, ID]", `case-variant-keys: operator 2 dropDuplicates(["id"]) key "id" matches columns id, ID`} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
}

// TestReplayRejectsSparkInvalidDelay: replay rejects a delay Spark rejects:
// exit 1, one line naming the file and the class, nothing on stdout.
func TestReplayRejectsSparkInvalidDelay(t *testing.T) {
	f := filepath.Join(t.TempDir(), "delay.json")
	os.WriteFile(f, []byte(`{"query": "withWatermark(\"t\", \"10 min\").dropDuplicates([\"id\"])", "steps": [{"addData": [{"id": "a", "t": 1}]}]}`), 0o644)
	oneLineError(t, []string{"replay", f}, "delay.json", "INVALID_UNIT")
}
