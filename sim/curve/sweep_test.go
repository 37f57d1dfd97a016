package curve

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// TestSweepCurveEqualsSweepRuns: the curve a sweep draws (ForSweep) holds,
// at every swept delay, the rates, false drops by cause and peak state of
// the sweep's own direct runs; it has a point at every second below
// 200 s besides; and a query it cannot compute is named with the reason.
func TestSweepCurveEqualsSweepRuns(t *testing.T) {
	swept := []time.Duration{2 * time.Second, 9 * time.Second, 47 * time.Second, 90 * time.Second, 3 * time.Minute}
	for _, v := range []variant{variants[0], variants[3], variants[5]} {
		t.Run(v.name, func(t *testing.T) {
			v.query += "\n  - name: never-evicts\n    query: dropDuplicates([\"event_id\"])"
			sc, err := scenario.Parse([]byte(v.yaml()), v.name+".yaml")
			if err != nil {
				t.Fatal(err)
			}
			sc.Sweep = &scenario.Sweep{}
			for _, d := range swept {
				sc.Sweep.Delay = append(sc.Sweep.Delay, interval.Duration(d))
			}
			cs, err := ForSweep(context.Background(), sc)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs.Queries) != 1 || cs.Queries[0].Query != "q" {
				t.Fatalf("curves of %v, want q's", cs.Queries)
			}
			if len(cs.Unsupported) != 0 {
				t.Errorf("unsupported %v: a query without a watermark is not swept", cs.Unsupported)
			}
			pts := cs.Queries[0].Points
			if len(pts) < 180 {
				t.Errorf("%d points up to %s, want one a second below 200 s", len(pts), swept[len(swept)-1])
			}
			res, err := runner.Run(context.Background(), sc, runner.Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			varied := map[string]bool{}
			n := 0
			for _, q := range res.Summary.Queries {
				if q.Name != "q" {
					continue
				}
				var p *metrics.CurvePoint
				for i := range pts {
					if pts[i].DelaySeconds == *q.Delay {
						p = &pts[i]
					}
				}
				if p == nil {
					t.Fatalf("no point at the swept delay %vs", *q.Delay)
				}
				n++
				if diff := pointDiff(*p, q); diff != "" {
					t.Errorf("at %vs: %s", *q.Delay, diff)
				}
				varied[fmt.Sprint(q.MissedDuplicates, q.FalseDrops, q.PeakStateRows)] = true
			}
			if n != len(swept) {
				t.Errorf("%d runs of q, want %d", n, len(swept))
			}
			if len(varied) < 4 {
				t.Errorf("the swept delays change the counts too little (%v): the test shows nothing", varied)
			}
		})
	}
	v := variants[0]
	v.extra = "faults:\n  - {kind: restart, at: 2m}"
	sc, err := scenario.Parse([]byte(v.yaml()), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc.Sweep = &scenario.Sweep{Delay: []interval.Duration{interval.Duration(time.Minute), interval.Duration(2 * time.Minute)}}
	cs, err := ForSweep(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Queries) != 0 || len(cs.Unsupported) != 1 || !strings.Contains(cs.Unsupported[0].Reason, "restart") {
		t.Errorf("with a restart: curves %v, unsupported %v; want none, q refused for the restart", cs.Queries, cs.Unsupported)
	}
}

// pointDiff lists the fields of p that differ from the run's q.
func pointDiff(p metrics.CurvePoint, q metrics.QuerySummary) string {
	var out []string
	if p.MissedRate != q.MissedDuplicateRate {
		out = append(out, fmt.Sprintf("missedRate %v, run %v", p.MissedRate, q.MissedDuplicateRate))
	}
	if p.FalseDropRate != q.FalseDropRate {
		out = append(out, fmt.Sprintf("falseDropRate %v, run %v", p.FalseDropRate, q.FalseDropRate))
	}
	if p.FalseDropsByCause != q.FalseDropsByCause {
		out = append(out, fmt.Sprintf("falseDropsByCause %+v, run %+v", p.FalseDropsByCause, q.FalseDropsByCause))
	}
	switch {
	case p.PeakStateRows == nil || p.PeakStateBytes == nil:
		out = append(out, "no peak state")
	case *p.PeakStateRows != q.PeakStateRows || *p.PeakStateBytes != q.PeakStateBytes:
		out = append(out, fmt.Sprintf("peak state %d rows %d bytes, run %d rows %d bytes", *p.PeakStateRows, *p.PeakStateBytes, q.PeakStateRows, q.PeakStateBytes))
	}
	return strings.Join(out, "; ")
}
