package export

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/spark/replay"
)

// replayCases are the folders of the replay traces, each with its expected
// output (derived by hand or from Spark's tests, never from dedupsim).
var replayCases = []string{"../replay/testdata/conformance", "../replay/testdata/cases"}

// refusedTraces are the traces that load and run but cannot be exported,
// with a phrase of the reason: a trace not here that loads must export.
var refusedTraces = map[string]string{
	"own-case-variant-columns-key-on-both":                     "differ only in case",
	"own-key-values-compared-by-json-value":                    "several kinds",
	"own-manual-clock-late-filter-lags-when-data-follows-data": "manual-clock",
	"own-restart-before-nodata-batch-runs-none-until-data":     "manual-clock",
	// transformWithState's TTL reads the wall clock: its traces need a
	// manual clock, which a file source cannot reproduce (the real-Spark
	// suite drives them with Trigger.Once at the trace's times instead).
	"own-tws-no-ttl-keeps-every-key":           "manual-clock",
	"own-tws-ttl-boundary-and-no-data-cleanup": "manual-clock",
	"own-tws-ttl-expires-in-processing-time":   "manual-clock",
	// An event-time transformWithState trace runs on Spark through
	// oracles/spark/traces.py, whose processor job.py does not carry.
	"own-tws-timer-fires-at-watermark": "oracles/spark/traces.py",
	"own-tws-timer-rows-before-timers": "oracles/spark/traces.py",
}

// expectedLine is the part of a trace's expected output line, or of a
// predicted record, that both hold.
type expectedLine struct {
	BatchID      *int64 `json:"batchId"`
	NumInputRows *int64 `json:"numInputRows"`
	EventTime    *struct {
		Watermark string `json:"watermark"`
	} `json:"eventTime"`
	StateOperators []map[string]any `json:"stateOperators"`
	Error          bool             `json:"error"`
}

func readLines(t *testing.T, path string) []expectedLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []expectedLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l expectedLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTracesPredictTheirExpectedOutput exports every replay trace of the
// repository, in both formats, and checks that the batches predicted for
// Spark are the trace's own expected output: the same batches, and for
// each its batchId, numInputRows, watermark (present exactly when
// expected) and every state operator's name and counters. Traces expected
// to be rejected must be refused, and the traces that load but cannot be
// driven with files are exactly refusedTraces.
func TestTracesPredictTheirExpectedOutput(t *testing.T) {
	exported := 0
	for _, dir := range replayCases {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no traces in %s", dir)
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".json")
			want := readLines(t, strings.TrimSuffix(f, ".json")+".expected.jsonl")
			for _, format := range []Format{Parquet, JSON} {
				out := filepath.Join(t.TempDir(), "out")
				tr, err := replay.LoadFile(f)
				if err == nil {
					_, err = Trace(context.Background(), tr, f, out, Options{Format: format})
				}
				isError := len(want) == 1 && want[0].Error
				reason, refused := refusedTraces[name]
				switch {
				case isError || refused:
					if err == nil {
						t.Errorf("%s: exported, want it refused", name)
						continue
					}
					if refused && !strings.Contains(err.Error(), reason) {
						t.Errorf("%s: refused with %q, want the reason %q", name, err, reason)
					}
					if strings.Contains(err.Error(), "\n") {
						t.Errorf("%s: the refusal is not one line: %q", name, err)
					}
					if _, serr := os.Stat(out); !os.IsNotExist(serr) {
						t.Errorf("%s: refused, but %s was written", name, out)
					}
					continue
				case err != nil:
					t.Errorf("%s: %v", name, err)
					continue
				}
				exported++
				got := readLines(t, filepath.Join(out, expectedDir, TraceName(f)+".jsonl"))
				compareLines(t, name+" ("+string(format)+")", want, got)
				checkBatchFiles(t, name, tr, out, format)
			}
		}
	}
	if exported != 2*27 {
		t.Errorf("exported %d traces (both formats); want the 27 that load and that Spark can be driven through, twice", exported)
	}
}

// compareLines checks the predicted records against a trace's expected
// lines.
func compareLines(t *testing.T, name string, want, got []expectedLine) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d batches predicted, want %d", name, len(got), len(want))
		return
	}
	for i := range want {
		w, g := want[i], got[i]
		if *w.BatchID != *g.BatchID || *w.NumInputRows != *g.NumInputRows {
			t.Errorf("%s: line %d: batch %d with %d rows, want batch %d with %d rows", name, i, *g.BatchID, *g.NumInputRows, *w.BatchID, *w.NumInputRows)
		}
		if (w.EventTime == nil) != (g.EventTime == nil) || w.EventTime != nil && w.EventTime.Watermark != g.EventTime.Watermark {
			t.Errorf("%s: batch %d: eventTime %+v, want %+v", name, *w.BatchID, g.EventTime, w.EventTime)
		}
		if len(w.StateOperators) != len(g.StateOperators) {
			t.Errorf("%s: batch %d: %d state operators, want %d", name, *w.BatchID, len(g.StateOperators), len(w.StateOperators))
			continue
		}
		for k, wo := range w.StateOperators {
			gj, _ := json.Marshal(g.StateOperators[k])
			for field, wv := range wo {
				wj, _ := json.Marshal(wv)
				gv, _ := json.Marshal(g.StateOperators[k][field])
				if string(wj) != string(gv) {
					t.Errorf("%s: batch %d: stateOperators[%d].%s = %s, want %s (%s)", name, *w.BatchID, k, field, gv, wj, gj)
				}
			}
		}
	}
}

// checkBatchFiles checks that an exported trace has one batch file per
// addData step, holding as many rows.
func checkBatchFiles(t *testing.T, name string, tr *replay.Trace, out string, format Format) {
	t.Helper()
	var want []int
	for _, s := range tr.Steps {
		if !s.Restart {
			want = append(want, s.Rows.Len())
		}
	}
	entries, err := os.ReadDir(filepath.Join(out, batchesDir))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for i, e := range entries {
		if e.Name() != batchFileName(int64(i), format) {
			t.Errorf("%s: batch file %d is %s", name, i, e.Name())
		}
		got = append(got, countRows(t, filepath.Join(out, batchesDir, e.Name()), format))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: batch files hold %v rows, want %v (one file per addData)", name, got, want)
	}
}
