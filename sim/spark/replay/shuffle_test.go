package replay

import (
	"strings"
	"testing"
)

// TestShufflePartitionsKey checks the trace key shufflePartitions: its
// default, its range, and that with more than one partition every column
// must hold one kind of value (rows are then hashed by their Spark types).
func TestShufflePartitionsKey(t *testing.T) {
	const q = `"query": "withWatermark(\"t\", \"1 second\").dropDuplicates([\"id\", \"t\"]).dropDuplicatesWithinWatermark([\"id\"])"`
	for _, tc := range []struct {
		trace string
		want  int
		err   string
	}{
		{`{` + q + `, "steps": [{"addData": [{"id": "a", "t": 1}, {"id": 1, "t": 2}]}]}`, 1, ""},
		{`{` + q + `, "shufflePartitions": 7, "steps": [{"addData": [{"id": 1, "t": 1}, {"id": 1.5, "t": 2}]}]}`, 7, ""},
		{`{` + q + `, "shufflePartitions": 0, "steps": []}`, 0, "shufflePartitions: 0; want 1 to 10000"},
		{`{` + q + `, "shufflePartitions": 10001, "steps": []}`, 0, "shufflePartitions: 10001; want 1 to 10000"},
		{`{` + q + `, "shufflePartitions": 2, "steps": [{"addData": [{"id": "a", "t": 1}]}, {"addData": [{"id": 1, "t": 2}]}]}`, 0,
			"steps[1].addData[0].id: a number where earlier rows hold a string"},
	} {
		tr, err := Load([]byte(tc.trace))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.trace, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.trace, err)
		}
		if tr.ShufflePartitions != tc.want {
			t.Errorf("%s: shufflePartitions %d, want %d", tc.trace, tr.ShufflePartitions, tc.want)
		}
	}
}

// TestRowSetHashesAsSpark checks HashKey against partitions real Spark
// computed: pyspark 3.5.9 and 4.3.0, pmod(hash(id, t), 200) with id
// StringType and t TimestampType (session time zone UTC) gave (a, 10 s)
// 104, (a, 11 s) 141, (a, 30 s) 13, (b, 30 s) 25, and pmod(hash(id), 200)
// gave a 170, b 161.
func TestRowSetHashesAsSpark(t *testing.T) {
	tr, err := Load([]byte(`{"query": "withWatermark(\"t\", \"1 second\").dropDuplicates([\"id\", \"t\"])", "shufflePartitions": 200,
		"steps": [{"addData": [{"id": "a", "t": 10}, {"id": "a", "t": 11}, {"id": "a", "t": 30}, {"id": "b", "t": 30}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rs := tr.Steps[0].Rows
	pmod := func(h int32) int { return int((int64(h)%200 + 200) % 200) }
	for i, want := range []int{104, 141, 13, 25} {
		if got := pmod(rs.HashKey(i, []int{0, 1})); got != want {
			t.Errorf("row %d: partition %d of 200, Spark %d", i, got, want)
		}
	}
	for i, want := range []int{170, 170, 170, 161} {
		if got := pmod(rs.HashKey(i, []int{0})); got != want {
			t.Errorf("row %d, id only: partition %d of 200, Spark %d", i, got, want)
		}
	}
}
