package compare

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/metrics/progresslog"
)

// fixtures is where metrics/progresslog keeps real-shaped Spark records:
// the same 27 records of query "dedup-events" (26 executed batches, one
// trigger that ran no batch, a restart with a new runId at batch 20) in
// four forms, and one record of query "within-watermark".
const fixtures = "../../../metrics/progresslog/testdata"

// readRecords reads a progress log with progresslog.
func readRecords(t *testing.T, path string) []progresslog.Progress {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, _, err := progresslog.ReadAll(f, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// prediction is dedupsim's prediction of the fixture's query, as
// `simulate export` writes it: testdata/expected/dedup-events.jsonl.
func prediction(t *testing.T) []progresslog.Progress {
	return readRecords(t, "testdata/expected/dedup-events.jsonl")
}

// clone copies records deeply, so that a test can change one without
// touching the others.
func clone(recs []progresslog.Progress) []progresslog.Progress {
	out := slices.Clone(recs)
	for i := range out {
		out[i].StateOperators = slices.Clone(out[i].StateOperators)
		for j := range out[i].StateOperators {
			o := &out[i].StateOperators[j]
			o.CustomMetrics = maps.Clone(o.CustomMetrics)
		}
	}
	return out
}

// batchRec returns the executed record of batch id.
func batchRec(t *testing.T, recs []progresslog.Progress, id int64) *progresslog.Progress {
	t.Helper()
	for i := range recs {
		if recs[i].BatchID.Value == id && recs[i].DurationMs.AddBatch.OK {
			return &recs[i]
		}
	}
	t.Fatalf("no executed record of batch %d", id)
	return nil
}

func TestPredictionAgainstItselfIsEqual(t *testing.T) {
	for _, c := range []struct {
		name string
		recs []progresslog.Progress
	}{
		{"prediction", prediction(t)},
		{"spark", readRecords(t, filepath.Join(fixtures, "listener.jsonl"))},
	} {
		r := Compare(c.recs, c.recs, Options{})
		want := Counts{Batches: 26, Equal: 26}
		if r.Counts != want || !r.Equal() || len(r.Queries) != 1 || len(r.Queries[0].Differences) != 0 {
			t.Errorf("%s: counts %+v, %d queries, differences %+v; want %+v and none", c.name, r.Counts, len(r.Queries), r.Queries, want)
		}
		if v, want := r.Verdict(), "equal: 1 query, 26 batches, every counter matches"; v != want {
			t.Errorf("%s: verdict %q, want %q", c.name, v, want)
		}
	}
}

// The prediction against Spark's records of the same batches: the
// prediction holds only the compared fields, Spark's every field, a
// trigger that ran no batch and a restart.
func TestPredictionAgainstSparkIsEqual(t *testing.T) {
	r := Compare(prediction(t), readRecords(t, filepath.Join(fixtures, "listener.jsonl")), Options{})
	if !r.Equal() || r.Counts.Batches != 26 {
		t.Fatalf("verdict %q, counts %+v; want 26 equal batches", r.Verdict(), r.Counts)
	}
	a := r.Queries[0].Actual
	if a.Idle != 1 || a.Batches != 26 || a.Records != 27 || a.QueryID != "0f3c2a9e-5d41-4b8e-9c07-2e6f1a8b4d53" {
		t.Errorf("actual input %+v; want 27 records, 1 idle, 26 batches of query id 0f3c2a9e-...", a)
	}
}

func TestOneChangedCounterIsReportedWhereItIs(t *testing.T) {
	epoch := progresslog.Time{Time: time.Unix(0, 0).UTC(), Raw: "1970-01-01T00:00:00.000Z", OK: true}
	cases := []struct {
		field      string
		change     func(p *progresslog.Progress)
		want, got  Value
		wantDetail string
	}{
		{"numInputRows", func(p *progresslog.Progress) { p.NumInputRows.Value++ },
			Value{Present: true, Number: 44480}, Value{Present: true, Number: 44481},
			"numInputRows 44,480 expected, 44,481 actual"},
		{"eventTime.watermark", func(p *progresslog.Progress) { p.EventTime.Watermark = epoch },
			Value{Present: true, Text: "2024-05-01T09:52:46.860Z"}, Value{Present: true, Text: "1970-01-01T00:00:00.000Z"},
			"eventTime.watermark 2024-05-01T09:52:46.860Z expected, 1970-01-01T00:00:00.000Z actual"},
		{"stateOperators[0].operatorName", func(p *progresslog.Progress) { p.StateOperators[0].OperatorName = "dedupeWithinWatermark" },
			Value{Present: true, Text: "dedupe"}, Value{Present: true, Text: "dedupeWithinWatermark"},
			"stateOperators[0].operatorName dedupe expected, dedupeWithinWatermark actual"},
		{"stateOperators[0].numRowsTotal", func(p *progresslog.Progress) { p.StateOperators[0].NumRowsTotal.Value = 1_403_909 },
			Value{Present: true, Number: 403909}, Value{Present: true, Number: 1403909},
			"stateOperators[0].numRowsTotal 403,909 expected, 1,403,909 actual"},
		{"stateOperators[0].numRowsUpdated", func(p *progresslog.Progress) { p.StateOperators[0].NumRowsUpdated.Value-- },
			Value{Present: true, Number: 42613}, Value{Present: true, Number: 42612},
			"stateOperators[0].numRowsUpdated 42,613 expected, 42,612 actual"},
		{"stateOperators[0].numRowsRemoved", func(p *progresslog.Progress) { p.StateOperators[0].NumRowsRemoved = progresslog.Int{} },
			Value{Present: true, Number: 35122}, Value{},
			"stateOperators[0].numRowsRemoved 35,122 expected, absent actual"},
		{"stateOperators[0].numRowsDroppedByWatermark", func(p *progresslog.Progress) { p.StateOperators[0].NumRowsDroppedByWatermark.Value = 0 },
			Value{Present: true, Number: 88}, Value{Present: true, Number: 0},
			"stateOperators[0].numRowsDroppedByWatermark 88 expected, 0 actual"},
		{"stateOperators[0].customMetrics.numDroppedDuplicateRows", func(p *progresslog.Progress) {
			p.StateOperators[0].CustomMetrics["numDroppedDuplicateRows"] = 1778
		},
			Value{Present: true, Number: 1779}, Value{Present: true, Number: 1778},
			"stateOperators[0].customMetrics.numDroppedDuplicateRows 1,779 expected, 1,778 actual"},
	}
	for _, c := range cases {
		t.Run(c.field, func(t *testing.T) {
			exp := prediction(t)
			act := clone(readRecords(t, filepath.Join(fixtures, "listener.jsonl")))
			c.change(batchRec(t, act, 17))
			r := Compare(exp, act, Options{})
			want := []Difference{{BatchID: 17, Kind: Changed, Field: c.field, Expected: c.want, Actual: c.got}}
			if len(r.Queries) != 1 || !reflect.DeepEqual(r.Queries[0].Differences, want) {
				t.Fatalf("differences %+v\nwant %+v", r.Queries, want)
			}
			if r.Counts != (Counts{Batches: 26, Equal: 25, Different: 1}) || r.Equal() {
				t.Errorf("counts %+v, want 1 of 26 different", r.Counts)
			}
			verdict := "different: query dedup-events, first at batch 17 (" + c.wantDetail + "); 1 of 26 batches differs"
			if v := r.Verdict(); v != verdict {
				t.Errorf("verdict\n %q\nwant\n %q", v, verdict)
			}
		})
	}
}

// A counter outside the compared ones may differ freely.
func TestOtherFieldsAreIgnored(t *testing.T) {
	exp := readRecords(t, filepath.Join(fixtures, "listener.jsonl"))
	act := clone(exp)
	p := batchRec(t, act, 3)
	p.ID, p.RunID, p.Timestamp = "another", "another-run", progresslog.Time{}
	p.DurationMs.TriggerExecution.Value++
	p.EventTime.Max = progresslog.Time{}
	p.StateOperators[0].MemoryUsedBytes.Value++
	p.StateOperators[0].NumShufflePartitions.Value = 7
	p.StateOperators[0].CustomMetrics["rocksdbGetCount"] = 1
	p.Sources, p.Sink = nil, progresslog.Sink{}
	// The record of another query id that is the only one of its batch
	// would be left out; keep the query id and change the rest.
	p.ID = exp[0].ID
	r := Compare(exp, act, Options{})
	if !r.Equal() {
		t.Fatalf("verdict %q, want equal", r.Verdict())
	}
}

func TestMissingAndExtraBatches(t *testing.T) {
	exp := prediction(t)
	act := clone(readRecords(t, filepath.Join(fixtures, "listener.jsonl")))
	// Drop batch 5 from actual; add a batch 26 that expected lacks.
	act = slices.DeleteFunc(act, func(p progresslog.Progress) bool { return p.BatchID.Value == 5 })
	extra := *batchRec(t, act, 25)
	extra.BatchID.Value = 26
	act = append(act, extra)
	r := Compare(exp, act, Options{})
	want := []Difference{{BatchID: 5, Kind: Missing}, {BatchID: 26, Kind: Extra}}
	if !reflect.DeepEqual(r.Queries[0].Differences, want) {
		t.Fatalf("differences %+v, want %+v", r.Queries[0].Differences, want)
	}
	if c := r.Counts; c != (Counts{Batches: 27, Equal: 25, Different: 2, Missing: 1, Extra: 1}) {
		t.Errorf("counts %+v", c)
	}
	if v, want := r.Verdict(), "different: query dedup-events, first at batch 5 (missing in actual); 2 of 27 batches differ"; v != want {
		t.Errorf("verdict %q, want %q", v, want)
	}
}

// A query without a watermark has no eventTime.watermark; a query with
// one reports the epoch before its first batch moves it. The two differ;
// two spellings of one instant do not.
func TestWatermarkAbsentIsNotTheEpoch(t *testing.T) {
	rec := func(wm string) progresslog.Progress {
		p := progresslog.Progress{ID: "q", RunID: "r", Name: "within", BatchID: progresslog.Int{Value: 0, OK: true},
			DurationMs: progresslog.Durations{AddBatch: progresslog.Int{Value: 1, OK: true}}}
		if wm != "" {
			tm, err := time.Parse(time.RFC3339Nano, wm)
			if err != nil {
				t.Fatal(err)
			}
			p.EventTime.Watermark = progresslog.Time{Time: tm, Raw: wm, OK: true}
		}
		return p
	}
	cases := []struct {
		exp, act string
		equal    bool
	}{
		{"1970-01-01T00:00:00.000Z", "", false},
		{"", "1970-01-01T00:00:00.000Z", false},
		{"", "", true},
		{"2024-05-01T09:49:30.000Z", "2024-05-01T09:49:30Z", true},
		{"2024-05-01T09:49:30.000Z", "2024-05-01T11:49:30+02:00", true},
		{"2024-05-01T09:49:30.000Z", "2024-05-01T09:49:30.001Z", false},
	}
	for _, c := range cases {
		r := Compare([]progresslog.Progress{rec(c.exp)}, []progresslog.Progress{rec(c.act)}, Options{})
		if r.Equal() != c.equal {
			t.Errorf("watermark %q expected, %q actual: equal %v, want %v", c.exp, c.act, r.Equal(), c.equal)
			continue
		}
		if c.equal {
			continue
		}
		d := r.Queries[0].Differences
		if len(d) != 1 || d[0].Field != "eventTime.watermark" || d[0].Expected.Present != (c.exp != "") || d[0].Actual.Present != (c.act != "") {
			t.Errorf("watermark %q expected, %q actual: differences %+v", c.exp, c.act, d)
		}
	}
	r := Compare([]progresslog.Progress{rec("1970-01-01T00:00:00.000Z")}, []progresslog.Progress{rec("")}, Options{})
	if v, want := r.Verdict(), "different: query within, first at batch 0 (eventTime.watermark 1970-01-01T00:00:00.000Z expected, absent actual); 1 of 1 batch differs"; v != want {
		t.Errorf("verdict %q, want %q", v, want)
	}
}

func TestDifferentNumberOfOperators(t *testing.T) {
	exp := prediction(t)
	act := clone(readRecords(t, filepath.Join(fixtures, "listener.jsonl")))
	p := batchRec(t, act, 2)
	second := p.StateOperators[0]
	second.OperatorName = "stateStoreSave"
	p.StateOperators = append(p.StateOperators, second)
	p.StateOperators[0].NumRowsTotal.Value++ // the first is still compared
	r := Compare(exp, act, Options{})
	want := []Difference{
		{BatchID: 2, Kind: Changed, Field: "stateOperators", Expected: Value{Present: true, Number: 1}, Actual: Value{Present: true, Number: 2}},
		{BatchID: 2, Kind: Changed, Field: "stateOperators[0].numRowsTotal", Expected: Value{Present: true, Number: 126505}, Actual: Value{Present: true, Number: 126506}},
	}
	if !reflect.DeepEqual(r.Queries[0].Differences, want) {
		t.Fatalf("differences %+v\nwant %+v", r.Queries[0].Differences, want)
	}
	if v, want := r.Verdict(), "different: query dedup-events, first at batch 2 (number of stateOperators 1 expected, 2 actual, and 1 more); 1 of 26 batches differs"; v != want {
		t.Errorf("verdict %q, want %q", v, want)
	}
}

// A trigger that ran no batch carries a batchId but no
// durationMs.addBatch: it is ignored, even when it is the latest record
// of that batchId.
func TestIdleTriggersAreIgnored(t *testing.T) {
	exp := prediction(t)
	act := clone(readRecords(t, filepath.Join(fixtures, "listener.jsonl")))
	idle := *batchRec(t, act, 25)
	idle.DurationMs.AddBatch = progresslog.Int{}
	idle.NumInputRows.Value = 0
	idle.Timestamp.Time = idle.Timestamp.Time.Add(time.Second)
	act = append(act, idle)
	r := Compare(exp, act, Options{})
	if !r.Equal() || r.Queries[0].Actual.Idle != 2 {
		t.Fatalf("verdict %q, actual input %+v; want equal, 2 idle triggers", r.Verdict(), r.Queries[0].Actual)
	}
}

// Several records of one batch count once: the latest by timestamp, and
// of records with one timestamp the last read.
func TestRepeatedBatchCountsOnceLatestWins(t *testing.T) {
	exp := prediction(t)
	base := readRecords(t, filepath.Join(fixtures, "listener.jsonl"))
	wrong := *batchRec(t, clone(base), 4)
	wrong.StateOperators = slices.Clone(wrong.StateOperators)
	wrong.StateOperators[0].NumRowsRemoved.Value = 1

	// The same timestamp: the record read last wins.
	sameAfter := append(clone(base), wrong)
	sameBefore := append([]progresslog.Progress{wrong}, clone(base)...)
	// A later timestamp wins wherever it is read.
	later := wrong
	later.Timestamp.Time = later.Timestamp.Time.Add(time.Millisecond)
	laterFirst := append([]progresslog.Progress{later}, clone(base)...)
	cases := []struct {
		name  string
		act   []progresslog.Progress
		equal bool
	}{
		{"same timestamp, wrong one last", sameAfter, false},
		{"same timestamp, wrong one first", sameBefore, true},
		{"later timestamp read first", laterFirst, false},
	}
	for _, c := range cases {
		r := Compare(exp, c.act, Options{})
		if r.Equal() != c.equal || r.Counts.Batches != 26 || r.Queries[0].Actual.Repeated != 1 {
			t.Errorf("%s: verdict %q, counts %+v, actual %+v; want equal %v, 26 batches, 1 repeated",
				c.name, r.Verdict(), r.Counts, r.Queries[0].Actual, c.equal)
		}
	}
}

// A restart keeps the query id, gets a new runId and continues the batch
// ids: one query. Another query id with the same name is another run
// from scratch: only the one with the latest record is compared.
func TestRunsAndQueryIDs(t *testing.T) {
	exp := prediction(t)
	spark := readRecords(t, filepath.Join(fixtures, "listener.jsonl"))
	runs := map[string]bool{}
	for _, p := range spark {
		runs[p.RunID] = true
	}
	if len(runs) < 2 {
		t.Fatalf("the fixture holds %d runs, want a restart", len(runs))
	}
	// An earlier run from another checkpoint, every batch wrong and
	// one more batch than the compared run.
	var old []progresslog.Progress
	for _, p := range clone(spark) {
		if !p.DurationMs.AddBatch.OK {
			continue
		}
		p.ID, p.RunID = "old-query", "old-run"
		p.Timestamp.Time = p.Timestamp.Time.Add(-24 * time.Hour)
		p.NumInputRows.Value++
		old = append(old, p)
	}
	extra := old[len(old)-1]
	extra.BatchID.Value++
	old = append(old, extra)
	for _, act := range [][]progresslog.Progress{append(slices.Clone(old), spark...), append(slices.Clone(spark), old...)} {
		r := Compare(exp, act, Options{})
		in := r.Queries[0].Actual
		if !r.Equal() || in.OtherIDs != 1 || in.OtherIDRecords != 27 || in.QueryID != spark[1].ID {
			t.Errorf("verdict %q, actual input %+v; want equal, 1 other query id with 27 records left out", r.Verdict(), in)
		}
	}
}

func TestExtraQueries(t *testing.T) {
	exp := prediction(t)
	act := clone(readRecords(t, filepath.Join(fixtures, "listener.jsonl")))
	act = append(act, readRecords(t, filepath.Join(fixtures, "hdfs-pretty.json"))...)
	r := Compare(exp, act, Options{})
	if r.Equal() || len(r.Queries) != 2 || r.Queries[1].Name != "within-watermark" || r.Counts.Extra != 1 {
		t.Fatalf("verdict %q, counts %+v; want within-watermark's batch extra in actual", r.Verdict(), r.Counts)
	}
	if v, want := r.Verdict(), "different: query within-watermark, first at batch 412 (extra in actual); 1 of 27 batches differs, in 1 of 2 queries"; v != want {
		t.Errorf("verdict %q, want %q", v, want)
	}
	r = Compare(exp, act, Options{IgnoreExtraQueries: true})
	if !r.Equal() || len(r.Queries) != 1 || !slices.Equal(r.IgnoredQueries, []string{"within-watermark"}) {
		t.Errorf("with IgnoreExtraQueries: verdict %q, ignored %q; want equal, within-watermark ignored", r.Verdict(), r.IgnoredQueries)
	}
}

// Queries come by name, unnamed ones last; the verdict names the first
// query with a difference.
func TestQueriesInOrder(t *testing.T) {
	rec := func(name, id string, batch, rows int64) progresslog.Progress {
		return progresslog.Progress{ID: id, RunID: "r", Name: name, BatchID: progresslog.Int{Value: batch, OK: true},
			NumInputRows: progresslog.Int{Value: rows, OK: true},
			DurationMs:   progresslog.Durations{AddBatch: progresslog.Int{Value: 1, OK: true}}}
	}
	exp := []progresslog.Progress{rec("", "u", 0, 1), rec("zeta", "z", 0, 1), rec("alpha", "a", 0, 1), rec("alpha", "a", 1, 1), rec("mid", "m", 0, 1)}
	act := []progresslog.Progress{rec("mid", "m2", 0, 1), rec("zeta", "z", 0, 2), rec("", "u", 0, 3), rec("alpha", "a", 0, 1), rec("alpha", "a", 1, 1)}
	r := Compare(exp, act, Options{})
	var got []string
	for i := range r.Queries {
		got = append(got, r.Queries[i].Label())
	}
	if want := []string{"alpha", "mid", "zeta", "id u"}; !slices.Equal(got, want) {
		t.Errorf("queries %q, want %q", got, want)
	}
	if v, want := r.Verdict(), "different: query zeta, first at batch 0 (numInputRows 1 expected, 2 actual); 2 of 5 batches differ, in 2 of 4 queries"; v != want {
		t.Errorf("verdict %q, want %q", v, want)
	}
}

func TestBatchLimit(t *testing.T) {
	s := newSide(2)
	p := progresslog.Progress{ID: "q", RunID: "r", Name: "n", DurationMs: progresslog.Durations{AddBatch: progresslog.Int{Value: 1, OK: true}}}
	// Two batches, a repeat of the second, then a third batch.
	for i, c := range []struct {
		batch   int64
		wantErr bool
	}{{0, false}, {1, false}, {1, false}, {2, true}} {
		p.BatchID = progresslog.Int{Value: c.batch, OK: true}
		if err := s.add(&p); (err != nil) != c.wantErr {
			t.Errorf("record %d: error %v, want an error %v", i, err, c.wantErr)
		}
	}
}
