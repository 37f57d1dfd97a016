package flink

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	ef "github.com/dedupsim/dedupsim/engines/flink"
)

// TestParseSQL pins which queries Flink's planner turns into a dedup
// (RankUtil.canConvertToDeduplicate: ROW_NUMBER, rank range exactly 1, one
// time attribute in ORDER BY; ConstantRankNumberColumnRemoveRule lets the
// outer SELECT * keep rn), which into a Top-N rank, and which are errors.
func TestParseSQL(t *testing.T) {
	ta := DefaultTimeAttributes
	ok := []struct {
		sql  string
		want Query
	}{
		{"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1",
			Query{Keys: []string{"event_id"}, OrderBy: "proc_time", Order: ProcTime}},
		{"select a, b from (select *, row_number() over (partition by a, b order by event_time desc) rn from t) x where rn <= 1",
			Query{Keys: []string{"a", "b"}, OrderBy: "event_time", Order: RowTime, KeepLast: true}},
		{"SELECT *\n FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY `id` ORDER BY `event_time`) AS row_num FROM events) AS t\n WHERE row_num < 2;",
			Query{Keys: []string{"id"}, OrderBy: "event_time", Order: RowTime}},
		{"SELECT id FROM events QUALIFY ROW_NUMBER() OVER (ORDER BY proc_time DESC) = 1",
			Query{OrderBy: "proc_time", Order: ProcTime, KeepLast: true}},
	}
	for _, c := range ok {
		got, err := ParseSQL(c.sql, ta)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got  %+v\n want %+v", c.sql, got, c.want)
		}
	}
	topN := []string{
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY proc_time) AS rn FROM events) WHERE rn <= 3",
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY proc_time) AS rn FROM events) WHERE rn = 2",
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY event_time, v) AS rn FROM events) WHERE rn = 1",
	}
	for _, sql := range topN {
		_, err := ParseSQL(sql, ta)
		var e *TopNError
		if !errors.As(err, &e) {
			t.Errorf("%s: got %v, want a Top-N rank", sql, err)
		}
	}
	bad := map[string]string{
		"SELECT * FROM events": "no ROW_NUMBER() OVER",
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts) AS rn FROM events) WHERE rn = 1":        "ts is not a time attribute",
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY proc_time) AS rn FROM events)":              "must end with WHERE rn = 1",
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY proc_time) AS rn FROM events) WHERE x = 1":  "WHERE filters x, not the row number rn",
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY proc_time) AS rn FROM events) WHERE rn < 1": "keeps no row",
		"DELETE FROM events": "must start with SELECT",
		"SELECT * FROM (SELECT *, RANK() OVER (PARTITION BY id ORDER BY proc_time) AS rn FROM events) WHERE rn = 1":         "RANK() on streaming table is not supported currently",
		"SELECT * FROM (SELECT *, DENSE_RANK() OVER (PARTITION BY id ORDER BY event_time) AS rn FROM events) WHERE rn <= 2": "DENSE_RANK() on streaming table is not supported currently",
	}
	for sql, want := range bad {
		_, err := ParseSQL(sql, ta)
		var e *TopNError
		if err == nil || errors.As(err, &e) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", sql, err, want)
		}
	}
}

// TestParseDuration follows Flink's TimeUtils.parseDuration: a whole
// number and a label (ms when none), or ISO-8601, truncated to ms.
func TestParseDuration(t *testing.T) {
	ok := map[string]int64{
		"60 s": 60000, "60s": 60000, "10 min": 600000, "10m": 600000, "1 h": 3600000, "2 hours": 7200000,
		"1d": 86400000, "500": 500, "500 ms": 500, "3 millis": 3, "1500 µs": 1, "999 ns": 0,
		"7 seconds": 7000, "PT10S": 10000, "PT1M": 60000, "PT1.5S": 1500, "P1D": 86400000, " 5 SEC ": 5000,
	}
	for in, want := range ok {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"ten minutes", "10 minutes ago", "1.5 s", "-1 s", "", "10 fortnights", "PT"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q): want an error", in)
		}
	}
}

