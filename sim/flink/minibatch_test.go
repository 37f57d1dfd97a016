package flink

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

const keepLastSQL = "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time DESC) AS rn FROM events) WHERE rn = 1"

// mbRow is one row of a hand-derived mini-batch stream: its key, its
// value (keep-last without TTL compares it), its arrival (ms) and the
// verdicts reached by the time Process returns on it.
type mbRow struct {
	key, value string
	proc       int64
	want       []Verdict
}

// runMiniBatch feeds rows to a fresh operator of sql with opts, opened at
// open, then ends its input at end, and checks that every row is Deferred
// with no changelog row counted at its arrival, and the verdicts after
// each row and at the end.
func runMiniBatch(t *testing.T, sql string, opts map[string]string, open int64, rows []mbRow, end int64, wantEnd []Verdict) *ScenarioOperator {
	t.Helper()
	sq, err := ParseScenarioQuery(sql, opts)
	if err != nil {
		t.Fatal(err)
	}
	op, err := sq.NewOperator()
	if err != nil {
		t.Fatal(err)
	}
	if !op.Defers() || op.CountsLate() {
		t.Fatalf("%s: defers %v, counts late %v; want true, false", op.Function(), op.Defers(), op.CountsLate())
	}
	op.Open(open)
	for i, r := range rows {
		o, n := op.Process([]byte(r.key), []byte(r.value), r.proc, 0)
		if o != engines.DroppedDuplicate || n != 0 || !op.Deferred() || op.LateAhead() {
			t.Errorf("row %d: %v, %d rows, deferred %v, late ahead %v; want a waiting row", i+1, o, n, op.Deferred(), op.LateAhead())
		}
		if got := op.Verdicts(nil); !slices.Equal(got, r.want) {
			t.Errorf("after row %d (%s at %d): verdicts %v, want %v", i+1, r.key, r.proc, got, r.want)
		}
	}
	op.End(end)
	if got := op.Verdicts(nil); !slices.Equal(got, wantEnd) {
		t.Errorf("at the end (%d): verdicts %v, want %v", end, got, wantEnd)
	}
	return op
}

// TestMiniBatchKeepFirstBundles: keep-first, allow-latency 1 s, size 100,
// no TTL; the assigner's timer fires at 1000, 2000, 3000. By hand:
//
//	1 a 100, 2 a 300, 3 b 900: one bundle; the timer at 1000 flushes it
//	  (before row 4): a's first row 1 +I, row 2 behind it, b's row 3 +I.
//	4 a 1500: the timer at 2000 (before row 5) flushes it; a's flag is
//	  in state: dropped.
//	5 b 2000: arrives with the timer at 2000, after its watermark: next
//	  bundle. 6 c 2500: same bundle. End at 3000: the timer at 3000
//	  flushes them: b in state (dropped), c +I.
func TestMiniBatchKeepFirstBundles(t *testing.T) {
	E, D := engines.Emitted, engines.DroppedDuplicate
	op := runMiniBatch(t, keepFirstSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: "1 s", OptMiniBatchSize: "100"}, 0, []mbRow{
		{"a", "", 100, nil},
		{"a", "", 300, nil},
		{"b", "", 900, nil},
		{"a", "", 1500, []Verdict{{1, E}, {2, D}, {3, E}}},
		{"b", "", 2000, []Verdict{{4, D}}},
		{"c", "", 2500, nil},
	}, 3000, []Verdict{{5, D}, {6, E}})
	if op.Function() != "ProcTimeMiniBatchDeduplicateKeepFirstRowFunction" {
		t.Errorf("function %s", op.Function())
	}
	if logical, _ := op.State(3000); logical != 3 {
		t.Errorf("state %d entries, want 3 (a, b, c)", logical)
	}
}

