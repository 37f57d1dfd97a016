package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// progressGen writes a Spark progress log generated from known per-task
// costs, with records shaped as Spark 3.5 writes them: sources with a
// null startOffset on the first batch, a sink, RocksDB and
// loadedMapCache custom metrics, idle triggers, a warm-up batch, and
// driver log lines around the records.
type progressGen struct {
	seed  uint64
	costs sparkmodel.Costs
	// executors × cores are the slots the costs are spread over.
	executors, cores int
	// runs holds each run's shuffle partitions; every run starts from a
	// new checkpoint (a new id, empty state) and has perRun batches.
	runs   []int
	perRun int
	// maxRows bounds a batch's rows; noise is the standard deviation of
	// the durations' relative noise.
	maxRows float64
	noise   float64
	// form is "driver", "jsonl", "array" or "pretty".
	form string
}

// progressRecord is a StreamingQueryProgress with the fields Spark 3.5
// writes, in its order.
type progressRecord struct {
	ID                     string            `json:"id"`
	RunID                  string            `json:"runId"`
	Name                   string            `json:"name"`
	Timestamp              string            `json:"timestamp"`
	BatchID                int64             `json:"batchId"`
	BatchDuration          int64             `json:"batchDuration"`
	NumInputRows           int64             `json:"numInputRows"`
	InputRowsPerSecond     float64           `json:"inputRowsPerSecond"`
	ProcessedRowsPerSecond float64           `json:"processedRowsPerSecond"`
	DurationMs             map[string]int64  `json:"durationMs"`
	EventTime              map[string]string `json:"eventTime,omitempty"`
	StateOperators         []stateOperator   `json:"stateOperators"`
	Sources                []source          `json:"sources"`
	Sink                   sink              `json:"sink"`
}

type stateOperator struct {
	OperatorName              string           `json:"operatorName"`
	NumRowsTotal              int64            `json:"numRowsTotal"`
	NumRowsUpdated            int64            `json:"numRowsUpdated"`
	AllUpdatesTimeMs          int64            `json:"allUpdatesTimeMs"`
	NumRowsRemoved            int64            `json:"numRowsRemoved"`
	AllRemovalsTimeMs         int64            `json:"allRemovalsTimeMs"`
	CommitTimeMs              int64            `json:"commitTimeMs"`
	MemoryUsedBytes           int64            `json:"memoryUsedBytes"`
	NumRowsDroppedByWatermark int64            `json:"numRowsDroppedByWatermark"`
	NumShufflePartitions      int64            `json:"numShufflePartitions"`
	NumStateStoreInstances    int64            `json:"numStateStoreInstances"`
	CustomMetrics             map[string]int64 `json:"customMetrics"`
}

type source struct {
	Description            string            `json:"description"`
	StartOffset            any               `json:"startOffset"`
	EndOffset              any               `json:"endOffset"`
	LatestOffset           any               `json:"latestOffset"`
	NumInputRows           int64             `json:"numInputRows"`
	InputRowsPerSecond     float64           `json:"inputRowsPerSecond"`
	ProcessedRowsPerSecond float64           `json:"processedRowsPerSecond"`
	Metrics                map[string]string `json:"metrics"`
}

type sink struct {
	Description   string `json:"description"`
	NumOutputRows int64  `json:"numOutputRows"`
}

