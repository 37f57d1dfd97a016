package generators

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators/eventlog"
	"github.com/dedupsim/dedupsim/generators/randvar"
)

// writeLogCSV writes the rows of g as a CSV log at path: every schema
// column, and the arrival, times in epoch microseconds. The id is the
// UUID text, the number, or (composite) the number split in two columns.
func writeLogCSV(tb testing.TB, g *Generator, path string, composite bool) int {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if composite {
		w.WriteString("k1,k2,")
	} else {
		w.WriteString("event_id,")
	}
	w.WriteString("customer_id,event_time,ingest_time,attempt,payload,arrival\n")
	var r Row
	n := 0
	var buf []byte
	for g.Next(&r) {
		buf = buf[:0]
		switch {
		case composite:
			buf = strconv.AppendInt(buf, r.EventNum%1000, 10)
			buf = append(buf, ",x"...)
			buf = strconv.AppendInt(buf, r.EventNum/1000, 10)
		case g.IDs() == UUIDIDs:
			buf = append(buf, r.EventID[:]...)
		default:
			buf = strconv.AppendInt(buf, r.EventNum, 10)
		}
		for _, v := range []int64{r.CustomerID, r.EventTime, r.IngestTime, r.Attempt, r.Payload, r.Arrival} {
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, v, 10)
		}
		buf = append(buf, '\n')
		w.Write(buf)
		n++
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return n
}

func logEvents(path string, id ...string) *Events {
	e := &Events{File: path, ID: id, EventTime: "event_time", ArrivalTime: "arrival", TimeUnit: "us"}
	e.SetDefaults()
	return e
}

func retriesConfig(d time.Duration, rate float64, ids IDForm) *Config {
	return workload(d, rate, withRetries(0.2, geometric(1.5), randvar.Spec{Kind: randvar.KindLogNormal, Median: 20, P99: 120}, Restamp), func(s *Config) {
		s.Workload.ArrivalDelay = exponential(2)
		s.Workload.IDs = ids
	})
}

// TestLogSourceMatchesGenerator: a generator's rows written as a log and
// read back by LogSource are the generator's rows, ground truth
// included (bad clocks and heartbeats aside: a log has none of its own).
func TestLogSourceMatchesGenerator(t *testing.T) {
	for _, ids := range []IDForm{UUIDs, Ints} {
		t.Run("ids="+string(ids), func(t *testing.T) {
			cfg := retriesConfig(3*time.Minute, 50, ids)
			path := filepath.Join(t.TempDir(), "log.csv")
			n := writeLogCSV(t, mustNew(t, cfg), path, false)
			e := logEvents(path, "event_id")
			x, err := ScanLog(e)
			if err != nil {
				t.Fatal(err)
			}
			if x.IDs() != ids || x.Rows != int64(n) {
				t.Fatalf("index: ids %s, %d rows; want %s, %d", x.IDs(), x.Rows, ids, n)
			}
			e.Index = x
			src, err := NewLogSource(e)
			if err != nil {
				t.Fatal(err)
			}
			g := mustNew(t, cfg)
			var want, got Row
			copies := 0
			for i := 0; g.Next(&want); i++ {
				if !src.Next(&got) {
					t.Fatalf("the log ended at row %d: %v", i, src.Err())
				}
				want.Truth.BadClock, want.Truth.Heartbeat = false, false
				if got != want {
					t.Fatalf("row %d:\nlog       %+v\ngenerated %+v", i, got, want)
				}
				if want.Truth.Copy > 0 {
					copies++
				}
			}
			if src.Next(&got) || src.Err() != nil {
				t.Fatalf("the log has more rows, or failed: %v", src.Err())
			}
			if copies == 0 {
				t.Fatal("no copies: the test proves nothing")
			}
		})
	}
}

// TestLogSourceOtherIDs: a composite id is numbered by first appearance,
// exactly; a log whose ids start as integers and turn to text is rekeyed
// without losing its counts.
func TestLogSourceOtherIDs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log.csv")
	os.WriteFile(p, []byte("id,event_time,arrival\n5,1,1\n7,1,2\nx,1,3\n5,1,4\n007,1,5\n7,1,6\n"), 0o644)
	e := logEvents(p, "id")
	x, err := ScanLog(e)
	if err != nil {
		t.Fatal(err)
	}
	if x.IDForm() != "other" || x.Events != 4 {
		t.Fatalf("form %s, %d events; want other, 4 (007 is not 7)", x.IDForm(), x.Events)
	}
	e.Index = x
	src, _ := NewLogSource(e)
	var r Row
	var got []string
	for src.Next(&r) {
		got = append(got, fmt.Sprintf("%d/%d/%d", r.Truth.Event, r.Truth.Copy, r.Truth.Copies))
	}
	want := "[0/0/2 1/0/2 2/0/1 0/1/2 3/0/1 1/1/2]"
	if fmt.Sprint(got) != want || src.Err() != nil {
		t.Fatalf("truth %v, want %s (%v)", got, want, src.Err())
	}
}

