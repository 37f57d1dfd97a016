package runner_test

import (
	"context"
	"os"
	"testing"

	"github.com/dedupsim/dedupsim/sim/runner"
)

// BenchmarkCheckpointedRun runs the quickstart's three queries on the
// memory store twice over the same stream, one job at a time (Workers 1):
// without a checkpoint, then with a checkpoint folder (the resumable run
// of `simulate run --checkpoint DIR`: a state delta per batch and query,
// background snapshots, a job snapshot every second). b.N is the stream's
// rows, as in BenchmarkRun:
//
//	go test ./sim/runner -run '^$' -bench CheckpointedRun -benchtime 1000000x
//	go test ./sim/runner -run '^$' -bench CheckpointedRun -benchtime 10000000x
//
// It reports, per stream row, both runs' wall (ns/row, plain-ns/row), CPU
// (cpu-ns/row, plain-cpu-ns/row) and allocations (allocs/row,
// plain-allocs/row), and ratio, the checkpointed run's wall time over the
// plain one's (target: at most 1.5, flat in the run's length), and
// cpu-ratio likewise. The background snapshots run beside the jobs, on the
// second core when it is free: cpu-ratio shows what they cost in all.
func BenchmarkCheckpointedRun(b *testing.B) {
	b.StopTimer()
	b.ReportAllocs()
	s := e2eScenario(b, quickstartAt, e2eRows(b))
	run := func(bb *testing.B, dir string) (measured, int64) {
		var rows int64
		m := measure(bb, func() {
			res, err := runner.Run(context.Background(), s, runner.Options{Workers: 1, CheckpointDir: dir, Store: "memory"})
			if err != nil {
				b.Fatal(err)
			}
			rows = res.Summary.Queries[0].InputRows
			if err := res.Close(); err != nil {
				b.Fatal(err)
			}
		})
		return m, rows
	}
	plain, rows := run(nil, "")
	dir := b.TempDir()
	ck, ckRows := run(b, dir)
	if ckRows != rows {
		b.Fatalf("the checkpointed run read %d rows, the plain one %d", ckRows, rows)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) == 0 {
		b.Fatalf("the checkpointed run wrote no checkpoint (%v)", err)
	}
	n := float64(rows)
	b.ReportMetric(float64(ck.wall.Nanoseconds())/n, "ns/row")
	b.ReportMetric(float64(plain.wall.Nanoseconds())/n, "plain-ns/row")
	b.ReportMetric(float64(ck.cpu.Nanoseconds())/n, "cpu-ns/row")
	b.ReportMetric(float64(plain.cpu.Nanoseconds())/n, "plain-cpu-ns/row")
	b.ReportMetric(float64(ck.mallocs)/n, "allocs/row")
	b.ReportMetric(float64(plain.mallocs)/n, "plain-allocs/row")
	b.ReportMetric(float64(ck.wall)/float64(plain.wall), "ratio")
	b.ReportMetric(float64(ck.cpu)/float64(max(plain.cpu, 1)), "cpu-ratio")
	b.ReportMetric(n, "rows")
}