// write returns the log.
func (g progressGen) write() []byte {
	rng := rand.New(rand.NewPCG(g.seed, 0x6a09e667f3bcc908))
	slots := float64(g.executors * g.cores)
	c := g.costs
	var recs [][]byte
	var idle []bool
	start := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	ts := start
	offset := int64(0)
	for run, parts := range g.runs {
		id := fmt.Sprintf("0f3c2a9e-5d41-4b8e-9c07-%012x", run+1)
		runID := fmt.Sprintf("7b1e9d20-3c4a-4f65-8a12-%012x", run+1)
		state := 0.0
		for i := 0; i < g.perRun; i++ {
			rows := math.Round(rng.Float64() * g.maxRows)
			if rng.Float64() < 0.08 {
				rows = 0 // a no-data batch, run to evict
			}
			newKeys := math.Round(rows * (1 - 0.9*rng.Float64()))
			before := state + newKeys
			removed := 0.0
			if i >= g.perRun/4 {
				removed = math.Round(before * 0.08 * rng.Float64())
			}
			state = before - removed
			d := c.BatchOverheadMs +
				(c.RowNs*rows+c.NewKeyNs*newKeys+c.ScanKeyNs*before+c.RemoveKeyNs*removed)/1e6/slots +
				c.PartitionCommitMs*float64(parts)/slots
			d *= 1 + g.noise*rng.NormFloat64()
			if i == 0 {
				d += 6000 // the warm-up batch: JIT, first loads
			}
			trigger := int64(math.Round(d))
			other := int64(40 + rng.IntN(30))
			var startOffset any
			if i > 0 {
				startOffset = map[string]map[string]int64{"events": {"0": offset / 2, "1": offset - offset/2}}
			}
			offset += int64(rows)
			end := map[string]map[string]int64{"events": {"0": offset / 2, "1": offset - offset/2}}
			secs := 10.0
			rec := progressRecord{
				ID: id, RunID: runID, Name: "dedup-events", Timestamp: ts.Format("2006-01-02T15:04:05.000Z"),
				BatchID: int64(i), BatchDuration: trigger + 5, NumInputRows: int64(rows),
				InputRowsPerSecond: math.Round(rows/secs*10) / 10, ProcessedRowsPerSecond: math.Round(rows/(float64(trigger)/1000)*10) / 10,
				DurationMs: map[string]int64{
					"addBatch": trigger - other, "commitOffsets": other / 3, "getBatch": 0, "latestOffset": 3,
					"queryPlanning": other / 3, "triggerExecution": trigger, "walCommit": other - 2*(other/3) - 3,
				},
				EventTime: map[string]string{
					"avg": ts.Add(-20 * time.Second).Format("2006-01-02T15:04:05.000Z"), "max": ts.Add(-time.Second).Format("2006-01-02T15:04:05.000Z"),
					"min": ts.Add(-40 * time.Second).Format("2006-01-02T15:04:05.000Z"), "watermark": ts.Add(-10 * time.Minute).Format("2006-01-02T15:04:05.000Z"),
				},
				StateOperators: []stateOperator{{
					OperatorName: "dedupeWithinWatermark", NumRowsTotal: int64(state), NumRowsUpdated: int64(newKeys),
					AllUpdatesTimeMs: trigger / 3, NumRowsRemoved: int64(removed), AllRemovalsTimeMs: trigger / 5, CommitTimeMs: trigger / 10,
					MemoryUsedBytes: int64(state) * 230, NumRowsDroppedByWatermark: int64(rows / 500), NumShufflePartitions: int64(parts),
					NumStateStoreInstances: int64(parts),
					CustomMetrics: map[string]int64{
						"loadedMapCacheHitCount": int64(i * parts), "loadedMapCacheMissCount": int64(parts),
						"stateOnCurrentVersionSizeBytes": int64(state) * 150, "numDroppedDuplicateRows": int64(rows - newKeys),
						"rocksdbGetCount": int64(rows), "rocksdbPutCount": int64(newKeys), "rocksdbSstFileSize": int64(state) * 88,
						"rocksdbTotalBytesReadThroughIterator": int64(before) * 85,
					},
				}},
				Sources: []source{{
					Description: "KafkaV2[Subscribe[events]]", StartOffset: startOffset, EndOffset: end, LatestOffset: end,
					NumInputRows: int64(rows), InputRowsPerSecond: math.Round(rows/secs*10) / 10,
					ProcessedRowsPerSecond: math.Round(rows/(float64(trigger)/1000)*10) / 10,
					Metrics:                map[string]string{"avgOffsetsBehindLatest": "0.0", "maxOffsetsBehindLatest": "0", "minOffsetsBehindLatest": "0"},
				}},
				Sink: sink{Description: "DeltaSink[s3://bucket/events]", NumOutputRows: int64(newKeys)},
			}
			recs = append(recs, g.encode(rec))
			idle = append(idle, false)
			ts = ts.Add(10 * time.Second)
			if i%9 == 8 {
				// A trigger that found no new data and ran no batch.
				it := rec
				it.Timestamp = ts.Format("2006-01-02T15:04:05.000Z")
				it.NumInputRows, it.InputRowsPerSecond, it.ProcessedRowsPerSecond = 0, 0, 0
				it.DurationMs = map[string]int64{"latestOffset": 2, "triggerExecution": 2}
				it.EventTime = map[string]string{"watermark": rec.EventTime["watermark"]}
				it.Sources = []source{{Description: "KafkaV2[Subscribe[events]]", StartOffset: end, EndOffset: end, LatestOffset: end,
					Metrics: map[string]string{}}}
				it.Sink.NumOutputRows = -1
				recs = append(recs, g.encode(it))
				idle = append(idle, true)
				ts = ts.Add(10 * time.Second)
			}
		}
	}
	var b bytes.Buffer
	switch g.form {
	case "jsonl":
		for _, r := range recs {
			b.Write(r)
			b.WriteByte('\n')
		}
	case "array":
		b.WriteString("[")
		for i, r := range recs {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.Write(r)
		}
		b.WriteString("]\n")
	case "pretty":
		for _, r := range recs {
			b.Write(r)
			b.WriteByte('\n')
		}
	default:
		t := start.Add(-3 * time.Second)
		stamp := func() string { return t.Format("06/01/02 15:04:05") }
		fmt.Fprintf(&b, "%s INFO SparkContext: Running Spark version 3.5.1\n", stamp())
		for i, r := range recs {
			t = t.Add(10 * time.Second)
			if !idle[i] {
				fmt.Fprintf(&b, "%s INFO MicroBatchExecution: Committed offsets for batch %d. Metadata OffsetSeqMetadata(0,%d,HashMap(spark.sql.shuffle.partitions -> 200))\n", stamp(), i, t.UnixMilli())
			}
			fmt.Fprintf(&b, "%s INFO MicroBatchExecution: Streaming query made progress: %s\n", stamp(), r)
			if i%50 == 49 {
				fmt.Fprintf(&b, "%s WARN ProcessingTimeExecutor: Current batch is falling behind. The trigger interval is 10000 milliseconds, but spent 10412 milliseconds\n", stamp())
			}
		}
	}
	return b.Bytes()
}

// encode renders a record compactly (JSON lines, arrays) or as Spark's
// prettyJson does (json4s' pretty printer: two-space indent, " : ").
func (g progressGen) encode(r progressRecord) []byte {
	if g.form == "jsonl" || g.form == "array" {
		out, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		return out
	}
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic(err)
	}
	return []byte(strings.ReplaceAll(string(out), "\": ", "\" : "))
}
