package flink

import (
	"fmt"
	"maps"
	"math"
	"strings"

	"github.com/dedupsim/dedupsim/engines"
	ef "github.com/dedupsim/dedupsim/engines/flink"
	"github.com/dedupsim/dedupsim/generators"
)

// OptVersion is the key of a scenario query's options that selects the
// Flink version (2.0 ... 2.3, default the newest); it is dedupsim's, not
// one of Flink's configuration keys, and the same value as a trace's
// "version".
const OptVersion = "version"

// OptWatermark is the key of a scenario query's options that gives the
// delay d of the events table's SQL watermark, `WATERMARK FOR event_time
// AS event_time - INTERVAL d`, as a Flink duration ("5 s"): it is
// dedupsim's key, since the scenario declares no table. A rowtime query
// needs it (without a WATERMARK, event_time is no time attribute and
// Flink plans a Top-N rank); a proctime query refuses it.
const OptWatermark = "watermark"

// OptWatermarkInterval is Flink's pipeline.auto-watermark-interval: the
// period of the watermark assigner's processing-time timer (default
// DefaultWatermarkInterval; 0 turns the timer off).
const OptWatermarkInterval = "pipeline.auto-watermark-interval"

// DefaultWatermarkInterval is pipeline.auto-watermark-interval's default
// in Flink 2.x (PipelineOptions.AUTO_WATERMARK_INTERVAL): 200 ms.
const DefaultWatermarkInterval int64 = 200

// ScenarioQuery is a Flink query as `simulate run` runs it on generated
// rows: its PARTITION BY columns and the configuration of its operator.
type ScenarioQuery struct {
	// Keys are the PARTITION BY columns.
	Keys []string
	// Config is the operator's configuration.
	Config ef.Config
	// Watermark is a rowtime query's SQL watermark: its delay and the
	// auto-watermark interval, in milliseconds.
	Watermark Watermark
	// MiniBatchInterval is a mini-batch query's
	// table.exec.mini-batch.allow-latency (ms): the interval of its
	// mini-batch assigner (processing time for a proctime query, event
	// time for a rowtime one), whose watermarks flush the bundle.
	MiniBatchInterval int64
}

// Watermark is the SQL watermark of a rowtime query's table: Flink's
// WatermarkAssignerOperator over `WATERMARK FOR event_time AS event_time
// - INTERVAL Delay`, which the planner places before the dedup.
type Watermark struct {
	// Delay is the interval subtracted from the row's event time (ms).
	Delay int64
	// Interval is pipeline.auto-watermark-interval (ms); 0: no timer.
	Interval int64
}

// ParseScenarioQuery reads a scenario's Flink query and its options
// (Flink's keys verbatim, plus OptVersion) against the generated rows'
// time attributes (DefaultTimeAttributes). A rowtime query needs
// OptWatermark, its table's watermark delay, and may set
// OptWatermarkInterval. A mini-batch query needs
// table.exec.mini-batch.allow-latency above 0 (Flink's planner checks it)
// beside table.exec.mini-batch.size; its operator runs the planner's
// mini-batch assigner (minibatch.go). The sink is append-only, so no -U
// rows are generated.
func ParseScenarioQuery(sql string, opts map[string]string) (ScenarioQuery, error) {
	q, err := ParseSQL(sql, DefaultTimeAttributes)
	if err != nil {
		return ScenarioQuery{}, err
	}
	flinkOpts := maps.Clone(opts)
	v := ef.Newest()
	if s, ok := flinkOpts[OptVersion]; ok {
		if v, err = ef.ParseVersion(strings.TrimSpace(s)); err != nil {
			return ScenarioQuery{}, fmt.Errorf("option %s: %w", OptVersion, err)
		}
		delete(flinkOpts, OptVersion)
	}
	wm, err := parseWatermark(q, flinkOpts, v)
	if err != nil {
		return ScenarioQuery{}, err
	}
	o, err := ParseOptions(flinkOpts, v)
	if err != nil {
		return ScenarioQuery{}, err
	}
	if o.MiniBatch && o.AllowLatencyMs <= 0 {
		return ScenarioQuery{}, fmt.Errorf("option %s must be above 0 when %s is true, such as \"1 s\" (Flink's planner checks it: \"MiniBatch Latency must be greater than 0 ms.\")", OptMiniBatchDelay, OptMiniBatch)
	}
	if len(q.Keys) == 0 {
		return ScenarioQuery{}, fmt.Errorf("a dedup without PARTITION BY (one global key) is not yet supported in scenarios: want PARTITION BY event_id or other columns")
	}
	cfg := Config(q, o, false, v)
	// A job's heap backend runs incremental cleanup with Flink's default
	// settings (a replay's physicalState leaves it out: an upper bound);
	// RocksDB runs none (its compactions are estimated: rocksCompactBytes).
	if !o.RocksDB {
		cfg.CleanupSize = ef.DefaultCleanupSize
	}
	sq := ScenarioQuery{Keys: q.Keys, Config: cfg, Watermark: wm}
	if o.MiniBatch {
		sq.MiniBatchInterval = o.AllowLatencyMs
	}
	return sq, nil
}