// BenchmarkLogSource measures a log's rows against the generator's of
// the same rows, in the same run: source=generator is the generator's
// Next, source=log LogSource's (the second pass: read, parse, look up),
// source=scan ScanLog's first pass, per row. The log is CSV with epoch
// microseconds, uuid ids, written once before the timer.
func BenchmarkLogSource(b *testing.B) {
	cfg := retriesConfig(10*time.Minute, 2000, UUIDs)
	path := filepath.Join(b.TempDir(), "log.csv")
	n := writeLogCSV(b, mustNew(b, cfg), path, false)
	e := logEvents(path, "event_id")
	x, err := ScanLog(e)
	if err != nil {
		b.Fatal(err)
	}
	e.Index = x
	perRow := func(b *testing.B, next func() Source) {
		src := next()
		var r Row
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if !src.Next(&r) {
				b.StopTimer()
				src = next()
				src.Next(&r)
				b.StartTimer()
			}
		}
		b.StopTimer()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/row")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/row")
	}
	b.Run("source=generator", func(b *testing.B) {
		perRow(b, func() Source { return mustNew(b, cfg) })
	})
	b.Run("source=log", func(b *testing.B) {
		perRow(b, func() Source {
			s, err := NewLogSource(e)
			if err != nil {
				b.Fatal(err)
			}
			return s
		})
	})
	b.Run("source=scan", func(b *testing.B) {
		rows := 0
		b.ResetTimer()
		for rows < b.N {
			if _, err := ScanLog(e); err != nil {
				b.Fatal(err)
			}
			rows += n
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
	})
}

// BenchmarkLogIndex measures the first pass's memory per distinct id:
// alloc-bytes/id is what ScanLog allocates in all (its budget's buffers,
// reused, so it falls as the ids grow), kept-bytes/id what the index
// keeps on the heap after the scan (the rows' entries are on disk).
func BenchmarkLogIndex(b *testing.B) {
	for _, c := range []struct {
		name      string
		ids       IDForm
		composite bool
	}{{"uuid", UUIDs, false}, {"int", Ints, false}, {"composite", Ints, true}} {
		b.Run("ids="+c.name, func(b *testing.B) {
			cfg := workload(10*time.Minute, 1000, func(s *Config) { s.Workload.IDs = c.ids })
			path := filepath.Join(b.TempDir(), "log.csv")
			writeLogCSV(b, mustNew(b, cfg), path, c.composite)
			id := []string{"event_id"}
			if c.composite {
				id = []string{"k1", "k2"}
			}
			var alloc, kept float64
			for range b.N {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				e := logEvents(path, id...)
				x, err := ScanLog(e)
				if err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				alloc = float64(after.TotalAlloc-before.TotalAlloc) / float64(x.Events)
				runtime.GC()
				runtime.ReadMemStats(&after)
				kept = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(x.Events)
				runtime.KeepAlive(x)
				x.Close()
			}
			b.ReportMetric(alloc, "alloc-bytes/id")
			b.ReportMetric(kept, "kept-bytes/id")
		})
	}
}

// readRows reads every row of the log of e through LogSource, scanned
// with the given sort budget, and returns the rows and the index.
func readRows(t *testing.T, e *Events, budget int) ([]Row, *LogIndex) {
	t.Helper()
	e.SortBudget = budget
	x, err := ScanLog(e)
	if err != nil {
		t.Fatal(err)
	}
	e.Index = x
	src, err := NewLogSource(e)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	var r Row
	for src.Next(&r) {
		rows = append(rows, r)
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, x
}

// TestScanLogSpills: a log whose ids are far more than the first pass's
// budget (sorted runs spilled to disk, merged in rounds) gives every row
// the same event, copies and copy as a scan that holds it all in memory,
// for each id form.
func TestScanLogSpills(t *testing.T) {
	for _, c := range []struct {
		name      string
		ids       IDForm
		composite bool
	}{{"uuid", UUIDs, false}, {"int", Ints, false}, {"composite", Ints, true}} {
		t.Run("ids="+c.name, func(t *testing.T) {
			cfg := retriesConfig(2*time.Minute, 100, c.ids)
			path := filepath.Join(t.TempDir(), "log.csv")
			n := writeLogCSV(t, mustNew(t, cfg), path, c.composite)
			id := []string{"event_id"}
			if c.composite {
				id = []string{"k1", "k2"}
			}
			want, wx := readRows(t, logEvents(path, id...), 0)
			got, gx := readRows(t, logEvents(path, id...), 2<<10)
			if wx.Spilled != 0 || gx.Spilled <= 64 {
				t.Fatalf("runs spilled: %d with the default budget, %d with 2 KiB; want 0 and more than one merge's fan-in (64)", wx.Spilled, gx.Spilled)
			}
			if len(got) != n || len(want) != n || gx.Events != wx.Events || gx.IDForm() != wx.IDForm() {
				t.Fatalf("rows %d and %d, events %d and %d, forms %s and %s; want %d rows", len(got), len(want), gx.Events, wx.Events, gx.IDForm(), wx.IDForm(), n)
			}
			copies := 0
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("row %d:\nspilled   %+v\nin memory %+v", i, got[i], want[i])
				}
				if want[i].Truth.Copy > 0 {
					copies++
				}
			}
			if copies == 0 {
				t.Fatal("no copies: the test proves nothing")
			}
		})
	}
}

