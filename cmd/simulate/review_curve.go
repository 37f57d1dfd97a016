package main

import (
	"fmt"
	"math"

	"github.com/dedupsim/dedupsim/reports"
	"github.com/dedupsim/dedupsim/sim/plan"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// reviewCurve fills the review's curve from the plan's first seed's
// one-pass curve (nothing when plan read none): the rates and false drops
// at every point, the peak state where the pass tracked it, and there, with
// a cluster, each provider's executor peak state memory, estimated from its
// sizing at the pick (memAt). pickRows is the peak state rows of the direct
// run at the pick on that seed (0: none, no estimate).
func reviewCurve(rv *reports.Review, res *plan.Result, sc *scenario.Scenario, cluster *sparkmodel.Config, sized []sizedProvider, pickRows int64) error {
	if len(res.Curves) == 0 || len(res.Seeds) == 0 || res.Curves[0].Seed != res.Seeds[0].Seed {
		return nil
	}
	var shape sparkmodel.Shape
	estimate := cluster != nil && pickRows > 0 && len(sized) > 0
	if estimate {
		s, err := dedupShape(sc, res.Query)
		if err != nil {
			return err
		}
		shape = s
		rv.CurveMemory = fmt.Sprintf("Each provider's executor peak state memory is its sizing at the recommended delay (%s rows of peak state on this seed), moved by what the keys at another delay add to or take from its stores: the retained rows and maps, and one wave of in-flight maps, for hdfs; the block cache (up to its size) and the index and filter blocks for rocksdb (docs/spark-model.md); an estimate away from the pick, exact at it.",
			fmtRateCLI(float64(pickRows)))
	}
	for _, p := range res.Curves[0].Points {
		cp := reports.ReviewCurvePoint{DelaySeconds: p.DelaySeconds, MissedRate: p.MissedRate, FalseDropRate: p.FalseDropRate,
			FalseDropsByCause: p.FalseDropsByCause, PeakStateRows: p.PeakStateRows, PeakStateBytes: p.PeakStateBytes}
		if estimate && p.PeakStateRows != nil {
			for _, s := range sized {
				cp.ExecutorMemoryBytes = append(cp.ExecutorMemoryBytes, memAt(s.provider, s.mem, *p.PeakStateRows, pickRows, shape, *cluster))
			}
		}
		rv.Curve = append(rv.Curve, cp)
	}
	return nil
}

// sizedProvider is a provider's executor peak state memory at the pick.
type sizedProvider struct {
	provider string
	mem      int64
}

// dedupShape returns the state entry shape of query name's dedup.
func dedupShape(sc *scenario.Scenario, name string) (sparkmodel.Shape, error) {
	for _, q := range sc.Queries {
		if q.Name != name {
			continue
		}
		c, err := chain.Parse(q.Query)
		if err != nil {
			return sparkmodel.Shape{}, err
		}
		p, err := chain.PlanFor(c, scenario.Schema())
		if err != nil {
			return sparkmodel.Shape{}, err
		}
		for _, n := range p.Nodes {
			if n.IsDedup() {
				return sparkmodel.ShapeOf(n.KeyColumns, sc.Workload.IDs.Kind()), nil
			}
		}
	}
	return sparkmodel.Shape{}, fmt.Errorf("query %s: no dedup to size", name)
}

// memAt estimates a provider's executor peak state memory at a delay
// whose peak state is rows, from mem, its sizing at the pick, whose peak
// state is pickRows: the keys spread evenly over the partitions, an
// executor holding ceil(partitions / executors) stores, the difference
// in keys per store priced by the model of sim/spark/sparkmodel (memory.go)
// in steady state. hdfs: every store retains its rows (key, value and
// their objects) and two versions' map entries, and coresPerExecutor
// stores hold a new map in flight; rocksdb: every store's block cache
// fills up to its size and its index and filter blocks grow with the keys
// (its memtable holds a batch's writes, which the delay does not change).
func memAt(provider string, mem, rows, pickRows int64, shape sparkmodel.Shape, c sparkmodel.Config) int64 {
	parts, execs := max(c.Partitions, 1), max(c.Executors, 1)
	stores := float64((parts + execs - 1) / execs)
	cores := math.Min(float64(max(c.CoresPerExecutor, 1)), stores)
	k, k0 := float64(rows)/float64(parts), float64(pickRows)/float64(parts)
	var delta float64
	switch provider {
	case sparkmodel.RocksDB:
		conf := sparkmodel.DefaultRocksDBConf()
		e := sparkmodel.RocksDBEntryOf(shape, conf)
		g := func(k float64) float64 { return math.Min(float64(conf.BlockCacheBytes), k*e.Data) + k*e.Filter }
		delta = stores * (g(k) - g(k0))
	default:
		retained := float64(shape.KeyBytes+shape.ValueBytes+sparkmodel.HDFSRowObjectBytes) + 2*sparkmodel.HDFSMapEntryBytes
		delta = (k - k0) * (stores*retained + cores*sparkmodel.HDFSMapEntryBytes)
	}
	return max(0, int64(math.Round(float64(mem)+delta)))
}
