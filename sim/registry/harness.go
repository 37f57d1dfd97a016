package registry

import (
	"fmt"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/beam"
	"github.com/dedupsim/dedupsim/sim/flink"
	"github.com/dedupsim/dedupsim/sim/kstreams"
)

// Harness is everything the harness (plan, export, the run's summary and
// so the reports) knows of an engine besides its replay and explain: the
// one place these facts live, so that plan, cmd and the reports never name
// an engine.
type Harness struct {
	// Name is the engine's name (Spark's is Spark).
	Name string
	// HorizonName names the horizon plan searches: Spark's watermark
	// "delay", Flink's "state TTL", Kafka Streams' "window", Beam's
	// "duration".
	HorizonName string
	// StateBytes is true when the engine's model gives state bytes that a
	// memory budget can bound.
	StateBytes bool
	// PeakState names the peak state a memory budget bounds ("peak
	// state"), and PeakStateWhy the same in a reason, saying what the
	// bytes are.
	PeakState, PeakStateWhy string
	// BudgetNote is the note plan adds when a memory budget bounds the
	// engine's modelled bytes, saying what they are ("" when its model
	// says so itself, as Spark's).
	BudgetNote string
	// SizesCluster is true when plan sizes the engine's cluster
	// (--partitions, --executors, --cost, a spark: block) and writes its
	// review document (--out).
	SizesCluster bool
	// Exports is true when `simulate export` writes the engine's queries
	// as a job of the real engine (Spark's: a PySpark job).
	Exports bool
	// Counters are the engine's own counters as the reports show them, in
	// their columns' order (summary.json's engineCounterInfo).
	Counters []metrics.CounterInfo
	// Curve is how the one-pass curve (sim/curve) reads the verdicts of
	// the engine's row-at-a-time queries off their horizon; NoCurve when
	// it cannot (Spark's micro-batch queries have a pass of their own).
	Curve CurveRule
}

// CurveRule names the rule by which a copy's verdict is a threshold on an
// engine's horizon, for the one-pass curve (sim/curve).
type CurveRule int

const (
	// NoCurve: the curve has no row-at-a-time rule for the engine.
	NoCurve CurveRule = iota
	// CurveStateTTL: a key's state lives a TTL from its write on the
	// state's clock (Flink's proctime dedup).
	CurveStateTTL
	// CurveWindowHalves: a window store put again at every copy, read
	// W/2 either side of the stream time (Kafka Streams).
	CurveWindowHalves
	// CurveTimerDuration: a key forgotten when its timer, a duration after
	// its first copy, fires (Beam's Deduplicate).
	CurveTimerDuration
)

// physicalCounters are the physical state rows every engine other than
// Spark reports (the runner's peakPhysicalStateRows and
// finalPhysicalStateRows), with why its physical rows differ from its
// logical ones.
func physicalCounters(why string) []metrics.CounterInfo {
	return []metrics.CounterInfo{
		{Name: "peakPhysicalStateRows", Header: "peak physical state rows", Explanation: why},
		{Name: "finalPhysicalStateRows", Header: "final physical state rows", Explanation: why},
	}
}

// Harnesses returns every engine's harness facts, Spark first.
func Harnesses() []Harness {
	return []Harness{
		{Name: Spark, HorizonName: "delay", StateBytes: true, PeakState: "peak state", PeakStateWhy: "simulated peak state", SizesCluster: true, Exports: true},
		flinkHarness(),
		kstreamsHarness(),
		beamHarness(),
	}
}

// HarnessOf returns the harness facts of engine ("" is Spark); an engine
// the harness does not know is an error.
func HarnessOf(engine string) (Harness, error) {
	if engine == "" {
		engine = Spark
	}
	for _, h := range Harnesses() {
		if h.Name == engine {
			return h, nil
		}
	}
	_, err := Lookup(engine)
	if err == nil {
		err = fmt.Errorf("engine %s has no harness facts in sim/registry", engine)
	}
	return Harness{}, err
}

// CounterInfoFor returns the reports' headers and explanations of the
// counters a query of engine reports, physical state rows first; nil for
// Spark and an unknown engine.
func CounterInfoFor(engine string) []metrics.CounterInfo {
	h, err := HarnessOf(engine)
	if err != nil {
		return nil
	}
	return h.Counters
}

func flinkHarness() Harness {
	return Harness{
		Name: flink.Engine, HorizonName: "state TTL", StateBytes: true, Curve: CurveStateTTL,
		PeakState:    "modelled peak state",
		PeakStateWhy: "modelled peak state (an estimate of Flink's heap or RocksDB backend, as the query sets it, not a measurement)",
		BudgetNote:   "the memory budget bounds the peak of the modelled state bytes (docs/flink.md, State bytes: on the heap backend the entries, expired ones not yet cleaned up, the bucket arrays and a mini-batch bundle, from the classes' fields under compressed oops; on RocksDB the serialized entries with an estimated per-entry overhead, expired ones until a compaction): an estimate, not a measurement",
		Counters: append(physicalCounters("Flink keeps an expired entry until a read or the incremental cleanup removes it (heap backend) or a compaction drops it (RocksDB)."),
			metrics.CounterInfo{Name: "numLateRecordsDropped", Header: "late records dropped (Flink)",
				Explanation: "late records dropped is Flink's numLateRecordsDropped: rows a 2.1+ rowtime keep-first dropped behind the watermark."},
			metrics.CounterInfo{Name: "insertsEmitted", Header: "+I rows (Flink)", Explanation: flinkChangelogNote},
			metrics.CounterInfo{Name: "updatesEmitted", Header: "+U rows (Flink)", Explanation: flinkChangelogNote},
			metrics.CounterInfo{Name: "retractionsEmitted", Header: "-U rows: retractions (Flink)", Explanation: flinkChangelogNote}),
	}
}

// flinkChangelogNote explains the three changelog counters of a Flink
// query at once.
const flinkChangelogNote = "+I, +U and -U rows are the changelog rows a Flink query emitted by kind: +I a key's first row (or its first after its state expired), " +
	"+U a row replacing the one emitted for its key (keep-last, and the rowtime changelog functions of 2.0 keep-first and mini-batch); " +
	"the run's sink appends, so a +U for an event already emitted is also a missed duplicate, and it needs no -U rows (generateUpdateBefore false), so retractions are 0."

func kstreamsHarness() Harness {
	return Harness{
		Name: kstreams.Engine, HorizonName: "window", Curve: CurveWindowHalves, PeakState: "peak state", PeakStateWhy: "simulated peak state",
		Counters: append(physicalCounters("Kafka Streams' window store keeps a row until its whole segment is older than the retention, while all() shows only the rows of the last window."),
			metrics.CounterInfo{Name: "droppedRecordsTotal", Header: "dropped records (Kafka Streams)",
				Explanation: "dropped records is Kafka Streams' dropped-records-total: puts the window store dropped because their segment had already expired, so their keys were never remembered."},
			metrics.CounterInfo{Name: "punctuations", Header: "punctuations (Kafka Streams wall-clock)",
				Explanation: "punctuations counts a Kafka Streams wall-clock query's purges, each deleting the keys a window W old or older."}),
	}
}

func beamHarness() Harness {
	return Harness{
		Name: beam.Engine, HorizonName: "duration", Curve: CurveTimerDuration, PeakState: "peak state", PeakStateWhy: "simulated peak state",
		Counters: append(physicalCounters("Beam clears a key when its timer fires, so the two are the same."),
			metrics.CounterInfo{Name: "timersFired", Header: "timers fired (Beam)",
				Explanation: "timers fired counts Beam's expiry timers, each forgetting one key."},
			metrics.CounterInfo{Name: "droppedDueToLateness", Header: "dropped due to lateness (Beam)",
				Explanation: "dropped due to lateness is the DirectRunner's DroppedDueToLateness: elements whose fixed window was already gone (its garbage-collection time before the watermark)."}),
	}
}