// parseWatermark reads and deletes OptWatermark and OptWatermarkInterval
// from opts: a rowtime query must set the watermark, a proctime query
// may set neither. The interval, a Flink option, is read as version v
// reads durations; the delay, the SQL INTERVAL, with the newest grammar.
func parseWatermark(q Query, opts map[string]string, v ef.Version) (Watermark, error) {
	wm := Watermark{Interval: DefaultWatermarkInterval}
	delay, hasDelay := opts[OptWatermark]
	interval, hasInterval := opts[OptWatermarkInterval]
	delete(opts, OptWatermark)
	delete(opts, OptWatermarkInterval)
	if q.Order != RowTime {
		k := OptWatermark
		if !hasDelay {
			k = OptWatermarkInterval
		}
		if hasDelay || hasInterval {
			return wm, fmt.Errorf("option %s: only a rowtime query (ORDER BY %s) reads a watermark; this one orders by %s", k, DefaultTimeAttributes.RowTime, q.OrderBy)
		}
		return wm, nil
	}
	if !hasDelay {
		return wm, fmt.Errorf("ORDER BY %s needs option %s, the delay d of the table's WATERMARK FOR %s AS %s - INTERVAL d, such as \"5 s\" (without a watermark Flink plans a Top-N rank, not a dedup)", q.OrderBy, OptWatermark, DefaultTimeAttributes.RowTime, DefaultTimeAttributes.RowTime)
	}
	var err error
	if wm.Delay, err = ParseDuration(delay); err != nil {
		return wm, fmt.Errorf("option %s: %w", OptWatermark, err)
	}
	if hasInterval {
		if wm.Interval, err = ParseDurationFor(interval, v); err != nil {
			return wm, fmt.Errorf("option %s: %w", OptWatermarkInterval, err)
		}
	}
	return wm, nil
}

