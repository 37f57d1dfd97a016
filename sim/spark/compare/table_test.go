package compare

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dedupsim/dedupsim/metrics/progresslog"
)

// update rewrites the golden files under testdata/ instead of comparing
// (they are renderings, not hand-derived expectations):
//
//	go test ./sim/spark/compare -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./sim/spark/compare -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the output (rerun with -update if the change is intended):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// render is the verdict line followed by the table, as the CLI prints
// them.
func render(t *testing.T, r *Result, maxRows int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(r.Verdict() + "\n\n")
	if err := WriteTable(&b, r, maxRows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// rec is a small executed record: one dedup operator.
func rec(name, id string, batch int64, ts int, rows, total, removed int64, wm string) progresslog.Progress {
	p := progresslog.Progress{
		ID: id, RunID: "run-" + id, Name: name,
		Timestamp:    progresslog.Time{Time: time.Unix(int64(ts), 0).UTC(), OK: true},
		BatchID:      progresslog.Int{Value: batch, OK: true},
		NumInputRows: progresslog.Int{Value: rows, OK: true},
		DurationMs:   progresslog.Durations{AddBatch: progresslog.Int{Value: 5, OK: true}},
		StateOperators: []progresslog.StateOperator{{
			OperatorName:              "dedupeWithinWatermark",
			NumRowsTotal:              progresslog.Int{Value: total, OK: true},
			NumRowsUpdated:            progresslog.Int{Value: rows / 2, OK: true},
			NumRowsRemoved:            progresslog.Int{Value: removed, OK: true},
			NumRowsDroppedByWatermark: progresslog.Int{Value: 3, OK: true},
			CustomMetrics:             map[string]int64{"numDroppedDuplicateRows": rows / 10},
		}},
	}
	if wm != "" {
		tm, _ := time.Parse(time.RFC3339Nano, wm)
		p.EventTime.Watermark = progresslog.Time{Time: tm, Raw: wm, OK: true}
	}
	return p
}

// mixed is a comparison with one of every kind of difference and note.
func mixed() Result {
	var exp, act []progresslog.Progress
	// "within": 40 batches; 30-39 missing in actual, a removal count,
	// an absent watermark, a second operator, a renamed operator, and
	// a repeated record.
	for b := range int64(40) {
		wm := "2024-05-01T10:00:00.000Z"
		if b == 0 {
			wm = "1970-01-01T00:00:00.000Z"
		}
		e := rec("within", "w", b, int(b)*10, 12_000+b, 1_883_002+b*100, 210, wm)
		exp = append(exp, e)
		if b >= 30 {
			continue
		}
		a := rec("within", "w", b, int(b)*10, 12_000+b, 1_883_002+b*100, 210, wm)
		switch b {
		case 0:
			a.EventTime.Watermark = progresslog.Time{}
		case 17:
			a.StateOperators[0].NumRowsRemoved.Value = 208
			a.StateOperators[0].CustomMetrics["numDroppedDuplicateRows"]++
		case 21:
			a.StateOperators = append(a.StateOperators, a.StateOperators[0])
			a.StateOperators[1].OperatorName = "stateStoreSave"
		case 22:
			a.StateOperators[0].OperatorName = "dedupe"
		case 23:
			a.NumInputRows = progresslog.Int{}
		}
		act = append(act, a)
		if b == 5 {
			act = append(act, a)
		}
	}
	// "dedup events": equal, with an idle trigger, an executed record
	// without a batchId and an earlier run from another checkpoint.
	for b := range int64(3) {
		exp = append(exp, rec("dedup events", "d", b, int(b), 7, 7*(b+1), 0, ""))
		act = append(act, rec("dedup events", "d", b, 100+int(b), 7, 7*(b+1), 0, ""))
		act = append(act, rec("dedup events", "old", b, int(b), 9, 9, 0, ""))
	}
	idle := rec("dedup events", "d", 3, 200, 0, 21, 0, "")
	idle.DurationMs.AddBatch = progresslog.Int{}
	noID := rec("dedup events", "d", 0, 201, 0, 21, 0, "")
	noID.BatchID = progresslog.Int{}
	act = append(act, idle, noID)
	// "late": one batch, extra in actual.
	exp = append(exp, rec("late", "l", 0, 0, 1, 1, 0, ""))
	act = append(act, rec("late", "l", 0, 0, 1, 1, 0, ""), rec("late", "l", 1, 1, 1, 1, 0, ""))
	return Compare(exp, act, Options{})
}

func TestTableGolden(t *testing.T) {
	r := mixed()
	golden(t, "different.golden", render(t, &r, 0))
	golden(t, "different-3-rows.golden", render(t, &r, 3))

	eq, err := CompareFiles([]string{expectedDir}, []string{filepath.Join(fixtures, "driver.log"), filepath.Join(fixtures, "hdfs-pretty.json")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "equal.golden", render(t, &eq, 0))

	ign, err := CompareFiles([]string{filepath.Join(expectedDir, "within-watermark.jsonl")}, []string{filepath.Join(fixtures, "listener.jsonl"), filepath.Join(fixtures, "hdfs-pretty.json"), filepath.Join(fixtures, "spark22-driver.log")}, Options{IgnoreExtraQueries: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "ignored.golden", render(t, &ign, 0))
}

// The rendering stays within Width columns, and echoes nothing that is
// not printable, whatever the records hold.
func TestTableFitsWidth(t *testing.T) {
	long := strings.Repeat("très long nom de requête ", 10) + "\x1b[31m"
	opName := strings.Repeat("operator\t", 30)
	var exp, act []progresslog.Progress
	for _, name := range []string{long, "", strings.Repeat("x", 300)} {
		id := "id-" + strconv.Itoa(len(name))
		if name == "" {
			id = strings.Repeat("\u2603", 90)
		}
		for _, b := range []int64{math.MaxInt64 - 2, math.MaxInt64 - 1, math.MaxInt64} {
			e := rec(name, id, b, 0, math.MaxInt64, math.MinInt64, math.MaxInt64, "2024-05-01T10:00:00.123456789Z")
			a := rec(name, id, b, 0, math.MinInt64, math.MaxInt64, 0, "")
			a.StateOperators[0].OperatorName = opName
			exp = append(exp, e)
			if b != math.MaxInt64-1 {
				act = append(act, a)
			}
		}
		// Another query id, so that the note naming the compared id
		// is written.
		other := rec(name, strings.Repeat("\u00e9", 200), 0, -1, 1, 1, 1, "")
		act = append(act, other)
	}
	r := Compare(exp, act, Options{})
	out := render(t, &r, 100)
	for i, line := range strings.Split(out, "\n") {
		if i == 0 {
			continue // the verdict is one line of any length
		}
		if n := utf8.RuneCountInString(line); n > Width {
			t.Errorf("line %d has %d columns, want %d at most:\n%s", i+1, n, Width, line)
		}
		for _, c := range line {
			if !unicode.IsPrint(c) {
				t.Errorf("line %d holds %q:\n%q", i+1, c, line)
				break
			}
		}
	}
	if t.Failed() {
		t.Log(out)
	}
	if !strings.Contains(out, "...") {
		t.Errorf("nothing was cut:\n%s", out)
	}
}
