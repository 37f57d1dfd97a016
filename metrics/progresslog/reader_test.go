package progresslog

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// readFixture reads testdata/name with ReadAll.
func readFixture(t *testing.T, name string) ([]Progress, Form) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, form, err := ReadAll(f, name)
	if err != nil {
		t.Fatalf("ReadAll(%s): %v", name, err)
	}
	return recs, form
}

// withoutLines returns recs with Line zeroed, to compare records read
// from different forms.
func withoutLines(recs []Progress) []Progress {
	out := make([]Progress, len(recs))
	for i, p := range recs {
		p.Line = 0
		out[i] = p
	}
	return out
}

// The four fixtures hold the same 27 records (invented values in the
// shape of Spark 3.5's, RocksDB store, Kafka source, a restart, a
// no-data batch and a trigger that ran no batch) in the four forms.
func TestEveryFormReadsTheSameRecords(t *testing.T) {
	cases := []struct {
		file string
		form Form
	}{
		{"listener.jsonl", JSONLines},
		{"recent-progress.json", JSONArray},
		{"pretty.json", PrettyJSON},
		{"driver.log", DriverLog},
	}
	var want []Progress
	for _, c := range cases {
		recs, form := readFixture(t, c.file)
		if form != c.form {
			t.Errorf("%s: form %v, want %v", c.file, form, c.form)
		}
		if len(recs) != 27 {
			t.Fatalf("%s: %d records, want 27", c.file, len(recs))
		}
		if want == nil {
			want = withoutLines(recs)
			continue
		}
		if got := withoutLines(recs); !reflect.DeepEqual(got, want) {
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s: record %d differs:\n got %+v\nwant %+v", c.file, i, got[i], want[i])
				}
			}
		}
	}
}

