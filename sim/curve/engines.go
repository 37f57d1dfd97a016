package curve

import (
	"slices"
	"time"

	"github.com/dedupsim/dedupsim/engines/flink"
	"github.com/dedupsim/dedupsim/engines/kstreams"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/registry"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// checkRows reports whether query q of sc, a query of an engine that
// takes rows one at a time, reduces to thresholds on its horizon, and
// how; each rule that does not is refused with the reason.
func checkRows(sc *scenario.Scenario, q scenario.Query) (rowShape, error) {
	if err := q.NoHorizon(); err != nil {
		return rowShape{}, unsupported("%v", err)
	}
	sq, err := registry.ScenarioQueryFor(q.Engine, q.Spec())
	if err != nil {
		return rowShape{}, err
	}
	var cols []int
	for _, k := range sq.Keys {
		i := slices.IndexFunc(generators.Columns(), func(c generators.Column) bool { return c.Name == k })
		if i < 0 {
			return rowShape{}, unsupported("key %s is not a generated column", k)
		}
		cols = append(cols, i)
	}
	sh := rowShape{engine: q.Engine, keyCols: cols, partitions: 1}
	h, err := registry.HarnessOf(q.Engine)
	if err != nil {
		return rowShape{}, err
	}
	switch h.Curve {
	case registry.CurveStateTTL:
		return flinkShape(sh, sq)
	case registry.CurveWindowHalves:
		return kstreamsShape(sh, q)
	case registry.CurveTimerDuration:
		return beamShape(sh, q)
	}
	return rowShape{}, unsupported("a %s query", q.Engine)
}

// oneKey reports whether every copy of an event has the same key and no
// two events share one: event_id is among the key's columns and the
// others are columns a resend never changes.
func oneKey(cols []int) bool {
	return slices.Contains(cols, generators.ColEventID) && !slices.ContainsFunc(cols, func(c int) bool {
		return c != generators.ColEventID && c != generators.ColCustomerID && c != generators.ColPayload
	})
}

// flinkShape: Flink's proctime dedup without mini-batch. Keep-first
// (ProcTimeDeduplicateKeepFirstRowFunction) writes the key's flag when
// it emits, at the TTL clock (the arrival), and a later copy reads it
// alive while written + TTL > now (TtlUtils.expired): a copy g ms after
// the write is a duplicate iff TTL > g, i.e. at s seconds iff s >
// floor(g / 1000). Keep-last (ProcTimeDeduplicateKeepLastRowFunction)
// emits every copy (+I or +U) at any TTL. A key written at c0 is
// logical state while c0 + TTL - 1 >= now.
func flinkShape(sh rowShape, sq registry.ScenarioQuery) (rowShape, error) {
	op, err := sq.NewOperator()
	if err != nil {
		return rowShape{}, err
	}
	sh.clock, sh.a, sh.b, sh.cut = procClock, 1, 0, -1
	// The modelled heap bytes count the physical entries: expired ones
	// stay until a read or incremental cleanup removes them, and which
	// the cleanup visits depends on the TTL.
	sh.noState = "Flink's modelled heap bytes count expired entries that incremental cleanup has not reached yet, and which entries its walk reaches depends on the TTL"
	switch op.Function() {
	case flink.ProcTimeKeepFirst.ClassName():
	case flink.ProcTimeKeepLast.ClassName():
		sh.always = true
	case flink.ProcTimeMiniBatchKeepFirst.ClassName(), flink.ProcTimeMiniBatchKeepLast.ClassName():
		return rowShape{}, unsupported("a mini-batch Flink query (%s): a row's verdict comes at its bundle's flush, at the TTL clock of the flush, which the pass does not replay", op.Function())
	case flink.RowTimeKeepFirstInsertOnly.ClassName():
		return rowShape{}, unsupported("a rowtime keep-first Flink query (%s): its rows wait for the watermark, and a key's flag is written at the TTL clock of the watermark's tick that fires it, which the pass does not replay", op.Function())
	default:
		return rowShape{}, unsupported("a rowtime Flink query (%s): which copy a key keeps depends on the rowtimes as well as the TTL, which the pass does not replay", op.Function())
	}
	if !oneKey(sh.keyCols) {
		return rowShape{}, unsupported("PARTITION BY %v: event_id is not among the keys, or a key column a resend changes is, so one event can have several keys or two events one", sq.Keys)
	}
	return sh, nil
}

// kstreamsShape: Kafka Streams' window-store processor at stream time
// (FindDistinctEvents). A copy at its task's stream time t looks up
// [t - W/2, t + W - W/2] and puts the key at t, duplicate or not: the
// previous put, at the previous copy's stream time t0, is found iff t -
// t0 <= floor(W/2) (it is also visible and in a live segment then: t0 >=
// t - W/2 > t - W), i.e. at s seconds iff 1000 s >= 2 g. A put at a new
// window start is a new row, visible while t0 >= stream time - W + 1.
func kstreamsShape(sh rowShape, q scenario.Query) (rowShape, error) {
	switch {
	case q.Mode == "keep-last":
		return rowShape{}, unsupported("a keep-last Kafka Streams query has no window")
	case q.Time == "record":
		return rowShape{}, unsupported("a Kafka Streams query at record time: a put lands in a segment of max(W/2, 60 s) and is dropped when that segment is older than segmentId(stream time - W), a rounding of W that is no threshold on it")
	case q.Time == "wall-clock":
		return rowShape{}, unsupported("a Kafka Streams wall-clock query: its keys go at punctuations every P of wall-clock time, and which punctuation removes a key depends on W")
	case q.Time != "stream":
		return rowShape{}, unsupported("a Kafka Streams query at %q time", q.Time)
	}
	if q.Partitions != nil {
		sh.partitions = int(*q.Partitions)
	}
	sh.clock, sh.a, sh.b, sh.cut, sh.refresh = streamClock, 2, 1, -1, true
	return sh, nil
}

// partitionFor is the task of a Kafka Streams key (its partitioner).
func partitionFor(key []byte, n int) int { return kstreams.PartitionForKey(key, n) }

// beamShape: Beam's Deduplicate in the global window. The first element
// of a key sets its timer to the domain's time now + d (the processing
// time, or the input watermark: the largest event time before it) and
// is output; a later one is dropped while the timer has not fired, and
// a timer set for at fires once the time is past it (strictly): a copy
// g ms after the timer was set finds the key iff g <= d, i.e. at s
// seconds iff s >= ceil(g / 1000). A key set at c0 is state while c0 +
// d >= the domain's time at the sample.
func beamShape(sh rowShape, q scenario.Query) (rowShape, error) {
	if q.Window != nil && q.Window.Fixed != nil {
		return rowShape{}, unsupported("a Beam query in fixed windows: a copy in another window is another key, and the windows' garbage collection drops elements as late, which the pass does not replay")
	}
	sh.a, sh.b, sh.cut = 1, 1, 0
	switch q.TimeDomain {
	case "processing":
		sh.clock = procClock
	case "event":
		sh.clock = watermarkClock
	default:
		return rowShape{}, unsupported("a Beam query in the %q time domain", q.TimeDomain)
	}
	return sh, nil
}

// rowMin is the shortest horizon of the engines' curves: 1 s (Flink's
// TTL of 0 turns expiry off; Kafka Streams' W and Beam's d must be at
// least 1 ms).
const rowMin = time.Second
