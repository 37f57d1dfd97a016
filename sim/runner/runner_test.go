package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

func load(t *testing.T, yaml string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const small = `
name: small
seed: 7
duration: 4m
trigger: 10s
workload:
  rate: 200/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.2
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 20s, p99: 3m}
    timestamp: restamp
queries:
  - name: pair-keyed
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])
  - name: within-watermark
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
  - name: unbounded
    query: dropDuplicates(["event_id"])
  - name: customer
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["customer_id"])
`

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func run(t *testing.T, s *scenario.Scenario, workers int) *Results {
	t.Helper()
	r, err := runOpts(t, s, Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runOpts runs s and closes the results when the test ends.
func runOpts(t testing.TB, s *scenario.Scenario, opts Options) (*Results, error) {
	return runCtx(t, context.Background(), s, opts)
}

// runCtx is runOpts with a context.
func runCtx(t testing.TB, ctx context.Context, s *scenario.Scenario, opts Options) (*Results, error) {
	r, err := Run(ctx, s, opts)
	if err == nil {
		t.Cleanup(func() {
			if err := r.Close(); err != nil {
				t.Errorf("closing the results: %v", err)
			}
		})
	}
	return r, err
}

// timeseries returns the run's timeseries.csv.
func timeseries(t testing.TB, r *Results) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteTimeseries(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// progress returns the run's progress/<name>.jsonl.
func progress(t testing.TB, r *Results, name string) []byte {
	t.Helper()
	p, err := r.Progress(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkIdentities asserts the accounting identities of every query.
func checkIdentities(t *testing.T, r *Results) {
	t.Helper()
	for _, q := range r.Summary.Queries {
		if q.InputRows != q.EmittedRows+q.DroppedByWatermark+q.DroppedDuplicates {
			t.Errorf("%s: inputRows %d != emitted %d + late %d + duplicates %d", q.Name, q.InputRows, q.EmittedRows, q.DroppedByWatermark, q.DroppedDuplicates)
		}
		if q.EmittedRows != q.LogicalEvents-q.FalseDrops+q.MissedDuplicates {
			t.Errorf("%s: emitted %d != logical %d - falseDrops %d + missed %d", q.Name, q.EmittedRows, q.LogicalEvents, q.FalseDrops, q.MissedDuplicates)
		}
		if c := q.FalseDropsByCause; q.FalseDrops != c.Late+c.BadClock+c.Collision {
			t.Errorf("%s: false drops %d != late %d + bad clock %d + collision %d", q.Name, q.FalseDrops, c.Late, c.BadClock, c.Collision)
		}
		if q.TrueDuplicates != q.InputRows-q.LogicalEvents {
			t.Errorf("%s: true duplicates %d != input %d - logical %d", q.Name, q.TrueDuplicates, q.InputRows, q.LogicalEvents)
		}
	}
}

func TestRunIdentitiesAndLessons(t *testing.T) {
	r := run(t, load(t, small), 2)
	checkIdentities(t, r)
	by := map[string]metrics.QuerySummary{}
	for _, q := range r.Summary.Queries {
		by[q.Name] = q
	}
	if by["unbounded"].FinalStateRows != by["unbounded"].LogicalEvents {
		t.Errorf("unbounded final state %d != logical events %d", by["unbounded"].FinalStateRows, by["unbounded"].LogicalEvents)
	}
	if by["unbounded"].MissedDuplicates != 0 || by["unbounded"].FalseDrops != 0 {
		t.Errorf("unbounded: missed %d, false drops %d; want 0, 0", by["unbounded"].MissedDuplicates, by["unbounded"].FalseDrops)
	}
	pk := by["pair-keyed"]
	if pk.TrueDuplicates == 0 || pk.MissedDuplicates != pk.TrueDuplicates {
		t.Errorf("pair-keyed with re-stamped copies: missed %d of %d duplicates; want all", pk.MissedDuplicates, pk.TrueDuplicates)
	}
	if c := by["customer"]; c.FalseDropsByCause.Collision == 0 {
		t.Errorf("customer-keyed dedup: no collision false drops")
	}
	for _, q := range r.Summary.Queries {
		if q.Batches == 0 || q.InputRows == 0 {
			t.Errorf("%s: nothing ran", q.Name)
		}
	}
}

func TestRunDeterministicAcrossWorkers(t *testing.T) {
	s := load(t, small)
	a, b := run(t, s, 1), run(t, s, 4)
	dirA, dirB := t.TempDir(), t.TempDir()
	if err := Write(filepath.Join(dirA, "r"), a); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dirB, "r"), b); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"timeseries.csv", "progress/pair-keyed.jsonl", "progress/unbounded.jsonl"} {
		x, _ := os.ReadFile(filepath.Join(dirA, "r", f))
		y, _ := os.ReadFile(filepath.Join(dirB, "r", f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between 1 and 4 workers (or is empty)", f)
		}
	}
	for i := range a.Summary.Queries {
		qa, qb := a.Summary.Queries[i], b.Summary.Queries[i]
		qa.EventsPerSecond, qa.WallSeconds, qb.EventsPerSecond, qb.WallSeconds = 0, 0, 0, 0
		if ja, jb := js(qa), js(qb); ja != jb {
			t.Errorf("query %s: summaries differ:\n%s\n%s", qa.Name, ja, jb)
		}
	}
}

func TestRestartFaultChangesNothing(t *testing.T) {
	base := load(t, small)
	withFaults := load(t, small+"faults:\n  - {at: 90s, kind: restart}\n  - {at: 150s, kind: restart}\n")
	a, b := run(t, base, 2), run(t, withFaults, 2)
	for i := range a.Summary.Queries {
		qa, qb := a.Summary.Queries[i], b.Summary.Queries[i]
		if qb.Restarts != 2 {
			t.Errorf("%s: %d restarts, want 2", qb.Name, qb.Restarts)
		}
		qa.EventsPerSecond, qa.WallSeconds, qb.EventsPerSecond, qb.WallSeconds, qb.Restarts = 0, 0, 0, 0, 0
		if ja, jb := js(qa), js(qb); ja != jb {
			t.Errorf("query %s: a restart changed the results:\n%s\n%s", qa.Name, ja, jb)
		}
	}
	if !bytes.Equal(timeseries(t, a), timeseries(t, b)) {
		t.Error("a restart changed timeseries.csv")
	}
}

func TestLostCheckpointReadmitsDuplicates(t *testing.T) {
	base := load(t, small)
	lost := load(t, small+"faults:\n  - {at: 2m, kind: lose-checkpoint}\n")
	a, b := run(t, base, 2), run(t, lost, 2)
	checkIdentities(t, b)
	for i := range a.Summary.Queries {
		qa, qb := a.Summary.Queries[i], b.Summary.Queries[i]
		if qa.Name == "unbounded" && qb.MissedDuplicates <= qa.MissedDuplicates {
			t.Errorf("unbounded: missed duplicates %d after losing the checkpoint, %d without; want more", qb.MissedDuplicates, qa.MissedDuplicates)
		}
	}
}

// TestPebbleAgreesWithMemory runs the same seeded stream through both
// backends, with a restart and a lost checkpoint: every result but the
// wall-clock fields must match, and the timeseries byte for byte (its byte
// column is the same model for both).
func TestPebbleAgreesWithMemory(t *testing.T) {
	base := load(t, small+"faults:\n  - {at: 100s, kind: restart}\n  - {at: 170s, kind: lose-checkpoint}\n")
	mem, err := runOpts(t, base, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	peb, err := runOpts(t, base, Options{Workers: 2, Store: "pebble"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range mem.Summary.Queries {
		a, b := mem.Summary.Queries[i], peb.Summary.Queries[i]
		if a.Restarts != 2 {
			t.Fatalf("%s: %d restarts, want 2", a.Name, a.Restarts)
		}
		if b.Store != "pebble" {
			t.Fatalf("store %q", b.Store)
		}
		a.EventsPerSecond, a.WallSeconds, b.EventsPerSecond, b.WallSeconds, b.Store = 0, 0, 0, 0, a.Store
		if js(a) != js(b) {
			t.Errorf("%s: memory and pebble differ:\n%s\n%s", a.Name, js(a), js(b))
		}
	}
	if !bytes.Equal(timeseries(t, mem), timeseries(t, peb)) {
		t.Error("timeseries differ between memory and pebble")
	}
}

func TestSparkInterval(t *testing.T) {
	for d, want := range map[time.Duration]string{
		20 * time.Minute: "20 minutes", 338 * time.Second: "5 minutes 38 seconds", time.Hour: "1 hour",
		1500 * time.Millisecond: "1 second 500 milliseconds", 0: "0 seconds", 25 * time.Hour: "1 day 1 hour",
	} {
		got := sparkInterval(d)
		if got != want {
			t.Errorf("sparkInterval(%v) = %q, want %q", d, got, want)
		}
		ms, err := interval.ParseSpark(got)
		if err != nil || ms != d.Milliseconds() {
			t.Errorf("ParseSpark(%q) = %d, %v", got, ms, err)
		}
	}
}