// ScenarioOperator runs one ScenarioQuery's operator row by row. A
// rowtime query runs behind its table's watermark assigner (Flink's
// WatermarkAssignerOperator, flink-table-runtime 2.3.0), fed the rows'
// event times:
//
//   - the assigner's watermark is the largest event time seen minus the
//     delay (the SQL expression's value, no minus one: the generated
//     WatermarkGenerator returns event_time - INTERVAL d as is), starting
//     at 0 and emitted only when above the last one emitted;
//   - it is emitted after the row that raised it when it is more than the
//     auto-watermark interval above the last one emitted (processElement's
//     eager emission), else at the next tick of the interval's
//     processing-time timer, which fires at Open + k × interval;
//   - a bounded input ends with the maximum watermark (finish).
//
// The dedup sees a watermark at the processing time it is emitted: the
// 2.1+ keep-first's timers emit their waiting rows then, and write the
// emitted flags with that TTL time. A tick at a row's arrival fires
// before the row.
//
// Worked example (delay 5 s, interval 200 ms, opened at 0; rows are
// arrival/event time in ms): a 1000/10000 raises the watermark from 0 to
// 5000, more than 200 above the last emitted (0): emitted after a, a
// waits (10000 > 5000). b 1100/10150 raises it to 5150, not more than
// 200 above 5000: held, emitted by the tick at 1200. c 1250/4000 is below
// 5150: dropped late.
type ScenarioOperator struct {
	op  *ef.Operator
	out []ef.Change
	seq int // the ID of the last row fed
	// compare is set when the function compares rows (keep-last without
	// TTL): only then is the row's value copied.
	compare bool
	// keys is the number of PARTITION BY columns; entryBytes the heap
	// bytes of one entry (HeapEntryBytes; RocksDB: RocksEntryBytes), set
	// at the first row, when the key's and the row's sizes are known.
	keys       int
	entryBytes int64
	// keyHeap and rowHeap are the heap bytes of a key's and of a row's
	// BinaryRowData copy (a mini-batch bundle holds both), set with
	// entryBytes.
	keyHeap, rowHeap int64
	// On RocksDB: the bytes of a delete (a tombstone: key, internal key
	// and block overhead) and the written bytes (puts and deletes) at the
	// last estimated compaction (rocksCompactBytes).
	// compactEvery is rocksCompactBytes (tests lower it).
	rocksDeleteBytes, compactedAt, compactEvery int64
	cfg                                         ef.Config
	// The watermark assigner of a rowtime query: its current and last
	// emitted watermarks and the processing time of its last tick.
	rowTime            bool
	wm                 Watermark
	current, emittedWm int64
	lastTick           int64
	// deferred: the last row fed waits for the watermark; verdicts are
	// the verdicts reached on waiting rows since Verdicts last took them.
	deferred bool
	verdicts []Verdict
	// ahead: the last row fed was dropped late behind a watermark ahead
	// of its arrival minus the delay.
	ahead bool
	// A mini-batch query's assigner (miniBatch set): its interval, its
	// last emitted watermark and the time of its next timer (proctime)
	// or its next mini-batch end (rowtime); pending numbers the rows of
	// the current bundle, in order, and emittedIDs is scratch for a
	// flush's emitted rows.
	miniBatch    bool
	mbInterval   int64
	mbWm, mbNext int64
	// mbCur is the rowtime mini-batch assigner's largest watermark
	// received (mbNext its next mini-batch end).
	mbCur      int64
	pending    []int
	emittedIDs []int
	// changelog counts the changelog rows the function emitted, by kind.
	changelog Changelog
}

// Changelog counts the changelog rows a query's function emitted, by
// kind: the counters a Flink query's summary reports (engineCounters
// insertsEmitted, updatesEmitted and retractionsEmitted).
type Changelog struct {
	// Inserts are +I rows: a key's first row (or its first after expiry).
	Inserts int64
	// Updates are +U rows: keep-last's later rows, a rowtime changelog
	// function's replacement of its kept row.
	Updates int64
	// Retractions are -U rows, each before a +U when the sink needs
	// them (GenerateUpdateBefore): never in a scenario, whose append sink
	// does not.
	Retractions int64
}

// tally adds the changelog rows of s.out to s.changelog; every call of
// the operator that fills s.out is followed by one.
func (s *ScenarioOperator) tally() {
	for _, c := range s.out {
		switch c.Kind {
		case ef.Insert:
			s.changelog.Inserts++
		case ef.UpdateAfter:
			s.changelog.Updates++
		case ef.UpdateBefore:
			s.changelog.Retractions++
		}
	}
}

// Changelog returns the changelog rows emitted so far, by kind.
func (s *ScenarioOperator) Changelog() Changelog { return s.changelog }

// Verdict is the outcome of a row whose outcome came after it (a waiting
// row of the 2.1+ rowtime keep-first): Row is its number, from 1, in the
// order the rows were fed.
type Verdict struct {
	Row     int
	Outcome engines.Outcome
}

// NewOperator returns a fresh operator for sq, its TTL clock at 0 and its
// watermark assigner opened at processing time 0.
func (sq ScenarioQuery) NewOperator() (*ScenarioOperator, error) {
	op, err := ef.New(sq.Config)
	if err != nil {
		return nil, err
	}
	return &ScenarioOperator{op: op, compare: sq.Config.KeepLast && sq.Config.TTL == 0 && !sq.Config.RowTime, keys: len(sq.Keys), cfg: sq.Config,
		rowTime: sq.Config.RowTime, wm: sq.Watermark, miniBatch: sq.Config.MiniBatch, mbInterval: sq.MiniBatchInterval, compactEvery: rocksCompactBytes}, nil
}

// Function returns the Java class name of the runtime function.
func (s *ScenarioOperator) Function() string { return s.op.Function().ClassName() }

