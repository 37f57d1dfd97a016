package registry

import (
	"errors"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
)

// TestKafkaStreamsPartitions checks a Kafka Streams query's partitions
// key: the query text shows it (above one), a sweep keeps it, a count
// below 1 is a KeyError on it, and the operator runs one task per
// partition: among 2, "a" goes to partition 0 and "d" to 1
// (engines/kstreams/testdata/partitioner.tsv), so with W = 2 min the
// late d@50 s is looked up at its own partition's stream time (0 s) and
// dropped, where one task (stream time 300 s) forwards it.
func TestKafkaStreamsPartitions(t *testing.T) {
	two, one, zero := int64(2), int64(1), int64(0)
	sq, err := ScenarioQueryFor("kafka-streams", QuerySpec{Window: dur(2 * time.Minute), Partitions: &two})
	if err != nil || sq.Text != `{"engine":"kafka-streams","window":"2m","time":"stream","partitions":2}` {
		t.Fatalf("2 partitions: %q, %v", sq.Text, err)
	}
	if sq, err := ScenarioQueryFor("kafka-streams", QuerySpec{Window: dur(2 * time.Minute), Partitions: &one}); err != nil || sq.Text != `{"engine":"kafka-streams","window":"2m","time":"stream"}` {
		t.Errorf("1 partition: %q, %v", sq.Text, err)
	}
	if sq, err := SweptQueryFor("kafka-streams", QuerySpec{Window: dur(time.Hour), Partitions: &two}, time.Minute); err != nil || sq.Text != `{"engine":"kafka-streams","window":"1m","time":"stream","partitions":2}` {
		t.Errorf("swept: %q, %v", sq.Text, err)
	}
	_, err = ScenarioQueryFor("kafka-streams", QuerySpec{Window: dur(time.Minute), Partitions: &zero})
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Key != "partitions" || ke.Err.Error() != "must be from 1 to 65536 (the partitions of the topic keyed by the event id, one task each), got 0" {
		t.Errorf("0 partitions: %v", err)
	}
	for _, c := range []struct {
		spec *int64
		last engines.Outcome
	}{{&one, engines.Emitted}, {&two, engines.DroppedDuplicate}} {
		sq, err := ScenarioQueryFor("kafka-streams", QuerySpec{Window: dur(2 * time.Minute), Partitions: c.spec})
		if err != nil {
			t.Fatal(err)
		}
		op, err := sq.NewOperator()
		if err != nil {
			t.Fatal(err)
		}
		var last engines.Outcome
		for _, r := range []struct {
			key string
			s   int64
		}{{"a", 0}, {"d", 0}, {"a", 300}, {"d", 50}} {
			last, _ = op.Process([]byte(r.key), nil, 0, r.s*1000)
		}
		// One task: a@300 deletes segment 0 (a@0, d@0), then a@300 and
		// d@300 remain. Two: a@300 (partition 0), d@0 and d@50
		// (partition 1).
		want := map[int64]int64{1: 2, 2: 3}[*c.spec]
		if l, p := op.State(0); last != c.last || l != want || p != want {
			t.Errorf("%d partitions: d@50 %v, state %d, %d; want %v, %d, %d", *c.spec, last, l, p, c.last, want, want)
		}
	}
}
