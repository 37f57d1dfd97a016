package spark_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/pebblestore"
	"github.com/dedupsim/dedupsim/engines/spark"
)

// twsBatch runs one batch of the transformWithState dedup at batchMs over
// keys and returns the emitted keys and the batch's removed count.
func twsBatch(t *testing.T, d *spark.TWSDedup, batchMs int64, keys ...string) (emitted []string, removed int) {
	t.Helper()
	if err := d.StartBatch(batchMs); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		ok, err := d.Process([]byte(k), 0)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			emitted = append(emitted, k)
		}
	}
	return emitted, d.Removed()
}

// TestTWSDedupTTL derives Spark's TTL rules by hand (TTLState.scala:
// expirationMs = batchTs + ttl, expired when batchTs >= expirationMs,
// cleanup at the end of the batch of what expired and was not set again),
// on both stores.
func TestTWSDedupTTL(t *testing.T) {
	stores := map[string]func(t *testing.T) engines.Store{
		"memory": func(*testing.T) engines.Store { return memstore.New() },
		"pebble": func(t *testing.T) engines.Store {
			s, err := pebblestore.Open(filepath.Join(t.TempDir(), "p"), pebblestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			d := spark.NewTWSDedup(open(t), 10_000) // TTL 10 s
			steps := []struct {
				at      int64
				keys    []string
				emitted []string
				removed int
				total   int
			}{
				// a, b set at 0: expire at 10000. a's copy dropped.
				{0, []string{"a", "a", "b"}, []string{"a", "b"}, 0, 2},
				// 9999 < 10000: both still live.
				{9_999, []string{"a", "b"}, nil, 0, 2},
				// 10000 >= 10000: both expired. a is set again (a refresh,
				// not a removal); b is removed by the cleanup.
				{10_000, []string{"a", "a", "c"}, []string{"a", "c"}, 1, 2},
				// a and c expire at 20000.
				{19_999, []string{"c"}, nil, 0, 2},
				// An empty batch (no-data) removes both.
				{20_000, nil, nil, 2, 0},
			}
			for i, s := range steps {
				emitted, removed := twsBatch(t, d, s.at, s.keys...)
				if len(emitted) != len(s.emitted) || removed != s.removed || d.Len() != s.total {
					t.Fatalf("batch %d at %d ms: emitted %v removed %d total %d; want %v, %d, %d",
						i, s.at, emitted, removed, d.Len(), s.emitted, s.removed, s.total)
				}
				for j := range emitted {
					if emitted[j] != s.emitted[j] {
						t.Fatalf("batch %d: emitted %v, want %v", i, emitted, s.emitted)
					}
				}
			}
		})
	}
}

// TestTWSDedupWithoutTTLKeepsEveryKey: no TTL, no expiry, however late.
func TestTWSDedupWithoutTTLKeepsEveryKey(t *testing.T) {
	d := spark.NewTWSDedup(memstore.New(), 0)
	if e, _ := twsBatch(t, d, 0, "a"); len(e) != 1 {
		t.Fatalf("first a not emitted")
	}
	if e, r := twsBatch(t, d, 1<<50, "a"); len(e) != 0 || r != 0 || d.Len() != 1 {
		t.Fatalf("a emitted again or removed without a TTL: %v, %d", e, r)
	}
}

// TestTWSDedupProcessBatchMatchesProcess: the batched path decides and
// counts as one Process per key.
func TestTWSDedupProcessBatchMatchesProcess(t *testing.T) {
	one, many := spark.NewTWSDedup(memstore.New(), 5), spark.NewTWSDedup(memstore.New(), 5)
	keys := []string{"a", "b", "a", "c", "b", "d"}
	for at := int64(0); at < 40; at += 3 {
		e1, r1 := twsBatch(t, one, at, keys[at%4:]...)
		if err := many.StartBatch(at); err != nil {
			t.Fatal(err)
		}
		var buf []byte
		var ends []int32
		for _, k := range keys[at%4:] {
			buf = append(buf, k...)
			ends = append(ends, int32(len(buf)))
		}
		added := make([]bool, len(ends))
		if err := many.ProcessBatch(buf, ends, make([]int64, len(ends)), added); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range added {
			if a {
				n++
			}
		}
		if n != len(e1) || many.Removed() != r1 || many.Len() != one.Len() {
			t.Fatalf("at %d: batch emitted %d removed %d len %d; single %d, %d, %d", at, n, many.Removed(), many.Len(), len(e1), r1, one.Len())
		}
	}
}

// listingOnly hides the memory store's EvictKeys: the processor must list
// the store's keys to learn which expired (the Pebble store's path).
type listingOnly struct {
	engines.Store
	engines.Ranger
	ranges *int
}

func (l listingOnly) Range(fn func(key []byte, expiresAt int64) bool) error {
	*l.ranges++
	return l.Ranger.Range(fn)
}

// countRanges counts Range calls on a memory store that keeps EvictKeys.
type countRanges struct {
	*memstore.Store
	ranges *int
}

func (c countRanges) Range(fn func(key []byte, expiresAt int64) bool) error {
	*c.ranges++
	return c.Store.Range(fn)
}