func TestListenerEventsAreSkipped(t *testing.T) {
	f, err := os.Open("testdata/listener.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewReader(f, "listener.jsonl")
	first, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	// Line 1 is the query started event.
	if first.Line != 2 || first.BatchID != (Int{0, true}) {
		t.Errorf("first record: line %d, batchId %+v; want line 2, batch 0", first.Line, first.BatchID)
	}
	n := 1
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 27 || r.Skipped() != 3 {
		t.Errorf("%d records, %d skipped; want 27 and 3 (started, terminated, started)", n, r.Skipped())
	}
}

// The values below are those written in testdata/hdfs-pretty.json.
func TestFieldsOfARecord(t *testing.T) {
	recs, form := readFixture(t, "hdfs-pretty.json")
	if form != PrettyJSON || len(recs) != 1 {
		t.Fatalf("form %v, %d records; want pretty JSON, 1", form, len(recs))
	}
	p := recs[0]
	wm := time.Date(2023, 11, 20, 8, 9, 58, 120e6, time.UTC)
	checks := []struct {
		name      string
		got, want any
	}{
		{"Line", p.Line, 1},
		{"ID", p.ID, "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4"},
		{"RunID", p.RunID, "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"},
		{"Name", p.Name, "within-watermark"},
		{"Timestamp", p.Timestamp.Time, time.Date(2023, 11, 20, 8, 30, 0, 1e6, time.UTC)},
		{"BatchID", p.BatchID, Int{412, true}},
		{"BatchDuration", p.BatchDuration, Int{2210, true}},
		{"NumInputRows", p.NumInputRows, Int{15250, true}},
		{"InputRowsPerSecond", p.InputRowsPerSecond, Float{508.3, true}},
		{"ProcessedRowsPerSecond", p.ProcessedRowsPerSecond, Float{6900.5, true}},
		{"DurationMs", p.DurationMs, Durations{
			AddBatch: Int{1822, true}, GetBatch: Int{1, true}, LatestOffset: Int{9, true},
			QueryPlanning: Int{35, true}, TriggerExecution: Int{2210, true},
			WalCommit: Int{66, true}, CommitOffsets: Int{71, true},
		}},
		{"Watermark", p.EventTime.Watermark, Time{wm, "2023-11-20T08:09:58.120Z", true}},
		{"Max", p.EventTime.Max.Raw, "2023-11-20T08:29:59.950Z"},
		{"Min", p.EventTime.Min.Raw, "2023-11-20T08:28:12.004Z"},
		{"Avg", p.EventTime.Avg.Raw, "2023-11-20T08:29:41.377Z"},
		{"StateOperators", p.StateOperators, []StateOperator{{
			OperatorName:              "dedupeWithinWatermark",
			NumRowsTotal:              Int{1883002, true},
			NumRowsUpdated:            Int{14977, true},
			AllUpdatesTimeMs:          Int{2093, true},
			NumRowsRemoved:            Int{15101, true},
			AllRemovalsTimeMs:         Int{4412, true},
			CommitTimeMs:              Int{6120, true},
			MemoryUsedBytes:           Int{540012288, true},
			NumRowsDroppedByWatermark: Int{3, true},
			NumShufflePartitions:      Int{64, true},
			NumStateStoreInstances:    Int{64, true},
			CustomMetrics: map[string]int64{
				"loadedMapCacheHitCount": 52608, "loadedMapCacheMissCount": 0,
				"numDroppedDuplicateRows": 270, "stateOnCurrentVersionSizeBytes": 501771264,
			},
		}}},
		{"Sources", p.Sources, []Source{{
			Description:            "KafkaV2[Subscribe[clicks]]",
			NumInputRows:           Int{15250, true},
			InputRowsPerSecond:     Float{508.3, true},
			ProcessedRowsPerSecond: Float{6900.5, true},
		}}},
		{"Sink", p.Sink, Sink{Present: true, Description: "ForeachBatchSink", NumOutputRows: Int{-1, true}}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
}

// Spark 2.2's records have no batchId, no operatorName, no
// numRowsRemoved, getOffset for latestOffset, null offsets and a null
// name; a trigger that runs no batch has no addBatch.
func TestAbsentFieldsAreToldFromZero(t *testing.T) {
	recs, form := readFixture(t, "spark22-driver.log")
	if form != DriverLog || len(recs) != 2 {
		t.Fatalf("form %v, %d records; want a driver log, 2", form, len(recs))
	}
	idle, batch := recs[0], recs[1]
	if idle.Line != 3 || batch.Line != 26 {
		t.Errorf("lines %d and %d, want 3 and 26 (the lines of the opening braces)", idle.Line, batch.Line)
	}
	if idle.BatchID.OK || idle.DurationMs.AddBatch.OK || idle.InputRowsPerSecond.OK || idle.Name != "" {
		t.Errorf("idle trigger: batchId %+v, addBatch %+v, inputRowsPerSecond %+v, name %q; want all absent",
			idle.BatchID, idle.DurationMs.AddBatch, idle.InputRowsPerSecond, idle.Name)
	}
	if idle.NumInputRows != (Int{0, true}) || idle.DurationMs.TriggerExecution != (Int{11, true}) {
		t.Errorf("idle trigger: numInputRows %+v, triggerExecution %+v; want 0 and 11 present",
			idle.NumInputRows, idle.DurationMs.TriggerExecution)
	}
	if !reflect.DeepEqual(idle.DurationMs.Other, map[string]int64{"getOffset": 4}) || idle.StateOperators != nil {
		t.Errorf("idle trigger: other phases %v, operators %v; want getOffset 4, none", idle.DurationMs.Other, idle.StateOperators)
	}
	if batch.DurationMs.AddBatch != (Int{1203, true}) || batch.DurationMs.LatestOffset.OK {
		t.Errorf("batch: addBatch %+v, latestOffset %+v; want 1203 and absent", batch.DurationMs.AddBatch, batch.DurationMs.LatestOffset)
	}
	op := batch.StateOperators[0]
	if op.OperatorName != "" || op.NumRowsRemoved.OK || op.NumShufflePartitions.OK || op.NumRowsTotal != (Int{6, true}) || op.CustomMetrics != nil {
		t.Errorf("operator %+v: want no name, removed, partitions or custom metrics, 6 rows", op)
	}
	if batch.Sink.NumOutputRows.OK || !batch.Sink.Present {
		t.Errorf("sink %+v: want present without numOutputRows", batch.Sink)
	}
	if !batch.EventTime.Watermark.OK || !batch.EventTime.Watermark.Time.Equal(time.Unix(0, 0)) {
		t.Errorf("watermark %+v, want the epoch", batch.EventTime.Watermark)
	}
}

func TestIdleTriggerAndNoDataBatch(t *testing.T) {
	recs, _ := readFixture(t, "listener.jsonl")
	var idle, noData int
	for _, p := range recs {
		switch {
		case !p.DurationMs.AddBatch.OK:
			idle++
			if p.DurationMs.TriggerExecution.Value != 3 || p.InputRowsPerSecond.OK {
				t.Errorf("line %d: idle trigger with triggerExecution %+v, inputRowsPerSecond %+v", p.Line, p.DurationMs.TriggerExecution, p.InputRowsPerSecond)
			}
		case p.NumInputRows == (Int{0, true}):
			noData++
		}
	}
	if idle != 1 || noData != 4 {
		t.Errorf("%d idle triggers and %d no-data batches, want 1 and 4", idle, noData)
	}
}

const want = "want Spark StreamingQueryProgress JSON (JSON lines, a JSON array, pretty JSON or a driver log with 'Streaming query made progress'), got "

// minimal is the smallest record the Reader takes for progress.
const minimal = `{"id":"q","runId":"r","batchId":1}`

func TestRejections(t *testing.T) {
	long := strings.Repeat("é", 100)
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", "in: line 1: " + want + "empty input"},
		{"blank", "\n\n  \n", "in: line 4: " + want + "empty input"},
		{"text", "\nhello world\nsecond line\n", "in: line 2: " + want + `"hello world" (a text of 3 lines, none with 'Streaming query made progress: {')`},
		{"marker without brace", "x Streaming query made progress: 42\n", "in: line 1: " + want + `"x Streaming query made progress: 42" (a text of 1 lines, none with 'Streaming query made progress: {')`},
		{"other JSON", `{"a":1}`, "in: line 1: " + want + `an object without the "id" and "runId" strings of a progress record: {"a":1}`},
		{"numeric id", `{"id":1,"runId":"r","batchId":1}`, "in: line 1: " + want + `an object without the "id" and "runId" strings of a progress record: {"id":1,"runId":"r","batchId":1}`},
		{"second line", minimal + "\nnot json\n", "in: line 2: " + want + `"not json"`},
		{"array of numbers", "[1, 2]", "in: line 1: " + want + `an array element "1, 2]"`},
		{"empty array", "[ ]\n", "in: line 2: " + want + "an empty JSON array"},
		{"after array", "[" + minimal + "]\n[" + minimal + "]", "in: line 2: " + want + `text after the JSON array: "[{\"id\":\"q\",\"runId\":\"r\",\"batchId\":1}]"`},
		{"events only", `{"id":"q","runId":"r","name":null,"timestamp":"2024-01-01T00:00:00.000Z"}`, "in: line 1: " + want + "only 1 listener events (query started, idle or terminated), no progress"},
		{"trailing comma", "[" + minimal + ",\n]", "in: line 2: malformed JSON: ',' before the array's ']'"},
		{"array not closed", "[" + minimal + ",\n", "in: line 2: malformed JSON: the array is not closed (end of input)"},
		{"array separator", "[" + minimal + " " + minimal + "]", "in: line 1: malformed JSON: want ',' or ']' after an array element, got " + `"{\"id\":\"q\",\"runId\":\"r\",\"batchId\":1}]"`},
		{"syntax", "{\"id\":\"q\",\n\"runId\":\"r\",\n oops}", "in: line 3: malformed JSON: invalid character 'o' looking for beginning of object key string"},
		{"cut short", "INFO X: Streaming query made progress: {\n  \"id\" : \"q\",\n", "in: line 1: malformed JSON: the record that starts here is cut short (end of input)"},
		{"integer", `{"id":"q","runId":"r","numInputRows":"12k"}`, `in: line 1: progress record: numInputRows: want an integer, got "12k"`},
		{"fraction", `{"id":"q","runId":"r","durationMs":{"addBatch":1.5}}`, `in: line 1: progress record: durationMs.addBatch: want an integer, got 1.5`},
		{"custom metric", `{"id":"q","runId":"r","stateOperators":[{},{"customMetrics":{"a":1,"b":[]}}]}`, `in: line 1: progress record: stateOperators[1].customMetrics.b: want an integer, got []`},
		{"odd metric name", `{"id":"q","runId":"r","stateOperators":[{"customMetrics":{"a.b\u0001":true}}]}`, `in: line 1: progress record: stateOperators[0].customMetrics."a.b\x01": want an integer, got true`},
		{"operators object", `{"id":"q","runId":"r","stateOperators":{"a":1}}`, `in: line 1: progress record: stateOperators: want an array, got {"a":1}`},
		{"operator number", `{"id":"q","runId":"r","stateOperators":[7]}`, `in: line 1: progress record: stateOperators[0]: want an object, got 7`},
		{"rate", `{"id":"q","runId":"r","batchId":1,"inputRowsPerSecond":"NaN"}`, `in: line 1: progress record: inputRowsPerSecond: want a number, got "NaN"`},
		{"watermark", "{\"id\":\"q\",\"runId\":\"r\",\"batchId\":1,\n\"eventTime\":{\"watermark\":\"yesterday\"}}", `in: line 1: progress record: eventTime.watermark: want an ISO-8601 timestamp such as 2024-05-01T10:00:00.000Z, got "yesterday"`},
		{"name", `{"id":"q","runId":"r","name":3,"batchId":1}`, `in: line 1: progress record: name: want a string, got 3`},
		{"sink", `{"id":"q","runId":"r","sink":"console"}`, `in: line 1: progress record: sink: want an object, got "console"`},
		{"long value", `{"id":"q","runId":"r","batchId":"` + long + `"}`, `in: line 1: progress record: batchId: want an integer, got ` + `"\"` + strings.Repeat("é", 79) + `"...`},
		{"control characters", "\x1b[31mred\x00\n", "in: line 1: " + want + `"\x1b[31mred\x00" (a text of 1 lines, none with 'Streaming query made progress: {')`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs, _, err := ReadAll(strings.NewReader(c.in), "in")
			if err == nil {
				t.Fatalf("ReadAll(%q) = %d records, want error %q", c.in, len(recs), c.want)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Errorf("error %T, want *Error", err)
			}
			if err.Error() != c.want {
				t.Errorf("ReadAll(%q):\n got %s\nwant %s", c.in, err, c.want)
			}
		})
	}
}

// Every problem is reported again by later calls, and nothing is
// returned after it.
func TestErrorsAreSticky(t *testing.T) {
	r := NewReader(strings.NewReader(minimal+"\nxx\n"+minimal+"\n"), "in")
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err1 != err2 {
		t.Errorf("errors %v then %v, want the same error twice", err1, err2)
	}
}

func TestSourceNameIsPrintable(t *testing.T) {
	_, _, err := ReadAll(strings.NewReader(""), "bad\nname\x1b")
	if err == nil || !strings.HasPrefix(err.Error(), `bad\nname\x1b: line 1: `) {
		t.Errorf("got %v, want the name escaped", err)
	}
}

func TestRecordSizeLimit(t *testing.T) {
	// record returns a record of exactly n bytes.
	record := func(n int) string {
		rec := `{"id":"q","runId":"r","batchId":1,"name":"`
		return rec + strings.Repeat("y", n-len(rec)-2) + `"}`
	}
	in := "log line\nINFO: Streaming query made progress: " + record(MaxRecordBytes+1) + "\n"
	_, _, err := ReadAll(strings.NewReader(in), "in")
	if err == nil || err.Error() != "in: line 2: progress record longer than 4 MiB, the limit" {
		t.Errorf("a record of MaxRecordBytes+1: got %v, want the size limit at line 2", err)
	}
	recs, _, err := ReadAll(strings.NewReader(in[:len(in)-4]+"\"}"), "in")
	if err != nil || len(recs) != 1 || len(recs[0].Name) != MaxRecordBytes-len(`{"id":"q","runId":"r","batchId":1,"name":""}`) {
		t.Errorf("a record of exactly MaxRecordBytes: %v", err)
	}
}

func TestRecordCountLimit(t *testing.T) {
	var b bytes.Buffer
	for range MaxRecords + 1 {
		b.WriteString(minimal)
		b.WriteByte('\n')
	}
	r := NewReader(&b, "in")
	n := 0
	var err error
	for {
		if _, err = r.Next(); err != nil {
			break
		}
		n++
	}
	want := "in: line 200001: more than 200000 progress records, the limit for one input; split the log"
	if n != MaxRecords || err == nil || err.Error() != want {
		t.Errorf("%d records then %v; want %d then %q", n, err, MaxRecords, want)
	}
}

// A driver log's other lines are never held: a line of 64 MiB before a
// record costs no more memory than a short one.
func TestDriverLogLinesAreNotHeld(t *testing.T) {
	const size = 64 << 20
	in := io.MultiReader(
		strings.NewReader("24/01/01 INFO A: "),
		io.LimitReader(repeatReader('z'), size),
		strings.NewReader("\nINFO B: Streaming query made progress: "+minimal+"\n"),
	)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	recs, form, err := ReadAll(in, "in")
	runtime.ReadMemStats(&after)
	if err != nil || form != DriverLog || len(recs) != 1 || recs[0].Line != 2 {
		t.Fatalf("got %d records (%v), form %v; want one on line 2 of a driver log", len(recs), err, form)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading a 64 MiB line allocated %d bytes, want under 4 MiB", alloc)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// The marker matches in any case and wherever it is on its line, after
// a partial match ("Streaming query Streaming query made progress"), and
// a record may follow it after spaces and tabs.
func TestDriverLogMarker(t *testing.T) {
	in := "\ufeffnoise {\"id\":\"x\"}\n" +
		"a STREAMING QUERY Streaming Query made progress: \t" + minimal + " trailing text\n" +
		"Streaming query made progress:\n" + // no record on this line
		"{\"id\":\"ignored\"}\n" +
		"Streaming query made progress:{\"id\":\"q\",\"runId\":\"r2\",\n\"batchId\":2}\n"
	recs, form, err := ReadAll(strings.NewReader(in), "in")
	if err != nil || form != DriverLog {
		t.Fatalf("ReadAll: %v, form %v", err, form)
	}
	if len(recs) != 2 || recs[0].Line != 2 || recs[1].Line != 5 || recs[1].RunID != "r2" || recs[1].BatchID.Value != 2 {
		t.Errorf("records %+v, want two, on lines 2 and 5", recs)
	}
}

func TestFormString(t *testing.T) {
	for f, s := range map[Form]string{Unknown: "unknown", JSONLines: "JSON lines", JSONArray: "a JSON array", PrettyJSON: "pretty JSON", DriverLog: "a driver log"} {
		if f.String() != s {
			t.Errorf("%d.String() = %q, want %q", f, f.String(), s)
		}
	}
}

// TestStructuredLog reads an excerpt of a real Spark 4 structured driver
// log: pyspark 4.3.0, local[2], spark.log.structuredLogging.enabled=true
// and log4j2's JsonTemplateLayout with Spark's SparkLayout.json, two
// queries of withWatermark("t", "10 seconds")
// .dropDuplicatesWithinWatermark(["id"]) over a JSON file source (HDFS and
// RocksDB state stores), five files each: 31 events, 18 of them "Streaming
// query made progress: {...}" with the record in msg.
func TestStructuredLog(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "spark43-structured.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, form, err := ReadAll(f, "spark43-structured.log")
	if err != nil || form != StructuredLog {
		t.Fatalf("ReadAll: %v, form %v", err, form)
	}
	if len(recs) != 18 {
		t.Fatalf("%d records, want 18", len(recs))
	}
	first, last := recs[0], recs[17]
	if first.Name != "hdfs_within" || first.BatchID.Value != 0 || first.NumInputRows.Value != 20 || first.Line != 6 ||
		first.DurationMs.TriggerExecution.Value != 90563 || first.StateOperators[0].OperatorName != "dedupeWithinWatermark" ||
		first.StateOperators[0].NumRowsDroppedByWatermark.Value+first.StateOperators[0].NumRowsUpdated.Value+first.StateOperators[0].CustomMetrics["numDroppedDuplicateRows"] != 20 {
		t.Errorf("first record %+v", first)
	}
	if last.Name != "rocksdb_within" || last.BatchID.Value != 8 || last.NumInputRows.Value != 0 || !last.EventTime.Watermark.OK {
		t.Errorf("last record %+v", last)
	}
	// A dedup operator's input: late 4 + new 7 + duplicates 9 = the
	// batch's 20 rows, as calibrate counts it.
	if _, ok := first.StateOperators[0].CustomMetrics["loadedMapCacheHitCount"]; !ok {
		t.Errorf("hdfs metrics missing: %v", first.StateOperators[0].CustomMetrics)
	}
	if _, ok := last.StateOperators[0].CustomMetrics["rocksdbCommitFlushLatency"]; !ok {
		t.Errorf("rocksdb metrics missing: %v", last.StateOperators[0].CustomMetrics)
	}
}

// TestStructuredLogProblems: a structured log with no progress event says
// so; a record in msg that is not JSON is an error naming the line.
func TestStructuredLogProblems(t *testing.T) {
	in := `{"ts":"2026-01-01T00:00:00.000Z","level":"INFO","msg":"Running Spark version 4.3.0","logger":"SparkContext"}` + "\n"
	_, form, err := ReadAll(strings.NewReader(in), "s.log")
	if err == nil || form != StructuredLog || !strings.Contains(err.Error(), "s.log: line 2: "+Want+", got a structured (JSON) log with no event") {
		t.Errorf("form %v, error %v", form, err)
	}
	in += `{"ts":"2026-01-01T00:00:01.000Z","level":"INFO","msg":"Streaming query made progress: {\"id\" : \"q\", \"runId\" : ","logger":"MicroBatchExecution"}` + "\n"
	_, _, err = ReadAll(strings.NewReader(in), "s.log")
	if err == nil || !strings.HasPrefix(err.Error(), "s.log: line 2: malformed JSON") {
		t.Errorf("error %v", err)
	}
	// A JSON-lines progress file is not taken for a log.
	recs, form, err := ReadAll(strings.NewReader(minimal+"\n"), "p.jsonl")
	if err != nil || form != JSONLines || len(recs) != 1 {
		t.Errorf("JSON lines: %v, form %v, %d records", err, form, len(recs))
	}
}

// TestDriverLogMarkerOverlap: the marker's last letter before the colon,
// the s of "progress", is also its first, so after "...made progres" a
// failed match must resume with that s already matched: in "Streaming
// query made progresstreaming query made progress: {" the record starts
// at the second "s...". A search that restarts from nothing on a
// mismatch (checking the mismatched byte only against the marker's start)
// misses it.
func TestDriverLogMarkerOverlap(t *testing.T) {
	in := "x Streaming query made progresstreaming query made progress: " + minimal + "\n"
	recs, form, err := ReadAll(strings.NewReader(in), "in")
	if err != nil || form != DriverLog || len(recs) != 1 {
		t.Fatalf("ReadAll: %v, form %v, %d records; want one record", err, form, len(recs))
	}
}
