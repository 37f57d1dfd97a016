package microbatch

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// trace runs batches of generated rows through a partitioned query of
// query over parts partitions on a pool of workers and returns every
// batch's progress, outcomes and per-partition stats, as JSON.
func trace(t *testing.T, query string, parts, workers int) string {
	t.Helper()
	q := partitionedQuery(t, query, parts)
	pool := NewPool(workers)
	defer pool.Close()
	q.SetPool(pool)
	rng := rand.New(rand.NewPCG(11, 12))
	var out strings.Builder
	enc := json.NewEncoder(&out)
	b := &generators.Batch{IDs: generators.IntIDs}
	const start = 1_767_225_600_000_000
	for batch := range 60 {
		at := start + int64(batch+1)*10_000_000
		b.Rows = b.Rows[:0]
		for range 1500 {
			// Ids repeat within and across batches; event times lag
			// the trigger by up to 3 minutes, so some rows are late.
			b.Rows = append(b.Rows, generators.Row{EventNum: rng.Int64N(20_000), EventTime: at - rng.Int64N(180_000_000)})
		}
		p, err := q.RunBatch(b, BatchMeta{TimestampMs: at / 1000})
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode([]any{p, q.Outcomes(), q.PartitionStats(0)}); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

// TestPartitionsOnAPoolChangeNothing: a partitioned query gives the same
// progress, outcomes and per-partition stats, batch by batch, on its own
// goroutine and on pools of 2, 3 and 8 workers, with GOMAXPROCS 1, 2
// and 4.
func TestPartitionsOnAPoolChangeNothing(t *testing.T) {
	for _, query := range []string{
		`withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])`,
		`withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])`,
	} {
		want := trace(t, query, 8, 1)
		if len(want) < 1000 {
			t.Fatalf("a trace of %d bytes", len(want))
		}
		for _, procs := range []int{1, 2, 4} {
			for _, workers := range []int{2, 3, 8} {
				func() {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					if got := trace(t, query, 8, workers); got != want {
						t.Errorf("%s: GOMAXPROCS %d, %d workers: the trace differs from the sequential one", query, procs, workers)
					}
				}()
			}
		}
	}
}

// failingStore fails every Add.
type failingStore struct{ engines.Store }

func (failingStore) Add([]byte, int64) (bool, error) { return false, errors.New("disk gone") }

// TestPoolReportsTheFirstPartitionsError: when partitions fail, the batch
// fails with the error of the first failing partition, in partition
// order, as the sequential loop does.
func TestPoolReportsTheFirstPartitionsError(t *testing.T) {
	c, err := chain.Parse(`dropDuplicates(["event_id"])`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := chain.PlanFor(c, generatedSchema())
	if err != nil {
		t.Fatal(err)
	}
	q, err := NewPartitionedQuery(plan, 8, func(_, part int, _ chain.Node) (engines.Store, error) {
		if part >= 3 {
			return failingStore{memstore.New()}, nil
		}
		return memstore.New(), nil
	}, State{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	pool := NewPool(4)
	defer pool.Close()
	q.SetPool(pool)
	b := &generators.Batch{IDs: generators.IntIDs}
	for i := range 400 {
		b.Rows = append(b.Rows, generators.Row{EventNum: int64(i)})
	}
	_, err = q.RunBatch(b, BatchMeta{})
	if err == nil || !strings.Contains(err.Error(), "partition 3: ") {
		t.Fatalf("error %v, want partition 3's", err)
	}
}