// TestMiniBatchKeepLastBundles: keep-last on the same arrivals, no TTL
// (the function compares rows). By hand:
//
//	flush at 1000: a's last row 2 +I (row 1 before it: dropped), b's
//	  row 3 +I.
//	flush at 2000: a's row 4 differs from row 2: +U, emitted (a missed
//	  duplicate downstream, the sink appends it).
//	end (timer at 3000): b's row 5 equals row 3: nothing emitted,
//	  dropped; c's row 6 +I.
func TestMiniBatchKeepLastBundles(t *testing.T) {
	E, D := engines.Emitted, engines.DroppedDuplicate
	op := runMiniBatch(t, keepLastSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: "1 s", OptMiniBatchSize: "100"}, 0, []mbRow{
		{"a", "a1", 100, nil},
		{"a", "a2", 300, nil},
		{"b", "b1", 900, nil},
		{"a", "a4", 1500, []Verdict{{1, D}, {2, E}, {3, E}}},
		{"b", "b1", 2000, []Verdict{{4, E}}},
		{"c", "c1", 2500, nil},
	}, 3000, []Verdict{{5, D}, {6, E}})
	if op.Function() != "ProcTimeMiniBatchDeduplicateKeepLastRowFunction" {
		t.Errorf("function %s", op.Function())
	}
}

// TestMiniBatchRowRaisesTheWatermark: opened at 500 with a 1 s
// allow-latency, the assigner's first timer is at 1500, but a row at
// 1200 sees its batch 1000 above the watermark 0 and emits it before it
// is forwarded: the bundle (a at 600, +I) is flushed at 1200. The timer
// at 1500 finds batch 1000 emitted; the next, at 2000, flushes a at 1200
// (in state: dropped).
func TestMiniBatchRowRaisesTheWatermark(t *testing.T) {
	E, D := engines.Emitted, engines.DroppedDuplicate
	runMiniBatch(t, keepFirstSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: "1 s", OptMiniBatchSize: "100"}, 500, []mbRow{
		{"a", "", 600, nil},
		{"a", "", 1200, []Verdict{{1, E}}},
		{"b", "", 1900, nil},
	}, 2500, []Verdict{{2, D}, {3, E}})
}

// TestMiniBatchSizeFlush: size 2 and an allow-latency of 10 s, which no
// timer reaches: the CountBundleTrigger flushes after every second row,
// at that row's arrival (keep-first: a 100 +I, a 200 dropped; b 300 +I,
// a 400 dropped); the fifth row waits for the end.
func TestMiniBatchSizeFlush(t *testing.T) {
	E, D := engines.Emitted, engines.DroppedDuplicate
	runMiniBatch(t, keepFirstSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: "10 s", OptMiniBatchSize: "2"}, 0, []mbRow{
		{"a", "", 100, nil},
		{"a", "", 200, []Verdict{{1, E}, {2, D}}},
		{"b", "", 300, nil},
		{"a", "", 400, []Verdict{{3, E}, {4, D}}},
		{"c", "", 500, nil},
	}, 600, []Verdict{{5, E}})
}

// TestMiniBatchTTLFromTheFlush: keep-first with a 1500 ms TTL and a 1 s
// allow-latency. a at 100 is flushed at 1000, which writes its flag at
// TTL time 1000 (alive until 2500); a at 1700 is flushed at 2000: the
// flag is alive, dropped. Without mini-batch the flag is written at 100
// and expired (100 + 1500 <= 1700): the second a is emitted.
func TestMiniBatchTTLFromTheFlush(t *testing.T) {
	E, D := engines.Emitted, engines.DroppedDuplicate
	opts := map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: "1 s", OptMiniBatchSize: "100", OptStateTTL: "1500 ms"}
	runMiniBatch(t, keepFirstSQL, opts, 0, []mbRow{
		{"a", "", 100, nil},
		{"a", "", 1700, []Verdict{{1, E}}},
	}, 2500, []Verdict{{2, D}})

	delete(opts, OptMiniBatch)
	sq, err := ParseScenarioQuery(keepFirstSQL, opts)
	if err != nil {
		t.Fatal(err)
	}
	op, err := sq.NewOperator()
	if err != nil {
		t.Fatal(err)
	}
	op.Process([]byte("a"), nil, 100, 0)
	if o, _ := op.Process([]byte("a"), nil, 1700, 0); o != E {
		t.Errorf("without mini-batch the second a is %v, want Emitted", o)
	}
}

