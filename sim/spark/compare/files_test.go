package compare

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics/progresslog"
)

// testdata/expected holds dedupsim-shaped predictions of the fixtures'
// two queries: per executed batch, the compared fields of Spark's
// record (copied from listener.jsonl and hdfs-pretty.json), made-up ids
// and durationMs.addBatch 0, as `simulate export` writes them.
const expectedDir = "testdata/expected"

// Spark's records in every form progresslog reads, with every field of
// Spark 3.5 (offsets, null startOffset, RocksDB custom metrics, observed
// metrics, listener events, pretty JSON across lines, a driver log among
// other lines), compare equal with the prediction.
func TestRealShapedRecordsCompare(t *testing.T) {
	for _, form := range []string{"listener.jsonl", "recent-progress.json", "pretty.json", "driver.log"} {
		t.Run(form, func(t *testing.T) {
			r, err := CompareFiles([]string{expectedDir},
				[]string{filepath.Join(fixtures, form), filepath.Join(fixtures, "hdfs-pretty.json")}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Equal() || r.Counts != (Counts{Batches: 27, Equal: 27}) || len(r.Queries) != 2 {
				t.Fatalf("verdict %q, counts %+v", r.Verdict(), r.Counts)
			}
			if v, want := r.Verdict(), "equal: 2 queries, 27 batches, every counter matches"; v != want {
				t.Errorf("verdict %q, want %q", v, want)
			}
			if in := r.Queries[0].Actual; in.Batches != 26 || in.Idle != 1 {
				t.Errorf("actual input of dedup-events %+v, want 26 batches and 1 idle trigger", in)
			}
			if ExitCode(&r, nil) != ExitEqual {
				t.Errorf("exit code %d, want %d", ExitCode(&r, nil), ExitEqual)
			}
		})
	}
}

// A counter of the driver log changed is found: the records are read and
// compared, not just parsed.
func TestDriverLogCounterChanged(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "driver.log"))
	if err != nil {
		t.Fatal(err)
	}
	// numDroppedDuplicateRows of batch 2 (the only record with 2112).
	old := `"numDroppedDuplicateRows" : 2112,`
	if strings.Count(string(data), old) != 1 {
		t.Fatalf("driver.log holds %q %d times, want once", old, strings.Count(string(data), old))
	}
	path := filepath.Join(t.TempDir(), "driver.log")
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, `"numDroppedDuplicateRows" : 2111,`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := CompareFiles([]string{filepath.Join(expectedDir, "dedup-events.jsonl")}, []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Difference{{BatchID: 2, Kind: Changed, Field: "stateOperators[0].customMetrics.numDroppedDuplicateRows",
		Expected: Value{Present: true, Number: 2112}, Actual: Value{Present: true, Number: 2111}}}
	if !reflect.DeepEqual(r.Queries[0].Differences, want) {
		t.Fatalf("differences %+v, want %+v", r.Queries[0].Differences, want)
	}
	if ExitCode(&r, nil) != ExitDifferent {
		t.Errorf("exit code %d, want %d", ExitCode(&r, nil), ExitDifferent)
	}
}

// Spark 2.2's records have no batchId and no operatorName: the executed
// one is read, counted and left out.
func TestOldSparkRecordsWithoutBatchID(t *testing.T) {
	r, err := CompareFiles([]string{expectedDir}, []string{filepath.Join(fixtures, "spark22-driver.log")}, Options{IgnoreExtraQueries: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.IgnoredQueries) != 1 || r.IgnoredQueries[0] != "id 5a1d7c3e-90b2-4e6f-8d41-b3c2a1f0e9d8" {
		t.Errorf("ignored queries %q, want the unnamed query of the log", r.IgnoredQueries)
	}
	if r.Counts.Missing != 27 {
		t.Errorf("counts %+v, want every expected batch missing in actual", r.Counts)
	}
	r, err = CompareFiles([]string{expectedDir}, []string{filepath.Join(fixtures, "spark22-driver.log")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := r.Queries[2].Actual
	if r.Queries[2].ID != "5a1d7c3e-90b2-4e6f-8d41-b3c2a1f0e9d8" || in.Records != 2 || in.Idle != 1 || in.NoBatchID != 1 || in.Batches != 0 {
		t.Errorf("unnamed query %+v, want 2 records: 1 idle, 1 without batchId", r.Queries[2])
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notProgress := write("notes.txt", "batch,rows\n0,41000\n")
	idleOnly := write("idle/q.jsonl", `{"id":"a","runId":"b","name":"q","batchId":0,"numInputRows":0,"durationMs":{"triggerExecution":3}}`+"\n")
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	write("empty/readme.md", "no jsonl here\n")
	badField := write("bad.jsonl", `{"id":"a","runId":"b","name":"q","batchId":"seven","durationMs":{"addBatch":1}}`+"\n")
	listener := filepath.Join(fixtures, "listener.jsonl")
	cases := []struct {
		name               string
		expected, actual   []string
		want               string
		fromProgresslogErr bool
	}{
		{"actual is not progress", []string{expectedDir}, []string{notProgress},
			notProgress + ": line 1: " + progresslog.Want + `, got "batch,rows" (a text of 2 lines, none with 'Streaming query made progress: {')`, true},
		{"a field of the wrong type", []string{expectedDir}, []string{badField},
			badField + `: line 1: progress record: batchId: want an integer, got "seven"`, true},
		{"expected without a batch", []string{idleOnly}, []string{listener},
			idleOnly + ": no executed micro-batch (a record with batchId and durationMs.addBatch); want dedupsim's expected progress, one record per batch", false},
		{"expected folder without jsonl", []string{empty}, []string{listener},
			empty + ": no *.jsonl file; want the folder of expected/<query>.jsonl files that simulate export writes", false},
		{"no such file", []string{expectedDir}, []string{filepath.Join(dir, "nope.jsonl")},
			filepath.Join(dir, "nope.jsonl") + ": cannot read the actual progress: no such file or directory", false},
		{"actual is a folder", []string{expectedDir}, []string{dir},
			dir + ": cannot read the actual progress: not a regular file (a folder)", false},
		{"no actual", []string{expectedDir}, nil, "compare: no actual progress file given", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := CompareFiles(c.expected, c.actual, Options{})
			if err == nil {
				t.Fatalf("no error; verdict %q", r.Verdict())
			}
			if err.Error() != c.want {
				t.Errorf("error\n %s\nwant\n %s", err, c.want)
			}
			var pe *progresslog.Error
			if errors.As(err, &pe) != c.fromProgresslogErr {
				t.Errorf("error %T, from progresslog %v, want %v", err, !c.fromProgresslogErr, c.fromProgresslogErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
			if ExitCode(&r, err) != ExitBadInput {
				t.Errorf("exit code %d, want %d", ExitCode(&r, err), ExitBadInput)
			}
		})
	}
}
