package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dedupsim/dedupsim/metrics/progresslog"

	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// genLog describes a progress log generated from known costs.
type genLog struct {
	seed uint64
	// costs are the true per-task costs; executors × cores the slots.
	costs            sparkmodel.Costs
	executors, cores int
	// runs holds the number of partitions of each run; every run starts
	// from a new checkpoint (empty state) and has perRun executed batches.
	runs   []int
	perRun int
	// noise is the standard deviation of the Gaussian noise, as a share
	// of the duration.
	noise float64
	// dupMax is the largest share of a batch's rows that are duplicates
	// (uniform from 0); evictMax the largest share of the state a batch
	// evicts.
	dupMax, evictMax float64
	// evictFrom is the first batch of each run that evicts: before it,
	// the watermark has not yet passed the first keys.
	evictFrom int
	// allNew makes every input row a new key (no duplicates).
	allNew bool
	// noPartitions leaves numShufflePartitions out.
	noPartitions bool
	// idleEvery adds a trigger that runs no batch after every idleEvery
	// batches (0: none).
	idleEvery int
	// warmupMs is added to the first batch of each run.
	warmupMs float64
	// otherPhasesMs is triggerExecution - addBatch.
	otherPhasesMs float64
	// opName is the state operator's name, dedupeWithinWatermark when
	// empty (an operator that scans); noWatermark leaves
	// eventTime.watermark out; noDups leaves numDroppedDuplicateRows
	// and numRowsDroppedByWatermark out (older Spark).
	opName         string
	noWatermark    bool
	noDups         bool
	rocksdbMetrics bool
}

// generate returns the records of the log, in order.
func (g genLog) generate() []progresslog.Progress {
	rng := rand.New(rand.NewPCG(g.seed, 0x9e3779b97f4a7c15))
	slots := float64(g.executors * g.cores)
	c := g.costs
	var out []progresslog.Progress
	batchID := int64(0)
	ts := 0
	for run, parts := range g.runs {
		state := 0.0
		runID := fmt.Sprintf("run-%d", run)
		var last progresslog.Progress
		for i := 0; i < g.perRun; i++ {
			rows := math.Round(rng.Float64() * 2e6)
			if rng.Float64() < 0.1 {
				rows = 0 // a no-data batch, run to evict
			}
			newKeys := math.Round(rows * (1 - g.dupMax*rng.Float64()))
			if g.allNew {
				newKeys = rows
			}
			before := state + newKeys
			removed := 0.0
			if i >= g.evictFrom {
				removed = math.Round(before * g.evictMax * rng.Float64())
			}
			state = before - removed
			d := c.BatchOverheadMs +
				(c.RowNs*rows+c.NewKeyNs*newKeys+c.ScanKeyNs*before+c.RemoveKeyNs*removed)/1e6/slots +
				c.PartitionCommitMs*float64(parts)/slots
			d *= 1 + g.noise*rng.NormFloat64()
			if i == 0 {
				d += g.warmupMs
			}
			trigger := math.Round(d)
			name := g.opName
			if name == "" {
				name = "dedupeWithinWatermark"
			}
			op := progresslog.StateOperator{
				OperatorName:   name,
				NumRowsTotal:   progresslog.Int{Value: int64(state), OK: true},
				NumRowsUpdated: progresslog.Int{Value: int64(newKeys), OK: true},
				NumRowsRemoved: progresslog.Int{Value: int64(removed), OK: true},
			}
			if !g.noDups {
				op.NumRowsDroppedByWatermark = progresslog.Int{Value: 0, OK: true}
				op.CustomMetrics = map[string]int64{"numDroppedDuplicateRows": int64(rows - newKeys)}
			}
			if g.rocksdbMetrics {
				if op.CustomMetrics == nil {
					op.CustomMetrics = map[string]int64{}
				}
				op.CustomMetrics["rocksdbCommitFlushLatency"] = 3
			}
			if !g.noPartitions {
				op.NumShufflePartitions = progresslog.Int{Value: int64(parts), OK: true}
			}
			ts++
			last = progresslog.Progress{
				Line: ts, ID: "q-1", RunID: runID, Name: "generated",
				Timestamp:    progresslog.Time{Raw: fmt.Sprint(ts), OK: true},
				BatchID:      progresslog.Int{Value: batchID, OK: true},
				NumInputRows: progresslog.Int{Value: int64(rows), OK: true},
				DurationMs: progresslog.Durations{
					TriggerExecution: progresslog.Int{Value: int64(trigger), OK: true},
					AddBatch:         progresslog.Int{Value: int64(trigger - g.otherPhasesMs), OK: true},
				},
				StateOperators: []progresslog.StateOperator{op},
			}
			if !g.noWatermark {
				last.EventTime.Watermark = progresslog.Time{Raw: "1970-01-01T00:00:00.000Z", OK: true}
			}
			out = append(out, last)
			batchID++
			if g.idleEvery > 0 && (i+1)%g.idleEvery == 0 {
				// A trigger that found no data and ran no batch: Spark
				// repeats the last operators' counts, with no update.
				idle := last
				ts++
				idle.Line, idle.Timestamp.Raw = ts, fmt.Sprint(ts)
				idle.NumInputRows = progresslog.Int{Value: 0, OK: true}
				idle.DurationMs = progresslog.Durations{TriggerExecution: progresslog.Int{Value: 3, OK: true}}
				idleOp := op
				idleOp.NumRowsUpdated = progresslog.Int{Value: 0, OK: true}
				idle.StateOperators = []progresslog.StateOperator{idleOp}
				out = append(out, idle)
			}
		}
	}
	return out
}

// truth returns the costs the generated logs of the tests use: of the
// order of a real cluster's, with every term's share of a batch's
// duration large enough to be measured.
func truth() sparkmodel.Costs {
	return sparkmodel.Costs{BatchOverheadMs: 300, RowNs: 1500, NewKeyNs: 900, ScanKeyNs: 60, RemoveKeyNs: 650, PartitionCommitMs: 12}
}
