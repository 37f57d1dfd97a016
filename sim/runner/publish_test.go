package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReportFailureStillPublishes: a run whose report failed (a render
// error, a timeseries.csv over the report's read-back cap) discarded the
// whole finished simulation, and the message named the internal staging
// folder. The results must be published without the report's partial
// files, with an error that names the results folder only.
func TestReportFailureStillPublishes(t *testing.T) {
	sc := load(t, fast)
	out := filepath.Join(t.TempDir(), "o")
	render := func(dir string) error {
		os.WriteFile(filepath.Join(dir, "report.md"), []byte("half"), 0o644)
		os.MkdirAll(filepath.Join(dir, "charts"), 0o755)
		os.WriteFile(filepath.Join(dir, "charts", "state.png"), []byte("png"), 0o644)
		return fmt.Errorf("%s/timeseries.csv: over the read-back cap", dir)
	}
	res, err := RunTo(context.Background(), sc, Options{}, out, render)
	var re *ReportError
	if !errors.As(err, &re) || res == nil || res.Summary == nil {
		t.Fatalf("want published results and a *ReportError, got %v, %v", res, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "staging") || !strings.Contains(msg, out+"/timeseries.csv: over the read-back cap") {
		t.Fatalf("the message must name %s only: %s", out, msg)
	}
	for _, f := range []string{"summary.json", "timeseries.csv", ".dedupsim-results"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the results were not published: %v", err)
		}
	}
	for _, f := range []string{"report.md", "charts"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("the failed report's %s was published", f)
		}
	}
	// A report stopped by a signal publishes nothing: out stays as it was.
	ctx, cancel := context.WithCancel(context.Background())
	other := filepath.Join(t.TempDir(), "o")
	_, err = RunTo(ctx, sc, Options{}, other, func(string) error { cancel(); return context.Canceled })
	if err == nil {
		t.Fatal("a cancelled report published")
	}
	if _, err := os.Stat(other); err == nil {
		t.Fatal("a cancelled report left a results folder")
	}
}

// TestReportSizeWarning: a 34-day run at a 1 s trigger with 5 queries
// writes more timeseries.csv than the report reads back; the run says so
// before it starts.
func TestReportSizeWarning(t *testing.T) {
	long := load(t, strings.Replace(strings.Replace(fast, "duration: 5m", "duration: 34d", 1), "queries:\n", "queries:\n"+
		`  - {name: a, query: 'dropDuplicates(["event_id"])'}
  - {name: b, query: 'dropDuplicates(["event_id"])'}
  - {name: c, query: 'dropDuplicates(["event_id"])'}
  - {name: d, query: 'dropDuplicates(["event_id"])'}
`, 1))
	if w := ReportSizeWarning(long); !strings.Contains(w, "--no-report") || !strings.Contains(w, "14,688,000 rows") {
		t.Fatalf("34 days at 1 s, 5 queries: %q", w)
	}
	if w := ReportSizeWarning(load(t, fast)); w != "" {
		t.Fatalf("5 minutes: %q", w)
	}
}

// TestReportOnAFullDiskPublishesNothing: a report that failed because the
// disk is full is the disk's failure, not the report's: publishing could
// fail half-way too, so nothing is published.
func TestReportOnAFullDiskPublishesNothing(t *testing.T) {
	sc := load(t, fast)
	out := filepath.Join(t.TempDir(), "o")
	_, err := RunTo(context.Background(), sc, Options{}, out, func(dir string) error {
		return fmt.Errorf("writing report: %w", &os.PathError{Op: "write", Path: dir + "/x.png", Err: syscall.ENOSPC})
	})
	var re *ReportError
	if err == nil || errors.As(err, &re) || strings.Contains(err.Error(), "staging") {
		t.Fatalf("want a plain error naming %s: %v", out, err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a run whose report found the disk full published")
	}
}