// TestParseDurationByVersion: Flink 2.0.2's TimeUtils.parseDuration reads
// only "number [unit]"; 2.1.0 on fall back to java.time.Duration.parse
// (signed parts, "," as the decimal point, a negative total refused).
func TestParseDurationByVersion(t *testing.T) {
	v20, v21 := ef.Version{Major: 2, Minor: 0}, ef.Version{Major: 2, Minor: 1}
	for _, in := range []string{"PT0.0105S", "PT1M", "P1D"} {
		if _, err := ParseDurationFor(in, v20); err == nil {
			t.Errorf("2.0: ParseDurationFor(%q): want an error", in)
		}
	}
	if got, err := ParseDurationFor("60 s", v20); err != nil || got != 60000 {
		t.Errorf("2.0: ParseDurationFor(60 s) = %d, %v", got, err)
	}
	ok := map[string]int64{
		"PT0.0105S": 10, "pt1m": 60000, "PT1,5S": 1500, "+PT1S": 1000, "PT1M-30S": 30000,
		"-PT0S": 0, "P1DT-23H": 3600000, "PT1.S": 1000, "P2D": 172800000,
	}
	for in, want := range ok {
		got, err := ParseDurationFor(in, v21)
		if err != nil || got != want {
			t.Errorf("2.1: ParseDurationFor(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"PT", "P", "PT-1S", "-PT1S", "P1DT", "PT1.0000000001S", "PT9223372036854775808S", "T1S"} {
		if got, err := ParseDurationFor(in, v21); err == nil {
			t.Errorf("2.1: ParseDurationFor(%q) = %d; want an error", in, got)
		}
	}
}

// TestExplain checks the operator named for each shape and version.
func TestExplain(t *testing.T) {
	q := func(order, dir string) string {
		return "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY " + order + " " + dir + ") AS rn FROM events) WHERE rn = 1"
	}
	mb := map[string]string{OptMiniBatch: "true", OptMiniBatchSize: "100", OptMiniBatchDelay: "1 s"}
	v20, v23 := ef.Version{Major: 2, Minor: 0}, ef.Newest()
	cases := []struct {
		sql  string
		opts map[string]string
		v    ef.Version
		want []string
	}{
		{q("proc_time", "ASC"), map[string]string{OptStateTTL: "1 min"}, v23, []string{"ProcTimeDeduplicateKeepFirstRowFunction", "60000 ms", "from a key's first copy", "outputInsertOnly=true"}},
		{q("proc_time", "DESC"), map[string]string{OptStateTTL: "1 min"}, v23, []string{"ProcTimeDeduplicateKeepLastRowFunction", "from a key's last copy", "without -U"}},
		{q("proc_time", "ASC"), mb, v23, []string{"ProcTimeMiniBatchDeduplicateKeepFirstRowFunction", "bundles of 100 rows", "outputInsertOnly=false"}},
		{q("event_time", "ASC"), nil, v23, []string{"RowTimeDeduplicateKeepFirstRowFunction", "numLateRecordsDropped", "never cleared"}},
		{q("event_time", "ASC"), nil, v20, []string{"RowTimeDeduplicateFunction", "no late filter", "Flink 2.1+ runs this query as RowTimeDeduplicateKeepFirstRowFunction"}},
		{q("event_time", "ASC"), mb, v23, []string{"RowTimeMiniBatchDeduplicateFunction", "no late filter"}},
		{q("event_time", "DESC"), nil, v23, []string{"RowTimeDeduplicateFunction", "ties: the later arrival wins"}},
		{strings.Replace(q("proc_time", "ASC"), "rn = 1", "rn <= 5", 1), nil, v23, []string{"a Top-N rank, not a dedup", "StreamExecRank"}},
	}
	for _, c := range cases {
		got, err := Explain(c.sql, DefaultTimeAttributes, c.opts, c.v, false)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s (%v, %s): %q missing from\n%s", c.sql, c.opts, c.v, w, got)
			}
		}
	}
}

// TestPlannerQueries checks dedupsim's choice of runtime function (or a
// Top-N rank) for the queries of testdata/planner/queries.json, whose
// "want" oracles/flink checks against Flink's own planner (explainSql).
func TestPlannerQueries(t *testing.T) {
	data, err := os.ReadFile("testdata/planner/queries.json")
	if err != nil {
		t.Fatal(err)
	}
	var qs []struct {
		Name, SQL, Version, Want string
		Options                  map[string]string
	}
	if err := json.Unmarshal(data, &qs); err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		v := ef.Newest()
		if q.Version != "" {
			if v, err = ef.ParseVersion(q.Version); err != nil {
				t.Fatal(err)
			}
		}
		got := ""
		parsed, err := ParseSQL(q.SQL, DefaultTimeAttributes)
		var topN *TopNError
		switch {
		case errors.As(err, &topN), err != nil && strings.Contains(err.Error(), "is not a time attribute"):
			got = "Rank"
		case err != nil && strings.HasPrefix(q.Want, "error: "):
			got = q.Want
			if !strings.Contains(err.Error(), strings.TrimPrefix(q.Want, "error: ")) {
				got = "error: " + err.Error()
			}
		case err != nil:
			t.Errorf("%s: %v", q.Name, err)
			continue
		default:
			o, err := ParseOptions(q.Options, v)
			if err != nil {
				t.Fatalf("%s: %v", q.Name, err)
			}
			got = Config(parsed, o, false, v).Function().ClassName()
		}
		if got != q.Want {
			t.Errorf("%s: %s, Flink picks %s", q.Name, got, q.Want)
		}
	}
}

// TestExplainKeepLastRepeats: explain says what an identical repeat does
// on each backend, with and without TTL (rule 2 of docs/flink.md).
func TestExplainKeepLastRepeats(t *testing.T) {
	sql := "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY proc_time DESC) AS rn FROM events) WHERE rn = 1"
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{nil, "only while that row was emitted as +I"},
		{map[string]string{OptStateBackend: "rocksdb"}, "RocksDB serializes the row before its kind is set"},
		{map[string]string{OptStateTTL: "1 s"}, "even one identical to the stored row"},
	} {
		got, err := Explain(sql, DefaultTimeAttributes, c.opts, NewestVersion(), false)
		if err != nil || !strings.Contains(got, c.want) {
			t.Errorf("options %v: explain %q, %v; want it to say %q", c.opts, got, err, c.want)
		}
	}
}
