package plan

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestTmpMeasureBatch(t *testing.T) {
	data, _ := os.ReadFile("../../experiments/capacity-plan.yaml")
	sc, err := scenario.Parse(data, "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tg := Targets{MaxMissedRate: 0.001, MaxFalseDropRate: 0.0001, ProductionRate: 20000, MemoryBudget: 4 << 30}
	for rep := 0; rep < 2; rep++ {
		for _, seeds := range []int{5, 1} {
			for _, b := range []int{1, 4} {
				c0, w0 := cpuNow(), time.Now()
				if _, err := Search(context.Background(), sc, "within-watermark", tg, Options{Workers: 2, Seeds: seeds, maxBatch: b}); err != nil {
					t.Fatal(err)
				}
				wall, cpu := time.Since(w0), cpuNow()-c0
				t.Logf("seeds %d batch %d: wall %.2fs cpu %.2fs cores %.2f", seeds, b, wall.Seconds(), cpu.Seconds(), cpu.Seconds()/wall.Seconds())
			}
		}
	}
}
