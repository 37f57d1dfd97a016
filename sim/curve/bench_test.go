package curve

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// The pass's cost against its parts on experiments/capacity-plan.yaml's
// within-watermark query: the bare stream (generation only), the pass
// without state delays and with the plan's grid, and one direct run at
// one delay, in the same run (go test -bench . ./sim/curve).
func benchScenario(b *testing.B) *scenario.Scenario {
	sc, err := scenario.Load(filepath.Join("..", "..", "experiments", "capacity-plan.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	sc.Queries = sc.Queries[:1]
	return sc
}

func BenchmarkStream(b *testing.B) {
	sc := benchScenario(b)
	for b.Loop() {
		g, err := generators.New(sc.Generator())
		if err != nil {
			b.Fatal(err)
		}
		var r generators.Row
		for g.Next(&r) {
		}
	}
}

func BenchmarkPass(b *testing.B) {
	sc := benchScenario(b)
	for b.Loop() {
		if _, err := Compute(context.Background(), sc, "within-watermark", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPassGridState(b *testing.B) {
	sc := benchScenario(b)
	ds := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 7 * time.Minute, 10 * time.Minute, 15 * time.Minute, 20 * time.Minute, 30 * time.Minute}
	for b.Loop() {
		if _, err := Compute(context.Background(), sc, "within-watermark", Options{StateDelays: ds}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirectRun(b *testing.B) {
	sc := benchScenario(b)
	sc.Sweep = &scenario.Sweep{Delay: []interval.Duration{interval.Duration(5 * time.Minute)}}
	for b.Loop() {
		res, err := runner.Run(context.Background(), sc, runner.Options{Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		res.Close()
	}
}

// TestPassCPU logs the CPU time (getrusage) of the pass with the plan's
// state delays, the bare stream and a direct run at one delay, one after
// the other (a measurement, asserting nothing): go test -run TestPassCPU -v.
func TestPassCPU(t *testing.T) {
	if os.Getenv("DEDUPSIM_MEASURE") == "" {
		t.Skip("a measurement: DEDUPSIM_MEASURE=1")
	}
	sc, err := scenario.Load(filepath.Join("..", "..", "experiments", "capacity-plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc.Queries = sc.Queries[:1]
	ds := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 7 * time.Minute, 10 * time.Minute, 15 * time.Minute, 20 * time.Minute, 30 * time.Minute}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for range 3 {
		t0 := cpu()
		g, _ := generators.New(sc.Generator())
		var r generators.Row
		for g.Next(&r) {
		}
		t1 := cpu()
		if _, err := Compute(context.Background(), sc, "within-watermark", Options{}); err != nil {
			t.Fatal(err)
		}
		t2 := cpu()
		if _, err := Compute(context.Background(), sc, "within-watermark", Options{StateDelays: ds}); err != nil {
			t.Fatal(err)
		}
		t3 := cpu()
		run := *sc
		run.Sweep = &scenario.Sweep{Delay: []interval.Duration{interval.Duration(5 * time.Minute)}}
		res, err := runner.Run(context.Background(), &run, runner.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		t4 := cpu()
		t.Logf("stream %v, pass %v, pass with the grid's state %v, direct run %v", t1-t0, t2-t1, t3-t2, t4-t3)
	}
}

// TestRowPassCPU logs, for the Flink, Kafka Streams and Beam queries of
// experiments/engines-horizon.yaml, the CPU time (getrusage) of the pass,
// of the pass with the plan's grid's state, and of a direct run at one
// horizon, one after the other (a measurement, asserting nothing): go
// test -run TestRowPassCPU -v with DEDUPSIM_MEASURE=1.
func TestRowPassCPU(t *testing.T) {
	if os.Getenv("DEDUPSIM_MEASURE") == "" {
		t.Skip("a measurement: DEDUPSIM_MEASURE=1")
	}
	all, err := scenario.Load(filepath.Join("..", "..", "experiments", "engines-horizon.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ds := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 7 * time.Minute, 10 * time.Minute, 15 * time.Minute, 20 * time.Minute, 30 * time.Minute}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for _, name := range []string{"flink-keep-first", "kstreams-stream", "beam-processing"} {
		sc := *all
		sc.Queries = nil
		for _, q := range all.Queries {
			if q.Name == name {
				sc.Queries = append(sc.Queries, q)
			}
		}
		for range 2 {
			t0 := cpu()
			if _, err := Compute(context.Background(), &sc, name, Options{}); err != nil {
				t.Fatal(err)
			}
			t1 := cpu()
			if _, err := Compute(context.Background(), &sc, name, Options{StateDelays: ds}); err != nil {
				t.Fatal(err)
			}
			t2 := cpu()
			run := sc
			run.Sweep = &scenario.Sweep{Delay: []interval.Duration{interval.Duration(5 * time.Minute)}}
			res, err := runner.Run(context.Background(), &run, runner.Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			res.Close()
			t3 := cpu()
			t.Logf("%s: pass %v, pass with the grid's state %v, direct run %v", name, t1-t0, t2-t1, t3-t2)
		}
	}
}
