package kstreams

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/kstreams"
	"github.com/dedupsim/dedupsim/generators"
)

// rec is one record of a hand-written stream: key and timestamp in
// seconds.
type rec struct {
	key string
	s   int64
}

// quietStream is the stream of TestQuietPartitionKeepsItsState. Among 2
// partitions, Kafka's partitioner sends a, b, c and e to partition 0 and
// d to partition 1 (engines/kstreams/testdata/partitioner.tsv, checked
// against Kafka 4.4.0), so partition 1 gets d@0 and then nothing until
// the late copy d@50.
var quietStream = []rec{{"a", 0}, {"d", 0}, {"b", 100}, {"c", 200}, {"e", 300}, {"a", 300}, {"d", 50}}

// TestQuietPartitionKeepsItsState checks, by hand (W = 2 min, stream
// time, segments of 60 s; times in seconds), that each partition has its
// own stream time, so a partition without records expires nothing.
//
// One task: c@200 moves stream time to 200 and deletes segment 0 (a@0,
// d@0: segment 0 < segmentId(200 - 120) = 1); e@300 deletes segment 1
// (b@100). a@300 finds no a in [240, 360] and is forwarded again; then
// rows c@200, e@300, a@300. The late copy d@50 is looked up at stream
// time 300, in [240, 360], finds nothing and is forwarded (a missed
// duplicate), stored at 300: 4 rows.
//
// Two partitions: partition 0 (a, b, c, e) goes as above: c@200, e@300,
// a@300, 3 rows, stream time 300. Partition 1 saw only d@0: its stream
// time stays 0 and d@0 stays (1 row), although the stream is at 300:
// 4 rows in all after a@300. The late d@50 moves partition 1's stream
// time to 50 only, is looked up in [-10, 110], finds d@0 and is dropped;
// stored at 50 beside d@0: 5 rows in all.
func TestQuietPartitionKeepsItsState(t *testing.T) {
	for _, key := range []string{"a", "b", "c", "e"} {
		if p := kstreams.PartitionForKey([]byte(key), 2); p != 0 {
			t.Fatalf("partition of %s among 2 = %d, the vectors say 0", key, p)
		}
	}
	if p := kstreams.PartitionForKey([]byte("d"), 2); p != 1 {
		t.Fatalf("partition of d among 2 = %d, the vectors say 1", p)
	}
	E, D := engines.Emitted, engines.DroppedDuplicate
	for _, c := range []struct {
		partitions int
		outcomes   []engines.Outcome
		// after a@300 (the 6th record) and at the end
		rows6, rowsEnd int64
	}{
		{1, []engines.Outcome{E, E, E, E, E, E, E}, 3, 4},
		{2, []engines.Outcome{E, E, E, E, E, E, D}, 4, 5},
	} {
		op, err := ScenarioQuery(120_000, kstreams.StreamTime, c.partitions).NewScenarioOperator()
		if err != nil {
			t.Fatal(err)
		}
		var got []engines.Outcome
		for i, r := range quietStream {
			got = append(got, op.Process([]byte(r.key), r.s*1000))
			if i != 5 {
				continue
			}
			if l, p := op.State(); l != c.rows6 || p != c.rows6 {
				t.Errorf("%d partitions, after a@300: state %d, %d; want %d, %d", c.partitions, l, p, c.rows6, c.rows6)
			}
			if c.partitions == 2 {
				if st, l, p := op.TaskState(0); st != 300_000 || l != 3 || p != 3 {
					t.Errorf("partition 0 after a@300: stream time %d, rows %d, %d; want 300000, 3, 3", st, l, p)
				}
				if st, l, p := op.TaskState(1); st != 0 || l != 1 || p != 1 {
					t.Errorf("partition 1 after a@300: stream time %d, rows %d, %d; want 0 (quiet), 1, 1 (d@0 kept)", st, l, p)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.outcomes) {
			t.Errorf("%d partitions: outcomes %v, want %v", c.partitions, got, c.outcomes)
		}
		if l, p := op.State(); l != c.rowsEnd || p != c.rowsEnd || op.DroppedRecords() != 0 {
			t.Errorf("%d partitions: final state %d, %d, dropped %d; want %d, %d, 0", c.partitions, l, p, op.DroppedRecords(), c.rowsEnd, c.rowsEnd)
		}
	}
}

// TestQuietPartitionRecordTime checks the same stream in record time:
// with one task the late d@50 is older than the store keeps (stream time
// 300, rows from 180 s + 1 ms): not found, forwarded, and its put into
// segment 0 dropped (dropped-records-total 1); 3 rows stay. With two
// partitions, partition 1's stream time is 50: d@0 is found, d@50 kept
// beside it (segment 0 >= segmentId(50 - 120) = -1, Java's truncating
// division): 3 + 2 rows, nothing dropped.
func TestQuietPartitionRecordTime(t *testing.T) {
	for _, c := range []struct {
		partitions int
		last       engines.Outcome
		rows       int64
		dropped    int64
	}{{1, engines.Emitted, 3, 1}, {2, engines.DroppedDuplicate, 5, 0}} {
		op, err := ScenarioQuery(120_000, kstreams.RecordTime, c.partitions).NewScenarioOperator()
		if err != nil {
			t.Fatal(err)
		}
		var last engines.Outcome
		for _, r := range quietStream {
			last = op.Process([]byte(r.key), r.s*1000)
		}
		if l, p := op.State(); last != c.last || l != c.rows || p != c.rows || op.DroppedRecords() != c.dropped {
			t.Errorf("%d partitions: d@50 %v, state %d, %d, dropped %d; want %v, %d, %d, %d", c.partitions, last, l, p, op.DroppedRecords(), c.last, c.rows, c.rows, c.dropped)
		}
	}
}

// genRecord is one record of a seeded stream: a UUID-like key of 36
// bytes (as a scenario serializes a uuid event_id) and a timestamp in ms.
type genRecord struct {
	key []byte
	ms  int64
}

// generated returns n records of about n/3 ids, each sent again a few
// times within minutes, with jittered and sometimes late timestamps.
func generated(seed uint64, n int) []genRecord {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []genRecord
	for i := 0; len(out) < n; i++ {
		id := []byte(fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), i))
		base := int64(i) * 300
		for c := rng.IntN(3); c >= 0 && len(out) < n; c-- {
			ms := max(base+rng.Int64N(600_000)-120_000, 0)
			out = append(out, genRecord{id, ms})
		}
	}
	// Shuffle locally: arrival order differs from event-time order.
	for i := range out {
		j := min(i+rng.IntN(50), len(out)-1)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// TestOnePartitionIsTheSingleTask checks that partitions 1 (and 0, the
// default) is exactly the single task that scenarios ran before
// partitions existed: one kstreams.Dedup fed every record, outcome,
// state and dropped puts alike after every record, on a seeded stream, in
// both time bases.
func TestOnePartitionIsTheSingleTask(t *testing.T) {
	recs := generated(7, 20_000)
	for _, base := range []kstreams.TimeBase{kstreams.StreamTime, kstreams.RecordTime} {
		for _, n := range []int{0, 1} {
			op, err := ScenarioQuery(90_000, base, n).NewScenarioOperator()
			if err != nil {
				t.Fatal(err)
			}
			single, _ := kstreams.NewDedup(90_000, base)
			dups, dropped := 0, int64(0)
			for i, r := range recs {
				got, want := op.Process(r.key, r.ms), single.Process(string(r.key), r.ms)
				l, p := op.State()
				if got != want || l != int64(single.Store().Len()) || p != int64(single.Store().PhysicalLen()) || op.DroppedRecords() != single.Store().DroppedRecords() {
					t.Fatalf("%s time, partitions %d, record %d: %v, state %d, %d; single task %v, %d, %d", base, n, i, got, l, p, want, single.Store().Len(), single.Store().PhysicalLen())
				}
				if got == engines.DroppedDuplicate {
					dups++
				}
				dropped = op.DroppedRecords()
			}
			if dups == 0 || (base == kstreams.RecordTime && dropped == 0) {
				t.Errorf("%s time: %d duplicates dropped, %d puts dropped: the stream exercises too little", base, dups, dropped)
			}
		}
	}
}

// TestPartitionsAreIndependentTasks checks the operator with 4 partitions
// against 4 single tasks fed by hand with the records of their partition
// (Kafka's partitioner on the key bytes): same outcomes, the states and
// dropped puts summed; and that a second run gives the same outcomes
// (determinism). Every partition gets records.
func TestPartitionsAreIndependentTasks(t *testing.T) {
	recs := generated(11, 20_000)
	const n = 4
	run := func() []engines.Outcome {
		op, err := ScenarioQuery(60_000, kstreams.RecordTime, n).NewScenarioOperator()
		if err != nil {
			t.Fatal(err)
		}
		var tasks [n]*kstreams.Dedup
		for i := range tasks {
			tasks[i], _ = kstreams.NewDedup(60_000, kstreams.RecordTime)
		}
		var per [n]int
		out := make([]engines.Outcome, 0, len(recs))
		for i, r := range recs {
			p := kstreams.PartitionForKey(r.key, n)
			per[p]++
			got, want := op.Process(r.key, r.ms), tasks[p].Process(string(r.key), r.ms)
			if got != want || op.Partition(r.key) != p {
				t.Fatalf("record %d: %v, want %v (partition %d)", i, got, want, p)
			}
			out = append(out, got)
		}
		var l, ph, dropped int64
		for _, d := range tasks {
			l += int64(d.Store().Len())
			ph += int64(d.Store().PhysicalLen())
			dropped += d.Store().DroppedRecords()
		}
		if gl, gp := op.State(); gl != l || gp != ph || op.DroppedRecords() != dropped {
			t.Errorf("state %d, %d, dropped %d; tasks summed %d, %d, %d", gl, gp, op.DroppedRecords(), l, ph, dropped)
		}
		for p, c := range per {
			if c < len(recs)/n/2 {
				t.Errorf("partition %d got %d of %d records", p, c, len(recs))
			}
		}
		return out
	}
	if a, b := run(), run(); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("two runs of the same stream differ")
	}
}

// TestPartitionsInQueries checks the partitions key of a query: explain
// takes it and says what it means, a trace with steps and keep-last
// refuse it, and a count below 1 is refused naming the key.
func TestPartitionsInQueries(t *testing.T) {
	q, err := LoadQuery([]byte(`{"engine": "kafka-streams", "window": "2 minutes", "partitions": 3}`))
	if err != nil || q.tasks() != 3 {
		t.Fatalf("query with 3 partitions: %v, %+v", err, q)
	}
	if text := q.QueryText(); text != `{"engine":"kafka-streams","window":"2m","time":"stream","partitions":3}` {
		t.Errorf("query text %s", text)
	}
	if text := ScenarioQuery(120_000, kstreams.StreamTime, 1).QueryText(); text != `{"engine":"kafka-streams","window":"2m","time":"stream"}` {
		t.Errorf("one partition's query text %s, want it as before partitions existed", text)
	}
	explain := strings.Join(q.Explain(), "\n")
	if !strings.Contains(explain, "tasks: 3,") || !strings.Contains(explain, "warning: each task's stream time moves only with its own partition's records") {
		t.Errorf("explain with 3 partitions:\n%s", explain)
	}
	if one := strings.Join(ScenarioQuery(120_000, kstreams.StreamTime, 1).Explain(), "\n"); strings.Contains(one, "tasks:") {
		t.Errorf("explain with one partition names tasks:\n%s", one)
	}
	for doc, want := range map[string]string{
		`{"engine": "kafka-streams", "window": "2m", "partitions": 0}`:                             "partitions: must be from 1 to 65536",
		`{"engine": "kafka-streams", "window": "2m", "partitions": -2}`:                            "got -2",
		`{"engine": "kafka-streams", "window": "2m", "partitions": 1.5}`:                           "partitions: 1.5, want a whole number",
		`{"engine": "kafka-streams", "mode": "keep-last", "partitions": 2}`:                        "partitions: only keep-first",
		`{"engine": "kafka-streams", "window": "2m", "partitions": 2, "steps": []}`:                "partitions: a trace runs on one task",
		`{"engine": "kafka-streams", "window": "2m", "partitions": 2, "steps": [{"records": []}]}`: "partitions: a trace runs on one task",
	} {
		_, err := LoadQuery([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", doc, err, want)
		}
	}
}

// TestScenarioKeysAreKafkaSerializedIDs checks that the key a scenario
// hands the operator is the event id as Kafka's serializers write it, so
// that the partition is the one Kafka would pick: a uuid event_id is its
// 36 characters (StringSerializer), an int one 8 bytes big-endian
// (LongSerializer). The partitions are those of
// engines/kstreams/testdata/partitioner.tsv, checked against Kafka:
// "3f1c6a0e-8b2d-4c71-9e43-5a7d2b19c0fe" goes to 0,1,0,1,0,3,5,5 and the
// long 42 to 0,0,1,0,2,4,6,0 among 1..8 partitions.
func TestScenarioKeysAreKafkaSerializedIDs(t *testing.T) {
	uuid := generators.Batch{IDs: generators.UUIDIDs, Rows: []generators.Row{{}}}
	copy(uuid.Rows[0].EventID[:], "3f1c6a0e-8b2d-4c71-9e43-5a7d2b19c0fe")
	ints := generators.Batch{IDs: generators.IntIDs, Rows: []generators.Row{{EventNum: 42}}}
	for _, c := range []struct {
		b    *generators.Batch
		want []int
	}{{&uuid, []int{0, 1, 0, 1, 0, 3, 5, 5}}, {&ints, []int{0, 0, 1, 0, 2, 4, 6, 0}}} {
		key := c.b.AppendKey(nil, 0, []int{generators.ColEventID})
		for n := 1; n <= 8; n++ {
			op, err := ScenarioQuery(60_000, kstreams.StreamTime, n).NewScenarioOperator()
			if err != nil {
				t.Fatal(err)
			}
			if p := op.Partition(key); p != c.want[n-1] {
				t.Errorf("key %x among %d partitions: %d, Kafka %d", key, n, p, c.want[n-1])
			}
		}
	}
}