// TestTWSDedupEvictKeysMatchesListing: the expiry-index path (the memory
// store names the keys it evicts) and the listing path decide, refresh and
// count alike over a random stream whose keys expire and come back, and
// the index path never lists the store.
func TestTWSDedupEvictKeysMatchesListing(t *testing.T) {
	var listed, indexed int
	m := memstore.New()
	list := spark.NewTWSDedup(listingOnly{Store: m, Ranger: m, ranges: &listed}, 700)
	idx := spark.NewTWSDedup(countRanges{Store: memstore.New(), ranges: &indexed}, 700)
	rng := rand.New(rand.NewPCG(7, 32))
	seen := map[string]bool{}
	refreshes, removed := 0, 0
	for at := int64(0); at < 20_000; at += 100 + rng.Int64N(200) {
		keys := make([]string, rng.IntN(30))
		for i := range keys {
			keys[i] = fmt.Sprintf("k%d", rng.IntN(60))
		}
		e1, r1 := twsBatch(t, list, at, keys...)
		e2, r2 := twsBatch(t, idx, at, keys...)
		if fmt.Sprint(e1) != fmt.Sprint(e2) || r1 != r2 || list.Len() != idx.Len() {
			t.Fatalf("at %d ms: listing emitted %v removed %d len %d; index %v, %d, %d", at, e1, r1, list.Len(), e2, r2, idx.Len())
		}
		for _, k := range e2 {
			if seen[k] {
				refreshes++
			}
			seen[k] = true
		}
		removed += r2
	}
	if indexed != 0 {
		t.Fatalf("the index path listed the store %d times", indexed)
	}
	if refreshes == 0 || removed == 0 {
		t.Fatalf("the stream refreshed %d keys and removed %d: it tests nothing", refreshes, removed)
	}
	if listed == 0 {
		t.Fatalf("the listing path never listed the store: the comparison tested nothing")
	}
}

// TestTWSDedupSteadyBatchAllocatesNothing: a batch in steady TTL traffic
// (keys expire, some are set again, new ones come) allocates nothing once
// its buffers have grown.
func TestTWSDedupSteadyBatchAllocatesNothing(t *testing.T) {
	d := spark.NewTWSDedup(memstore.New(), 1_000)
	const perBatch = 64
	var buf []byte
	ends := make([]int32, perBatch)
	added := make([]bool, perBatch)
	times := make([]int64, perBatch)
	at, next := int64(0), 0
	batch := func() {
		if err := d.StartBatch(at); err != nil {
			t.Fatal(err)
		}
		buf = buf[:0]
		for i := range ends {
			// Half the keys are new, half repeat keys of 10 batches ago
			// (expired: refreshed).
			k := next + i
			if i%2 == 1 {
				k = next - 10*perBatch + i
			}
			buf = strconv.AppendInt(buf, int64(k), 10)
			ends[i] = int32(len(buf))
		}
		if err := d.ProcessBatch(buf, ends, times, added); err != nil {
			t.Fatal(err)
		}
		next += perBatch
		at += 100
	}
	for range 200 {
		batch()
	}
	if d.Removed() == 0 || d.Removed() == d.Len() {
		t.Fatalf("not steady: removed %d of %d", d.Removed(), d.Len())
	}
	if a := testing.AllocsPerRun(100, batch); a != 0 {
		t.Fatalf("a steady batch allocates %.1f times", a)
	}
}

// TestTWSTimerDedupFiresAtTheWatermark derives the event-time flavour's
// rules by hand: the timer is the first row's event time in milliseconds,
// truncated toward the past (a timestamp's millis), + the horizon; Evict
// with the eviction watermark fires the timers at or below it.
func TestTWSTimerDedupFiresAtTheWatermark(t *testing.T) {
	d := spark.NewTWSTimerDedup(memstore.New(), 1_000) // horizon 1 s
	// a at 0.0015 s: timer 1001 ms. b at -0.0005 s: its millis are -1,
	// timer 999 ms. a's later copy: dropped.
	for _, r := range []struct {
		key  string
		et   int64
		want bool
	}{{"a", 1_500, true}, {"b", -500, true}, {"a", 0, false}} {
		if ok, err := d.Process([]byte(r.key), r.et); err != nil || ok != r.want {
			t.Fatalf("%s@%d: %v, %v; want %v", r.key, r.et, ok, err, r.want)
		}
	}
	for _, s := range []struct {
		wmMs    int64
		removed int
		left    int
	}{{998, 0, 2}, {999, 1, 1}, {1_000, 0, 1}, {1_001, 1, 0}} {
		n, err := d.Evict(s.wmMs * 1000)
		if err != nil || n != s.removed || d.Len() != s.left {
			t.Fatalf("watermark %d ms: removed %d (%v), %d left; want %d, %d", s.wmMs, n, err, d.Len(), s.removed, s.left)
		}
	}
	if ok, _ := d.Process([]byte("a"), 5_000_000); !ok {
		t.Fatalf("a after its timer fired: dropped, want emitted (the state was cleared)")
	}
}
