package generators

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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
// scan-bytes/id is the heap of the id map ScanLog fills while it reads
// (a map of the form's key to a uint32, rebuilt here with the log's own
// ids, measured after a collection), kept-bytes/id what the index keeps
// after the scan (the copies; the rows' event numbers are on disk).
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
			var scan, kept float64
			for range b.N {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				e := logEvents(path, id...)
				x, err := ScanLog(e)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				kept = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(x.Events)
				// The map as the scan held it.
				r, _ := eventlog.Open(e.Spec())
				runtime.GC()
				runtime.ReadMemStats(&before)
				ints, uuids, others := map[int64]uint32{}, map[[16]byte]uint32{}, map[string]uint32{}
				for r.Next() {
					rec := r.Record()
					switch {
					case c.composite:
						others[string(rec.ID)] = 0
					case c.ids == UUIDs:
						u, _ := parseLowerUUID(rec.ID)
						uuids[u] = 0
					default:
						n, _ := parseCanonicalInt(rec.ID)
						ints[n] = 0
					}
				}
				r.Close()
				runtime.GC()
				runtime.ReadMemStats(&after)
				scan = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(x.Events)
				runtime.KeepAlive(ints)
				runtime.KeepAlive(uuids)
				runtime.KeepAlive(others)
				runtime.KeepAlive(x)
			}
			b.ReportMetric(scan, "scan-bytes/id")
			b.ReportMetric(kept, "kept-bytes/id")
		})
	}
}