// TestMiniBatchOptions: mini-batch needs an allow-latency above 0 and a
// size above 0, as Flink's planner does, each refused in one line.
func TestMiniBatchOptions(t *testing.T) {
	for _, c := range []struct {
		sql  string
		opts map[string]string
		want string
	}{
		{keepFirstSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchSize: "10"}, "option table.exec.mini-batch.allow-latency must be above 0 when table.exec.mini-batch.enabled is true"},
		{keepFirstSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchSize: "10", OptMiniBatchDelay: "0 s"}, "allow-latency must be above 0"},
		{keepFirstSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: "1 s"}, "option table.exec.mini-batch.size should be greater than 0"},
	} {
		_, err := ParseScenarioQuery(c.sql, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line with %q", c.opts, err, c.want)
		}
	}
	sq, err := ParseScenarioQuery(keepFirstSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: "2 s", OptMiniBatchSize: "10"})
	if err != nil || sq.MiniBatchInterval != 2000 || sq.Config.MiniBatchSize != 10 {
		t.Errorf("interval %d, size %d, %v; want 2000, 10", sq.MiniBatchInterval, sq.Config.MiniBatchSize, err)
	}
}

// TestMiniBatchAgainstANaiveModel compares seeded random streams (keep-
// first, TTL on, a size no bundle reaches) with a naive model of the
// rule: a row at arrival t is flushed at the first multiple B of the
// allow-latency above t (the end flushes the rest at end); at a flush
// each key's first row of the bundle is emitted unless its flag, written
// at an earlier flush time w, is alive (w + ttl > B), and emitting
// writes the flag at B. Two runs of one seed give the same verdicts.
func TestMiniBatchAgainstANaiveModel(t *testing.T) {
	const iv, ttl, end = 700, 2000, 30_000
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		type row struct {
			key  string
			proc int64
		}
		var rows []row
		for p := int64(rng.IntN(50)); p < end-1000; p += int64(rng.IntN(300)) {
			rows = append(rows, row{fmt.Sprint(rng.IntN(8)), p})
		}
		// The naive model.
		want := map[int]engines.Outcome{}
		flag := map[string]int64{}
		for i := 0; i < len(rows); {
			b := (rows[i].proc/iv + 1) * iv
			seen := map[string]bool{}
			for ; i < len(rows) && rows[i].proc < b; i++ {
				k := rows[i].key
				want[i+1] = engines.DroppedDuplicate
				if seen[k] {
					continue
				}
				seen[k] = true
				if w, ok := flag[k]; !ok || w+ttl <= b {
					want[i+1], flag[k] = engines.Emitted, b
				}
			}
		}
		run := func() []Verdict {
			sq, err := ParseScenarioQuery(keepFirstSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: fmt.Sprintf("%d ms", iv), OptMiniBatchSize: "1000000", OptStateTTL: fmt.Sprintf("%d ms", ttl)})
			if err != nil {
				t.Fatal(err)
			}
			op, err := sq.NewOperator()
			if err != nil {
				t.Fatal(err)
			}
			op.Open(0)
			var got []Verdict
			for i, r := range rows {
				op.Process([]byte(r.key), nil, r.proc, 0)
				if i%7 == 0 {
					op.State(r.proc + 50)
				}
				got = op.Verdicts(got)
			}
			op.End(end)
			return op.Verdicts(got)
		}
		got := run()
		if len(got) != len(rows) {
			t.Fatalf("seed %d: %d verdicts for %d rows", seed, len(got), len(rows))
		}
		for _, v := range got {
			if want[v.Row] != v.Outcome {
				t.Fatalf("seed %d: row %d (%s at %d): %v, the naive model says %v (go test ./sim/flink -run TestMiniBatchAgainstANaiveModel)", seed, v.Row, rows[v.Row-1].key, rows[v.Row-1].proc, v.Outcome, want[v.Row])
			}
		}
		if again := run(); !slices.Equal(got, again) {
			t.Fatalf("seed %d: two runs differ", seed)
		}
	}
}

