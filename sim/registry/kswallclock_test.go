package registry

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
)

// TestKafkaStreamsWallClockQuery checks a Kafka Streams wall-clock query
// (time: wall-clock, punctuate: P): its text, store, horizon and
// mechanism; that a sweep sets its window and keeps P; each bad key a
// KeyError on it; and the operator's clock: W = 60 s, P = 30 s, the task
// starting at the first row's arrival (0 s), so punctuations at 30 and
// 60 s. a at 0 s is new; its copy at 59 s is dropped (no refresh); the
// punctuation at 60 s (reached by State) deletes it (60 s old); its
// copy at 61 s is new again. The event times (here far in the future, then
// back to 0) play no part.
func TestKafkaStreamsWallClockQuery(t *testing.T) {
	spec := QuerySpec{Window: dur(time.Minute), Time: "wall-clock", Punctuate: dur(30 * time.Second)}
	sq, err := ScenarioQueryFor("kafka-streams", spec)
	if err != nil {
		t.Fatal(err)
	}
	if sq.Text != `{"engine":"kafka-streams","window":"1m","time":"wall-clock","punctuate":"30s"}` || sq.Store != "rocksdb-kv-store" ||
		!slices.Equal(sq.Keys, []string{"event_id"}) || len(sq.Warnings) == 0 {
		t.Errorf("query %q, store %q, keys %v, warnings %q", sq.Text, sq.Store, sq.Keys, sq.Warnings)
	}
	if sq.Horizon.Name != "W" || sq.Horizon.Value == nil || *sq.Horizon.Value != time.Minute || !strings.Contains(sq.Mechanism, "wall-clock") || !strings.Contains(sq.Mechanism, "W + 30s") {
		t.Errorf("horizon %+v, mechanism %q", sq.Horizon, sq.Mechanism)
	}
	if sw, err := SweptQueryFor("kafka-streams", spec, 2*time.Minute); err != nil || sw.Text != `{"engine":"kafka-streams","window":"2m","time":"wall-clock","punctuate":"30s"}` {
		t.Errorf("swept: %q, %v", sw.Text, err)
	}
	two := int64(2)
	for _, c := range []struct {
		spec QuerySpec
		key  string
	}{
		{QuerySpec{Window: dur(time.Minute), Time: "wall-clock"}, "punctuate"},
		{QuerySpec{Window: dur(time.Minute), Time: "wall-clock", Punctuate: dur(0)}, "punctuate"},
		{QuerySpec{Window: dur(time.Minute), Time: "wall-clock", Punctuate: dur(1500 * time.Microsecond)}, "punctuate"},
		{QuerySpec{Window: dur(time.Minute), Punctuate: dur(time.Second)}, "punctuate"},
		{QuerySpec{Window: dur(time.Minute), Time: "record", Punctuate: dur(time.Second)}, "punctuate"},
		{QuerySpec{Mode: "keep-last", Punctuate: dur(time.Second)}, "punctuate"},
		{QuerySpec{Window: dur(time.Minute), Time: "wall-clock", Punctuate: dur(time.Second), Partitions: &two}, "partitions"},
		{QuerySpec{Window: dur(0), Time: "wall-clock", Punctuate: dur(time.Second)}, "window"},
	} {
		_, err := ScenarioQueryFor("kafka-streams", c.spec)
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != c.key {
			t.Errorf("%+v: error %v, want a KeyError on %s", c.spec, err, c.key)
		}
	}
	op, err := sq.NewOperator()
	if err != nil {
		t.Fatal(err)
	}
	if op.Function() != "WallClockPunctuatedDedup" {
		t.Errorf("function %q", op.Function())
	}
	far := int64(1) << 40
	for _, r := range []struct {
		procMs, eventMs int64
		want            engines.Outcome
		state           int64
	}{{0, far, engines.Emitted, 1}, {59_000, far, engines.DroppedDuplicate, 1}, {61_000, 0, engines.Emitted, 1}} {
		if o, _ := op.Process([]byte("a"), nil, r.procMs, r.eventMs); o != r.want {
			t.Errorf("a at %d ms: %v, want %v", r.procMs, o, r.want)
		}
		if l, p := op.State(r.procMs); l != r.state || p != r.state {
			t.Errorf("state at %d ms: %d, %d; want %d", r.procMs, l, p, r.state)
		}
		if r.procMs == 59_000 {
			if l, _ := op.State(60_000); l != 0 {
				t.Errorf("state at 60 s: %d, want 0 (the punctuation deletes a, 60 s old)", l)
			}
		}
	}
	if c := op.Counters(); len(c) != 1 || c[0] != (Counter{"punctuations", 2}) {
		t.Errorf("counters %v, want punctuations 2", c)
	}
}

// BenchmarkWallClockOperator feeds the wall-clock query (W = 1 minute, P =
// 30 s) the stream of BenchmarkScenarioOperator (1,000 rows a second, one
// copy of an earlier id in ten, about a minute of ids in state), beside
// the stream-time window store (W = 2 minutes) as the baseline of the
// same run: each punctuation scans the whole store.
func BenchmarkWallClockOperator(b *testing.B) {
	for _, c := range []struct {
		name string
		spec QuerySpec
	}{
		{"stream", QuerySpec{Window: dur(2 * time.Minute)}},
		{"wall-clock", QuerySpec{Window: dur(time.Minute), Time: "wall-clock", Punctuate: dur(30 * time.Second)}},
	} {
		b.Run("time="+c.name, func(b *testing.B) {
			sq, err := ScenarioQueryFor("kafka-streams", c.spec)
			if err != nil {
				b.Fatal(err)
			}
			op, err := sq.NewOperator()
			if err != nil {
				b.Fatal(err)
			}
			key := make([]byte, 8)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				id := uint64(i)
				if i%10 == 9 {
					id = uint64(i - 5000)
				}
				binary.BigEndian.PutUint64(key, id)
				ms := 1_700_000_000_000 + int64(i)
				op.Process(key, nil, ms, ms)
				if i%10_000 == 0 {
					op.State(ms)
				}
			}
		})
	}
}