// Defers reports whether the operator decides some rows after they
// arrive: the 2.1+ rowtime keep-first, whose rows wait for the watermark,
// and a mini-batch function, whose rows wait for the bundle's flush.
func (s *ScenarioOperator) Defers() bool {
	return s.op.Function() == ef.RowTimeKeepFirstInsertOnly || s.miniBatch
}

// CountsLate reports whether the function counts numLateRecordsDropped:
// the 2.1+ rowtime keep-first.
func (s *ScenarioOperator) CountsLate() bool { return s.op.Function() == ef.RowTimeKeepFirstInsertOnly }

// Open opens the watermark assigner at processing time procMs: its timer
// ticks at procMs + k × the auto-watermark interval. A proctime
// mini-batch assigner's first timer is at procMs + the allow-latency; a
// rowtime one's first mini-batch ends at the allow-latency - 1.
func (s *ScenarioOperator) Open(procMs int64) {
	s.lastTick = procMs
	s.mbNext = procMs + s.mbInterval
	if s.rowTime {
		// RowTimeMiniBatchAssginerOperator.open: the first mini-batch's end.
		s.mbNext = s.mbInterval - 1
	}
}

// Process feeds one row at processing time procMs (the TTL clock) with
// event time eventMs (a rowtime query's rowtime): key encodes its
// PARTITION BY columns, value the whole row (keep-last without TTL
// compares it). It returns the row's outcome, Emitted when the operator
// emitted a row carrying it (+I, or keep-last's +U), DroppedLate when the
// 2.1+ keep-first dropped it behind the watermark, else DroppedDuplicate,
// and the number of changelog rows emitted. A row that waits for the
// watermark or, under mini-batch, for its bundle's flush (Deferred) is
// DroppedDuplicate until its Verdict comes; the rows a watermark or a
// flush emits are counted by their verdicts, not here.
func (s *ScenarioOperator) Process(key, value []byte, procMs, eventMs int64) (engines.Outcome, int) {
	if s.entryBytes == 0 {
		s.entryBytes = s.heapEntryBytes(len(key), len(value))
	}
	if s.miniBatch && s.rowTime {
		return s.processRowTimeMiniBatch(key, procMs, eventMs)
	}
	if s.miniBatch {
		return s.processMiniBatch(key, value, procMs, eventMs)
	}
	if s.rowTime {
		s.tick(procMs)
	}
	s.op.SetTTLTime(procMs)
	s.seq++
	var v []byte
	if s.compare {
		v = value
	}
	late := s.op.LateDropped()
	s.out = s.op.ProcessBytes(key, v, eventMs, s.seq, s.out[:0])
	s.tally()
	s.compactIfDue()
	outcome, n := engines.DroppedDuplicate, len(s.out)
	s.deferred, s.ahead = false, false
	if s.op.LateDropped() > late {
		outcome = engines.DroppedLate
		s.ahead = s.op.CurrentWatermark() > procMs-s.wm.Delay
	} else if waits, displaced, ok := s.op.Waiting(); waits {
		s.deferred = true
		if ok {
			s.verdicts = append(s.verdicts, Verdict{displaced, engines.DroppedDuplicate})
		}
	}
	for _, c := range s.out {
		if c.Row.ID == s.seq && c.Kind != ef.UpdateBefore {
			outcome = engines.Emitted
			break
		}
	}
	if s.rowTime {
		// The assigner forwards the row, then may emit its watermark.
		s.current = max(s.current, eventMs-s.wm.Delay)
		if s.current-s.emittedWm > s.wm.Interval {
			s.emit(s.current)
		}
	}
	return outcome, n
}

// tick runs the assigner's timer ticks up to procMs: the first tick
// after the last emits a watermark held back; the ones after it find
// nothing new (no row came in between).
func (s *ScenarioOperator) tick(procMs int64) {
	iv := s.wm.Interval
	if iv <= 0 || procMs < s.lastTick+iv {
		return
	}
	first := s.lastTick + iv
	s.lastTick += (procMs - s.lastTick) / iv * iv
	if s.current > s.emittedWm {
		s.op.SetTTLTime(first)
		s.emit(s.current)
	}
}

// emit sends watermark w to the dedup at the current TTL time; the rows
// its timers emit get their verdicts.
func (s *ScenarioOperator) emit(w int64) {
	s.emittedWm = w
	if s.miniBatch {
		s.forwardRowTime(w)
		return
	}
	s.out = s.op.Watermark(w, s.out[:0])
	s.tally()
	s.collect()
}