// TestRowTimeMiniBatch: keep-first by event time (RowTimeMiniBatchDeduplicateFunction
// in every version) with watermark delay 5 s, auto-watermark interval
// 200 ms, allow-latency 1 s, size 100, opened at 0. The SQL assigner's
// watermarks go through the rowtime mini-batch assigner, which forwards
// one only at or past its next mini-batch end (first 999). By hand
// (arrival/event time in ms):
//
//	1 a 1000/10000: into the bundle; the SQL watermark 5000 is emitted
//	  after the row (5000 - 0 > 200), reaches 999: forwarded, flushes
//	  at TTL time 1000: row 1 +I. Next end: 5999.
//	2 a 1100/9000: buffered (the watermark stays 5000).
//	3 b 1300/10500: buffered; the SQL watermark 5500 is emitted (500 >
//	  200) but held by the mini-batch assigner (5500 < 5999).
//	4 b 2000/11200: buffered; 6200 is emitted and forwarded (>= 5999):
//	  the flush at 2000 replays a's row 2 (9000 earlier than 10000: +U,
//	  Emitted), b's row 3 (+I) and row 4 (11200 not earlier: dropped).
//	  Next end: 6999.
//	5 c 2100/3000: buffered. End at 2500: the maximum watermark is
//	  forwarded: row 5 +I.
func TestRowTimeMiniBatch(t *testing.T) {
	E, D := engines.Emitted, engines.DroppedDuplicate
	sq, err := ParseScenarioQuery(rowTimeFirstSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: "1 s", OptMiniBatchSize: "100", OptWatermark: "5 s"})
	if err != nil {
		t.Fatal(err)
	}
	op, err := sq.NewOperator()
	if err != nil {
		t.Fatal(err)
	}
	if op.Function() != "RowTimeMiniBatchDeduplicateFunction" || !op.Defers() || op.CountsLate() {
		t.Fatalf("%s: defers %v, counts late %v", op.Function(), op.Defers(), op.CountsLate())
	}
	op.Open(0)
	for i, r := range []struct {
		key         string
		proc, event int64
		want        []Verdict
	}{
		{"a", 1000, 10000, []Verdict{{1, E}}},
		{"a", 1100, 9000, nil},
		{"b", 1300, 10500, nil},
		{"b", 2000, 11200, []Verdict{{2, E}, {3, E}, {4, D}}},
		{"c", 2100, 3000, nil},
	} {
		o, n := op.Process([]byte(r.key), nil, r.proc, r.event)
		if o != D || n != 0 || !op.Deferred() || op.LateAhead() {
			t.Errorf("row %d: %v, %d rows, deferred %v; want a waiting row", i+1, o, n, op.Deferred())
		}
		if got := op.Verdicts(nil); !slices.Equal(got, r.want) {
			t.Errorf("after row %d: verdicts %v, want %v", i+1, got, r.want)
		}
	}
	op.End(2500)
	if got := op.Verdicts(nil); !slices.Equal(got, []Verdict{{5, E}}) {
		t.Errorf("at the end: verdicts %v, want [{5 Emitted}]", got)
	}
	if logical, _ := op.State(2500); logical != 3 {
		t.Errorf("state %d, want 3 (a, b, c)", logical)
	}
}