// TestScanLogMemoryBounded: the first pass allocates about its budget,
// however many distinct ids the log has: four times the ids allocate
// less than the ids' own 16 bytes each (an id map would allocate more),
// and at most four budgets more than a quarter of the ids.
func TestScanLogMemoryBounded(t *testing.T) {
	const budget = 256 << 10
	alloc := func(rate float64) (uint64, uint64) {
		cfg := workload(2*time.Minute, rate, func(s *Config) { s.Workload.IDs = UUIDs })
		path := filepath.Join(t.TempDir(), "log.csv")
		writeLogCSV(t, mustNew(t, cfg), path, false)
		e := logEvents(path, "event_id")
		e.SortBudget = budget
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		x, err := ScanLog(e)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		x.Close()
		return after.TotalAlloc - before.TotalAlloc, x.Events
	}
	small, _ := alloc(500)
	big, ids := alloc(2000)
	if ids < 200000 || big > 16*ids || big > 4*budget+small {
		t.Fatalf("scan allocated %d bytes for %d ids (and %d for a quarter of them); want less than the ids' 16 bytes each and at most 4x the budget (%d) more than the small log", big, ids, small, budget)
	}
	t.Logf("allocated %d bytes for %d ids, %d for a quarter of them", big, ids, small)
}

// TestLogSortByArrival: a log whose lines are shuffled, read with
// sort: true (in memory, and with a budget far smaller than the log, so
// sorted runs spill to disk and merge in rounds), gives every row the
// same values and ground truth as the log in arrival order.
func TestLogSortByArrival(t *testing.T) {
	cfg := retriesConfig(2*time.Minute, 100, UUIDs)
	dir := t.TempDir()
	ordered := filepath.Join(dir, "ordered.csv")
	writeLogCSV(t, mustNew(t, cfg), ordered, false)
	data, err := os.ReadFile(ordered)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	// Keep one row of each arrival, so that the order is total (rows of
	// equal arrival keep their file order: TestSortedReaderIsStable).
	seen := map[string]bool{}
	body := lines[1:][:0]
	for _, l := range lines[1:] {
		a := l[strings.LastIndexByte(l, ',')+1:]
		if !seen[a] {
			seen[a] = true
			body = append(body, l)
		}
	}
	os.WriteFile(ordered, []byte(lines[0]+"\n"+strings.Join(body, "\n")+"\n"), 0o644)
	shuffled := slices.Clone(body)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if slices.Equal(shuffled, body) {
		t.Fatal("the shuffle left the rows in order")
	}
	// Two files, each out of order.
	half := len(shuffled) / 2
	sdir := filepath.Join(dir, "shuffled")
	os.Mkdir(sdir, 0o755)
	os.WriteFile(filepath.Join(sdir, "a.csv"), []byte(lines[0]+"\n"+strings.Join(shuffled[:half], "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(sdir, "b.csv"), []byte(lines[0]+"\n"+strings.Join(shuffled[half:], "\n")+"\n"), 0o644)

	if _, err := ScanLog(logEvents(sdir, "event_id")); err == nil || !strings.Contains(err.Error(), "rows must be in arrival order") {
		t.Fatalf("the shuffled log without sort: %v, want an arrival-order error", err)
	}
	want, _ := readRows(t, logEvents(ordered, "event_id"), 0)
	for _, budget := range []int{0, 4 << 10} {
		e := logEvents(sdir, "event_id")
		e.Sort = true
		r, err := eventlog.Open(func() eventlog.Spec { s := e.Spec(); s.SortBudget = budget; return s }())
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
		}
		if spilled := r.Spilled(); budget == 0 && spilled != 0 || budget != 0 && spilled <= 64 {
			t.Fatalf("budget %d: %d runs spilled", budget, spilled)
		}
		r.Close()
		got, _ := readRows(t, e, budget)
		if len(got) != len(want) {
			t.Fatalf("budget %d: %d rows, want %d", budget, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("budget %d: row %d:\nsorted  %+v\nordered %+v", budget, i, got[i], want[i])
			}
		}
	}
}
