package export

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// record is one progress record of the prediction: a
// StreamingQueryProgress with the fields sim/spark/compare reads, in Spark's key
// order.
type record struct {
	ID             string                  `json:"id"`
	RunID          string                  `json:"runId"`
	Name           string                  `json:"name"`
	Timestamp      string                  `json:"timestamp"`
	BatchID        int64                   `json:"batchId"`
	NumInputRows   int                     `json:"numInputRows"`
	DurationMs     durations               `json:"durationMs"`
	EventTime      *metrics.EventTimeStats `json:"eventTime,omitempty"`
	StateOperators []metrics.StateOperator `json:"stateOperators"`
	Sink           metrics.SinkProgress    `json:"sink"`
}

// durations is the durationMs of a predicted record: addBatch marks an
// executed batch (sim/spark/compare ignores a record without it); dedupsim
// predicts no time.
type durations struct {
	AddBatch         int64 `json:"addBatch"`
	TriggerExecution int64 `json:"triggerExecution"`
}

// predictor runs one query of an export through the executor as job.py
// drives Spark, and writes the progress records of every batch to
// expected/<name>.jsonl, one file per checkpoint.
type predictor struct {
	q      *Query
	noData bool
	// once is set for a transformWithState query, which job.py runs one
	// Trigger.Once start per batch file: one batch each, never a no-data
	// batch (in processing time Spark would ask for one at every trigger).
	once bool
	// seed identifies the export, for the query ids.
	seed string
	// expected is the folder of the expected files, scratch the folder of
	// the checkpoints (none when restarts is false: the query then keeps
	// its state in memory only).
	expected, scratch string
	restarts          bool
	// maxBatches bounds the records of one expected file.
	maxBatches int64
	// partitions is job.py's spark.sql.shuffle.partitions: a chain's later
	// operators read their rows grouped by the earlier one's partition.
	partitions int

	gen   int
	runs  int
	name  string
	id    string
	runID string
	cp    *microbatch.Checkpoint
	query *microbatch.Query
	file  *os.File
	out   *bufio.Writer
	// Batches counts the predicted batches, no-data ones included;
	// genBatches those of the current checkpoint (its expected file).
	batches, genBatches int64
}

// start starts generation gen of the query: its expected file and, when
// the export has faults, a new checkpoint in scratch.
func (p *predictor) start(gen int) error {
	if err := p.closeFile(); err != nil {
		return err
	}
	if p.query != nil {
		if err := p.query.Close(); err != nil {
			return err
		}
		p.query = nil
	}
	p.gen, p.genBatches = gen, 0
	p.name = generationName(p.q.Name, gen)
	p.id = uuidOf(p.seed, p.name)
	f, err := os.Create(filepath.Join(p.expected, p.name+".jsonl"))
	if err != nil {
		return err
	}
	p.file, p.out = f, bufio.NewWriter(f)
	p.cp = nil
	if p.restarts {
		p.cp, err = microbatch.CreateCheckpoint(filepath.Join(p.scratch, p.name), microbatch.CheckpointMeta{Query: p.q.Text, Store: stores.Memory})
		if err != nil {
			return err
		}
	}
	return p.open()
}

// open starts the query from its checkpoint (or afresh without one): a
// new run of the query, with a new runId.
func (p *predictor) open() error {
	state := microbatch.State{}
	mem, err := stores.Lookup(stores.Memory, "")
	if err != nil {
		return err
	}
	dir := func(int) string { return "" }
	if p.cp != nil {
		rec, err := p.cp.Recover()
		if err != nil {
			return err
		}
		state = rec.State
		dir = p.cp.StateDir
	}
	open := func(op int, _ chain.Node) (engines.Store, error) { return mem.Open(dir(op), state.NextBatchID) }
	if p.query, err = microbatch.NewQuery(p.q.Plan, open, state); err != nil {
		return err
	}
	if err := p.query.SetShufflePartitions(p.partitions); err != nil {
		p.query.Close()
		return err
	}
	if p.cp != nil {
		p.query.SetCheckpoint(p.cp)
	}
	p.runs++
	p.runID = uuidOf(p.id, "run "+strconv.Itoa(p.runs))
	return nil
}

// restart stops the query and starts it again from its checkpoint.
func (p *predictor) restart() error {
	if err := p.query.Close(); err != nil {
		return err
	}
	p.query = nil
	return p.open()
}

// batch runs one data batch of rows, then the no-data batch Spark would
// run before processAllAvailable returns, and writes their records, with
// timestamp tsMs (ms since the epoch).
func (p *predictor) batch(rows microbatch.Rows, tsMs int64) error {
	pr, err := p.query.RunBatch(rows, microbatch.BatchMeta{TimestampMs: tsMs})
	if err != nil {
		return err
	}
	if err := p.write(pr, tsMs); err != nil {
		return err
	}
	for p.noData && !p.once {
		need, err := p.query.ShouldRunAnotherBatch()
		if err != nil {
			return err
		}
		if !need {
			break
		}
		if pr, err = p.query.RunNoDataBatch(microbatch.BatchMeta{TimestampMs: tsMs}); err != nil {
			return err
		}
		if err := p.write(pr, tsMs); err != nil {
			return err
		}
	}
	return nil
}

// write writes the record of one executed batch.
func (p *predictor) write(pr *microbatch.Progress, tsMs int64) error {
	r := record{
		ID: p.id, RunID: p.runID, Name: p.name, Timestamp: metrics.FormatMillis(tsMs),
		BatchID: pr.BatchID, NumInputRows: pr.NumInputRows,
		EventTime: pr.EventTime(), StateOperators: pr.StateOperators(),
		Sink: metrics.SinkProgress{NumOutputRows: pr.NumOutputRows},
	}
	line, err := json.Marshal(&r)
	if err != nil {
		return err
	}
	p.batches++
	if p.genBatches++; p.genBatches > p.maxBatches {
		return &refusal{fmt.Sprintf("not exportable: query %s: its prediction passes %s batches at %s, the most simulate compare reads from one progress file; export a shorter duration or a longer trigger",
			p.name, interval.Count(p.maxBatches), metrics.FormatMillis(tsMs))}
	}
	p.out.Write(line)
	return p.out.WriteByte('\n')
}

func (p *predictor) closeFile() error {
	if p.file == nil {
		return nil
	}
	err := p.out.Flush()
	if cerr := p.file.Close(); err == nil {
		err = cerr
	}
	p.file, p.out = nil, nil
	return err
}

// close ends the prediction: the expected file is complete.
func (p *predictor) close() error {
	err := p.closeFile()
	if p.query != nil {
		if cerr := p.query.Close(); err == nil {
			err = cerr
		}
		p.query = nil
	}
	return err
}

// uuidOf returns a UUID-shaped id (version 4 layout) derived from its
// parts: the same parts give the same id.
func uuidOf(parts ...string) string {
	h := sha256.New()
	for _, s := range parts {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	var b [16]byte
	copy(b[:], h.Sum(nil))
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// refusal is an export refused for what its input is, in one line that
// needs no context added.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }
