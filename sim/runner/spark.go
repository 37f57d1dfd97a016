package runner

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runfolder"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// A job whose scenario has a spark: block runs on the modelled cluster
// (sim/spark/sparkmodel):
//
//   - its query's state is split over the shuffle partitions
//     (microbatch.NewPartitionedQuery), in state/<op>/<partition>/ of its
//     checkpoint; the partition count is the checkpoint's once it exists,
//     as Spark keeps spark.sql.shuffle.partitions from a query's first run;
//   - a batch takes at most spark.maxRowsPerBatch rows, oldest first, the
//     rest waiting for the next batches;
//   - with a cost block, a batch lasts its modelled duration: the next
//     trigger fires at the next boundary of the trigger lattice after the
//     batch's start, or at the batch's end when it overran that boundary
//     (Spark's ProcessingTimeExecutor), and takes the rows that arrived by
//     then;
//   - every batch adds a row to spark.csv and the summary gains the spark
//     fields (metrics.SparkSummary).
//
// Without a spark: block none of this happens, and every result is what
// it was.

// sparkRun is a job's cluster model; nil without a spark: block.
type sparkRun struct {
	cfg     *sparkmodel.Config
	tracker *sparkmodel.Tracker
	part    *partWriter
	// restored is the part mark of the job snapshot resumed from.
	restored partMark
	stats    []*microbatch.PartitionStats
	row      []string
	buf      bytes.Buffer
	cw       *csv.Writer
	// ranAt is the trigger of the last batch, end its end (µs).
	ranAt, end int64
	ran        bool
	// limit is the most rows a batch may hold while more are due; 0
	// stands for scenario.MaxRowsPerBatch (see the MaxBatchRows test hook).
	limit int
}

// ErrBatchLimit is the error (errors.Is) of a run in which a batch on the
// modelled cluster reached scenario.MaxRowsPerBatch rows while more were
// due: its query fell so far behind that its batches grow without bound.
// A search over rates (sim/plan) reads it as falling behind.
var ErrBatchLimit = errors.New("the query fell so far behind that its batches grow without bound")

// newSparkRun returns the cluster model of a job, or nil when the
// scenario has no spark: block.
func newSparkRun(env job) *sparkRun {
	sc := env.sc
	if sc.Spark == nil {
		return nil
	}
	ids := sc.Workload.IDs.Kind()
	var shapes []sparkmodel.Shape
	for _, n := range env.Plan.Nodes {
		if n.IsDedup() {
			shapes = append(shapes, sparkmodel.ShapeOf(n.KeyColumns, ids))
		}
	}
	start := sc.Start.UnixMicro()
	s := &sparkRun{
		cfg:     sc.Spark,
		limit:   env.maxBatchRows,
		tracker: sparkmodel.NewTracker(*sc.Spark, shapes, start, sc.Trigger.Micros(), start, sc.End().UnixMicro()),
	}
	s.cw = csv.NewWriter(&s.buf)
	return s
}

// partitions returns the partition count a new checkpoint of the job's
// query gets: the spark: block's, or 0 (one store per operator) without
// one.
func (c *checkpointer) partitions() int {
	if c.env.sc == nil || c.env.sc.Spark == nil {
		return 0
	}
	return int(c.env.sc.Spark.Partitions)
}

// newQuery opens the job's query from cp ("" keeps no checkpoint when cp
// is nil) over partitions shuffle partitions (0: one store per operator),
// its stores opened by open at state's version.
func (c *checkpointer) newQuery(cp *microbatch.Checkpoint, partitions int, open StoreOpener, state microbatch.State) (*microbatch.Query, error) {
	if partitions == 0 {
		stores := func(op int, n chain.Node) (engines.Store, error) {
			if cp == nil {
				if s := c.numberedStore(n); s != nil {
					return s, nil
				}
				return open("", op, 0)
			}
			return open(cp.StateDir(op), op, state.NextBatchID)
		}
		q, err := microbatch.NewQuery(c.job.Plan, stores, state)
		if err != nil {
			return nil, err
		}
		// Spark's default partitions still order a chain's rows between
		// its dedup operators (microbatch.Query.SetShufflePartitions).
		if err := q.SetShufflePartitions(microbatch.DefaultShufflePartitions); err != nil {
			q.Close()
			return nil, err
		}
		return q, nil
	}
	stores := func(op, part int, n chain.Node) (engines.Store, error) {
		if cp == nil {
			if s := c.numberedStore(n); s != nil {
				return s, nil
			}
			return open("", op, 0)
		}
		return open(cp.PartitionDir(op, part), op, state.NextBatchID)
	}
	q, err := microbatch.NewPartitionedQuery(c.job.Plan, partitions, stores, state)
	if err != nil {
		return nil, err
	}
	q.SetPool(c.env.pool)
	return q, nil
}

// numberedStore returns the store of dedup operator n when its keys can be
// held as numbers (memstore.Numbered), or nil: in a job without a
// checkpoint on the memory backend (jobEnv.numbering), a dropDuplicates
// that never evicts whose keys the generator numbers (event_id alone).
// Its counters are the hash table's exactly; only the simulator's own
// memory differs (a bit a key instead of 60 to 70 bytes).
func (c *checkpointer) numberedStore(n chain.Node) engines.Store {
	if c.env.numbering == nil || n.Op.Kind != chain.DropDuplicates || n.EventTimeInKeys && n.WatermarkReaches {
		return nil
	}
	number := c.env.numbering(n.KeyColumns)
	if number == nil {
		return nil
	}
	return memstore.NewNumbered(number)
}

// keepPartitions returns the partition count of an existing checkpoint,
// saying once per job, through the run's notices, when it is not the
// scenario's: Spark keeps the count a checkpoint was made with.
func (c *checkpointer) keepPartitions(meta microbatch.CheckpointMeta) int {
	if want := c.partitions(); meta.Partitions != want && !c.noticed && c.env.notify != nil {
		c.noticed = true
		c.env.notify(fmt.Sprintf("query %s: its checkpoint keeps %d shuffle partitions, not the %d of spark.partitions: as Spark does, a query keeps the partitions of its first run; a new checkpoint (after a lost one) takes spark.partitions",
			c.job.FileName, meta.Partitions, want))
	}
	return meta.Partitions
}

// fingerprintView returns the scenario as a run checkpoint's fingerprint
// sees it: without spark.partitions, which a resumed run may change,
// since each query's checkpoint keeps the count it was made with
// (keepPartitions), as Spark does; and without the queries' own stores,
// which the fingerprint's store input holds as the jobs run on them
// (runStores), so that a query's store written out or left to the
// scenario's is the same run.
func fingerprintView(s *scenario.Scenario) *scenario.Scenario {
	c := *s
	if s.Spark != nil {
		spark := *s.Spark
		spark.Partitions = 0
		c.Spark = &spark
	}
	if slices.ContainsFunc(s.Queries, func(q scenario.Query) bool { return q.Store != "" }) {
		c.Queries = slices.Clone(s.Queries)
		for i := range c.Queries {
			c.Queries[i].Store = ""
		}
	}
	return &c
}

// maxRows returns the most rows a batch takes: spark.maxRowsPerBatch, or
// 0 for no limit.
func (s *sparkRun) maxRows() int {
	if s == nil {
		return 0
	}
	return int(s.cfg.MaxRowsPerBatch)
}

// batchLimit returns an error when a batch of a job on the modelled
// cluster reaches scenario.MaxRowsPerBatch rows while more are due: its
// query has fallen so far behind that its batches grow without bound.
func (s *sparkRun) batchLimit(rows int, more bool, t int64) error {
	if s == nil {
		return nil
	}
	limit := cmp.Or(s.limit, scenario.MaxRowsPerBatch)
	if !more || rows < limit {
		return nil
	}
	return fmt.Errorf("spark: the batch at %s would hold more than %d rows, the limit: %w; set spark.maxRowsPerBatch to take the backlog in several batches",
		metrics.FormatMillis(t/1000), limit, ErrBatchLimit)
}

// nextTrigger returns when the job's next trigger fires: one interval
// later without a spark: block; with one, at the next boundary after this
// trigger, or when the batch that ran at it ended, if later.
func (r *jobRun) nextTrigger(c *clock) int64 {
	s := r.spark
	if s == nil {
		return r.t + c.trigger
	}
	end := r.t
	if s.ran && s.ranAt == r.t {
		end = s.end
	}
	return s.tracker.NextTrigger(r.t, end)
}

// opened tells the model that the job's query was opened: fresh for a new
// checkpoint, else its own after a restart.
func (s *sparkRun) opened(q *microbatch.Query, fresh bool) {
	if s != nil {
		s.tracker.Open(q.Partitions(), fresh)
	}
}

// resumed checks that the model restored from a job snapshot follows as
// many partitions as the query reopened from its checkpoint.
func (s *sparkRun) resumed(q *microbatch.Query) error {
	if s == nil {
		return nil
	}
	if got, want := s.tracker.Partitions(), q.Partitions(); got != want {
		return fmt.Errorf("the job snapshot's spark model follows %d partitions, the query's checkpoint has %d", got, want)
	}
	return nil
}

// openPart opens the job's spark.csv part file beside its other parts.
func (s *sparkRun) openPart(env job) error {
	if s == nil {
		return nil
	}
	path := filepath.Join(env.partsDir, fmt.Sprintf("%d.%s", env.Index, runfolder.SparkPart))
	if env.resumable {
		path = filepath.Join(env.jobDir, runfolder.SparkPart)
	}
	p, err := openPart(path, s.restored.Len, env.resumable, s.restored.State)
	if err != nil {
		return err
	}
	s.part = p
	return nil
}

// batch models the batch that ran at trigger t and writes its spark.csv
// row.
func (s *sparkRun) batch(r *jobRun, p *microbatch.Progress, b *generators.Batch, t int64) error {
	s.stats = s.stats[:0]
	for k := range p.Operators {
		s.stats = append(s.stats, r.q.PartitionStats(k))
	}
	in := sparkmodel.Batch{Start: t, Version: p.BatchID, Stats: s.stats}
	if p.NumInputRows > 0 {
		in.Oldest, in.HasRows = b.Rows[0].Arrival, true
	}
	res := s.tracker.Batch(in)
	s.ranAt, s.end, s.ran = t, res.End, true
	_, hasCost := s.cfg.Costs()
	rec := metrics.SparkRecord{
		Query: r.env.Name, Delay: r.env.Delay, BatchID: p.BatchID, Start: t, End: res.End,
		DurationMs: float64(res.Duration) / 1e3, HasDuration: hasCost, InputRows: int64(p.NumInputRows),
		MaxPartitionRows: res.MaxPartitionRows, MeanPartitionRows: res.MeanPartitionRows,
		ProcessingLagSeconds: float64(res.Lag) / 1e6, HasLag: res.HasLag,
		ExecutorMemoryBytes: res.Memory, ExecutorDiskBytes: res.Disk,
	}
	s.row = rec.Record(s.row)
	s.buf.Reset()
	if err := s.cw.Write(s.row); err != nil {
		return err
	}
	s.cw.Flush()
	_, err := s.part.Write(s.buf.Bytes())
	return err
}

// snapshotState returns the model's state and part mark for a job
// snapshot; nil without a spark: block.
func (s *sparkRun) snapshotState() (json.RawMessage, *partMark, error) {
	if s == nil {
		return nil, nil, nil
	}
	if err := s.part.flush(); err != nil {
		return nil, nil, err
	}
	st, err := s.tracker.State()
	if err != nil {
		return nil, nil, err
	}
	m, err := s.part.mark()
	if err != nil {
		return nil, nil, err
	}
	return st, &m, nil
}

// restore sets the model's state from a job snapshot.
func (s *sparkRun) restore(path string, state json.RawMessage, mark *partMark) error {
	if s == nil {
		return nil
	}
	if state == nil || mark == nil {
		return fmt.Errorf("%s: no spark model state, though the scenario has a spark: block", path)
	}
	if err := s.tracker.Restore(state); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	s.restored = *mark
	return nil
}

// finish fills the summary's spark fields and returns the part file's
// segment and mark.
func (s *sparkRun) finish(sum *metrics.QuerySummary) (*segment, *partMark, error) {
	if s == nil {
		return nil, nil, nil
	}
	sum.SparkSummary = s.tracker.Summary()
	if err := s.part.flush(); err != nil {
		return nil, nil, err
	}
	m, err := s.part.mark()
	if err != nil {
		return nil, nil, err
	}
	return &segment{path: s.part.path, n: s.part.n}, &m, nil
}

func (s *sparkRun) close() {
	if s != nil && s.part != nil {
		s.part.close()
	}
}

// checkSparkPart checks a job's spark.csv part file against its mark, as
// checkParts checks the others; a job without one has none to check.
func checkSparkPart(dir string, mark *partMark, exact bool) error {
	if mark == nil {
		return nil
	}
	p := filepath.Join(dir, runfolder.SparkPart)
	sum, err := hashPrefix(p, mark.Len, exact)
	if err != nil {
		return err
	}
	if sum != mark.SHA256 {
		return fmt.Errorf("%s: checksum mismatch: its first %d bytes changed after the job wrote them", p, mark.Len)
	}
	return nil
}

// hasSpark reports whether every job wrote spark.csv rows: the run had a
// spark: block.
func (r *Results) hasSpark() bool {
	if len(r.sparkParts) == 0 || len(r.sparkParts) != len(r.parts) {
		return false
	}
	for _, s := range r.sparkParts {
		if s == nil {
			return false
		}
	}
	return true
}

// writeSpark writes spark.csv: the header, then every job's rows in job
// order, copied from the part files.
func (r *Results) writeSpark(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(metrics.SparkHeader); err != nil {
		return err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	for _, s := range r.sparkParts {
		if err := copySegment(w, *s); err != nil {
			return err
		}
	}
	return nil
}

// SparkRows returns every spark.csv row, in memory, in the order of the
// file: for tests and small runs. It returns nil without a spark: block.
func (r *Results) SparkRows() ([]metrics.SparkRow, error) {
	if !r.hasSpark() {
		return nil, nil
	}
	var out []metrics.SparkRow
	for _, s := range r.sparkParts {
		rc, err := segmentReader(*s)
		if err != nil {
			return nil, err
		}
		cr := csv.NewReader(rc)
		cr.FieldsPerRecord = len(metrics.SparkHeader)
		recs, err := cr.ReadAll()
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		for i, f := range recs {
			row, err := metrics.ParseSparkRow(f)
			if err != nil {
				return nil, fmt.Errorf("%s: row %d: %w", s.path, i+1, err)
			}
			out = append(out, row)
		}
	}
	return out, nil
}