// TestMiniBatchAllocatesNothingPerRow: a mini-batch row, new key or
// duplicate, flushed by the size trigger or a timer, allocates nothing
// once the state, the bundle and the verdicts have their size (the
// bundle held a string copy of every key before).
func TestMiniBatchAllocatesNothingPerRow(t *testing.T) {
	for _, c := range []struct {
		sql  string
		opts map[string]string
	}{
		{keepFirstSQL, map[string]string{OptStateTTL: "100 ms"}},
		{keepLastSQL, map[string]string{OptStateTTL: "100 ms"}},
		{rowTimeFirstSQL, map[string]string{OptWatermark: "5 ms", OptWatermarkInterval: "3 ms"}},
	} {
		c.opts[OptMiniBatch], c.opts[OptMiniBatchDelay], c.opts[OptMiniBatchSize] = "true", "7 ms", "20"
		sq, err := ParseScenarioQuery(c.sql, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		op, err := sq.NewOperator()
		if err != nil {
			t.Fatal(err)
		}
		op.Open(0)
		key, value := make([]byte, 36), make([]byte, 36+8*5)
		var verdicts []Verdict
		i := 0
		step := func() {
			k := i
			if i%4 == 0 {
				k = i - 30
			}
			binary.BigEndian.PutUint64(key, uint64(k))
			binary.BigEndian.PutUint64(value, uint64(i))
			op.Process(key, value, int64(i), int64(i))
			if i%50 == 0 {
				op.State(int64(i))
			}
			verdicts = op.Verdicts(verdicts[:0])
			i++
		}
		for range 10_000 {
			step()
		}
		if a := testing.AllocsPerRun(2000, step); a != 0 {
			t.Errorf("%s: %v allocations per row", op.Function(), a)
		}
	}
}

// TestMiniBatchBundleBytes: under mini-batch the state bytes add the
// bundle's rows not yet flushed (docs/flink.md, "State bytes"). By hand,
// for 36-byte (UUID) keys and rows of the six generated columns (the UUID
// and five 8-byte ones) plus proc_time:
//
//   - key copy: BinaryRowData of arity 1, 8 null bits + 8 + 40 (36 bytes
//     padded) = 56 bytes, so 128 objects + byte[] 16+56 = 200;
//   - row copy: arity 7, 8 + 56 + 40 = 104 bytes, so 128 + 120 = 248;
//   - HashMap 48; its table 16 slots: 16+64 = 80; 32 (13 keys > 12): 144;
//   - per key: Node 32 + key 200 + value;
//   - state with no entries: 128 key groups × (16 + 4×128) = 67,584.
//
// Cases:
//   - proctime keep-first (no TTL, allow-latency 1 s, size 100): a at
//     100, a at 300, b at 900: at 950 the bundle holds a's first row and
//     b's: 48 + 80 + 2 × (32 + 200 + 248) = 1,088, state 67,584: 68,672.
//     At 1000 the timer flushes: two flags of 40 + 200 = 240 bytes, the
//     emptied bundle keeps its table: 480 + 67,584 + 128 = 68,192.
//   - proctime keep-last, 13 keys at 100 ... 112: the table doubles to
//     32 slots: 48 + 144 + 13 × 480 = 6,432, state 67,584: 74,016. After
//     the flush at 1000: 13 rows of 40 + 200 + 248 = 488, so 6,344 +
//     67,584 + 192 = 74,120.
//   - rowtime (watermark 5 s, event times 1000 ... 2000: the SQL
//     watermark stays at 0, below the mini-batch's first end 999, so
//     nothing flushes): 11 rows of a and 1 of b; a's ArrayList grows
//     from 10 to 15 slots: 24 + (16+60, padded) 80 + 11 × 248 = 2,832,
//     b's 24 + (16+40) 56 + 248 = 328; the bundle 48 + 80 + 2 × 232 +
//     2,832 + 328 = 3,752, state 67,584: 71,336.
func TestMiniBatchBundleBytes(t *testing.T) {
	mb := map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: "1 s", OptMiniBatchSize: "100"}
	rowTimeSQL := "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time ASC) AS rn FROM events) WHERE rn = 1"
	type feed struct {
		key  byte
		proc int64
		ev   int64
	}
	for _, c := range []struct {
		name   string
		sql    string
		extra  map[string]string
		rows   []feed
		sample []int64 // times of State calls
		want   []int64 // total state bytes at each
	}{
		{"keep-first", keepFirstSQL, nil, []feed{{'a', 100, 0}, {'a', 300, 0}, {'b', 900, 0}}, []int64{950, 1000}, []int64{68_672, 68_192}},
		{"keep-last", keepLastSQL, nil, func() []feed {
			var f []feed
			for i := range 13 {
				f = append(f, feed{byte('a' + i), int64(100 + i), 0})
			}
			return f
		}(), []int64{950, 1000}, []int64{74_016, 74_120}},
		{"rowtime", rowTimeSQL, map[string]string{OptWatermark: "5 s"}, func() []feed {
			var f []feed
			for i := range 11 {
				f = append(f, feed{'a', int64(100 + i), int64(1000 + 100*i)})
			}
			return append(f, feed{'b', 200, 1000})
		}(), []int64{950}, []int64{71_336}},
	} {
		opts := maps.Clone(mb)
		maps.Copy(opts, c.extra)
		sq, err := ParseScenarioQuery(c.sql, opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		op, err := sq.NewOperator()
		if err != nil {
			t.Fatal(err)
		}
		op.Open(0)
		key, value := make([]byte, 36), make([]byte, 36+8*5)
		for _, r := range c.rows {
			key[0] = r.key
			op.Process(key, value, r.proc, r.ev)
		}
		for i, at := range c.sample {
			op.State(at)
			if got, _ := op.StateBytes(); got != c.want[i] {
				t.Errorf("%s at %d: %d state bytes, want %d", c.name, at, got, c.want[i])
			}
		}
	}
}