// collect records the rows a watermark emitted as Emitted verdicts.
func (s *ScenarioOperator) collect() {
	for _, c := range s.out {
		if c.Kind == ef.Insert {
			s.verdicts = append(s.verdicts, Verdict{c.Row.ID, engines.Emitted})
		}
	}
}

// Deferred reports whether the last row fed waits for the watermark: its
// outcome is a later Verdict.
func (s *ScenarioOperator) Deferred() bool { return s.deferred }

// LateAhead reports whether the last row fed was dropped late behind a
// watermark ahead of its arrival minus the watermark's delay, which only
// a row stamped in the future can cause: every other row's event time is
// at or before its arrival, so the largest of them minus the delay is at
// or before the arrival minus the delay. Its event, if lost, is lost to a
// bad clock, as metrics.Accountant.ObserveBatch counts it.
func (s *ScenarioOperator) LateAhead() bool { return s.ahead }

// Verdicts appends the verdicts reached since the last call to dst and
// forgets them.
func (s *ScenarioOperator) Verdicts(dst []Verdict) []Verdict {
	dst = append(dst, s.verdicts...)
	s.verdicts = s.verdicts[:0]
	return dst
}

// End ends the input at processing time procMs: the assigner's finish
// sends the maximum watermark, which fires every waiting row's timer.
func (s *ScenarioOperator) End(procMs int64) {
	if s.miniBatch && !s.rowTime {
		// The timers up to procMs, then the maximum watermark, which the
		// mini-batch assigner forwards: the bundle's last flush.
		s.tickMiniBatch(procMs)
		s.mbWm = math.MaxInt64
		s.flush(procMs)
		return
	}
	if !s.rowTime {
		return
	}
	s.tick(procMs)
	s.op.SetTTLTime(procMs)
	s.current = math.MaxInt64
	s.emit(math.MaxInt64)
}

// LateDropped returns numLateRecordsDropped: the rows the 2.1+ rowtime
// keep-first dropped behind the watermark.
func (s *ScenarioOperator) LateDropped() int64 { return s.op.LateDropped() }

// State returns the operator's entries at processing time procMs, after
// the watermark timer's ticks up to it: logical (a read would see them)
// and physical (expired entries that neither a read nor incremental
// cleanup removed yet are counted too).
func (s *ScenarioOperator) State(procMs int64) (logical, physical int64) {
	if s.rowTime {
		s.tick(procMs)
	}
	if s.miniBatch && !s.rowTime {
		s.tickMiniBatch(procMs)
	}
	s.op.SetTTLTime(procMs)
	s.compactIfDue()
	return int64(s.op.LogicalEntries()), int64(s.op.PhysicalEntries())
}

// rocksCompactBytes is the bytes written to RocksDB between two estimated
// compactions that pass the state through Flink's TTL compaction filter:
// level0_file_num_compaction_trigger (RocksDB's default, 4) memtable
// flushes of write_buffer_size (Flink's default, 64 MiB) each, after which
// RocksDB compacts level 0 into level 1. It is an estimate of RocksDB's
// schedule, which dedupsim cannot reproduce (flushes also come from the
// write buffer manager's share of managed memory, background threads pick
// the compactions, and a state beyond level 1's target, 256 MiB, sits in
// deeper levels compacted less often); the model drops every expired entry
// at each one. The true physical count lies between the logical count and
// the count without any compaction.
const rocksCompactBytes = 4 * 64 << 20

// compactIfDue runs the estimated compaction of a RocksDB query with TTL
// once rocksCompactBytes more bytes were written (puts of an entry's
// bytes, deletes of a tombstone's) since the last.
func (s *ScenarioOperator) compactIfDue() {
	if !s.cfg.RocksDB || s.cfg.TTL == 0 || s.entryBytes == 0 {
		return
	}
	st := s.op.Stats()
	written := st.Puts*s.entryBytes + st.Deletes*s.rocksDeleteBytes
	if written-s.compactedAt >= s.compactEvery {
		s.op.Compact()
		s.compactedAt = written
	}
}

// Compactions returns the estimated compactions run so far (0 on the
// heap backend).
func (s *ScenarioOperator) Compactions() int64 { return s.op.Stats().Compactions }

// StateBytes returns the estimated heap bytes (RocksDB: serialized bytes
// in SST data blocks, ef.RocksEntryBytes, no table) of the state held (the
// physical entries: the heap holds an expired entry until it is
// removed) and of one entry, as of the last State call. The total adds
// the state's bucket arrays (HeapTableBytes) and, under mini-batch, the
// bundle's rows not yet flushed (ef's BundleBytes: operator memory, not
// keyed state, but heap the job holds at that moment); a function that
// keeps no state has no entries. Both are 0 before the first row.
func (s *ScenarioOperator) StateBytes() (total, perEntry int64) {
	if s.entryBytes == 0 {
		return 0, 0
	}
	bundle := s.op.BundleBytes(s.keyHeap, s.rowHeap)
	if !keepsState(s.cfg) {
		return bundle, 0
	}
	n := int64(s.op.PhysicalEntries())
	if s.cfg.RocksDB {
		return n*s.entryBytes + bundle, s.entryBytes
	}
	return n*s.entryBytes + ef.HeapTableBytes(n) + bundle, s.entryBytes
}

// keepsState reports whether the function keeps state: all but keep-last
// that needs neither -U nor +I (every row is +U).
func keepsState(c ef.Config) bool {
	return !(c.Function() == ef.ProcTimeKeepLast && !c.GenerateUpdateBefore && !c.GenerateInsert)
}

// heapEntryBytes estimates one entry's heap bytes (ef.HeapEntryBytes;
// on RocksDB its serialized bytes, ef.RocksEntryBytes) from the sizes of the generated key and row encodings (generators'
// AppendKey): every column is 8 bytes there but a UUID event_id, 36
// bytes of text. In Flink's BinaryRowData an 8-byte column is a fixed
// field (BIGINT, INT, TIMESTAMP(3)) and the UUID a STRING (a fixed field
// plus 36 bytes of variable-length data). The row the keep-last and
// rowtime changelog states hold has the generated columns plus proc_time.
// The 2.1+ rowtime keep-first is counted as flags, although a waiting
// row holds the row (a waiting row lasts about the watermark's delay).
func (s *ScenarioOperator) heapEntryBytes(keyLen, rowLen int) int64 {
	s.keyHeap = ef.HeapRowBytes(binaryRowBytes(s.keys, keyLen))
	s.rowHeap = ef.HeapRowBytes(binaryRowBytes(generators.NumColumns+1, rowLen+8))
	holdsRow := s.cfg.KeepLast || s.cfg.Function() == ef.RowTimeChangelog || s.cfg.Function() == ef.RowTimeMiniBatch
	if s.cfg.RocksDB {
		// RocksDB holds the serialized key and value (ef's RocksEntryBytes).
		key := ef.RocksKeyBytes(binaryRowBytes(s.keys, keyLen))
		s.rocksDeleteBytes = key + ef.RocksInternalKeyBytes + ef.RocksBlockOverheadBytes
		return ef.RocksEntryBytes(key, ef.RocksValueBytes(holdsRow, binaryRowBytes(generators.NumColumns+1, rowLen+8), s.cfg.TTL > 0))
	}
	var val int64 // keep-first's flag: the shared Boolean.TRUE
	if holdsRow {
		val = s.rowHeap
	}
	return ef.HeapEntryBytes(s.keyHeap, val, s.cfg.TTL > 0)
}

// binaryRowBytes is ef.BinaryRowBytes of an encoding of arity columns n
// bytes long: the bytes beyond 8 per column are one string column's.
func binaryRowBytes(arity, n int) int {
	varBytes := 0
	if extra := n - 8*arity; extra > 0 {
		varBytes = extra + 8
	}
	return ef.BinaryRowBytes(arity, varBytes)
}

// FormatDuration renders ms milliseconds as a Flink duration option in its
// largest exact unit, as Flink's TimeUtils.formatWithHighestUnit does:
// "2 min", "90 s", "1500 ms", "1 d". ParseDuration reads it back.
func FormatDuration(ms int64) string {
	for _, u := range []struct {
		ms   int64
		name string
	}{{86_400_000, "d"}, {3_600_000, "h"}, {60_000, "min"}, {1000, "s"}} {
		if ms != 0 && ms%u.ms == 0 {
			return fmt.Sprintf("%d %s", ms/u.ms, u.name)
		}
	}
	return fmt.Sprintf("%d ms", ms)
}
