package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// A checkpoint folder is laid out like Spark's:
//
//	metadata            {"format": "dedupsim-checkpoint/1", "query": ..., "store": ...,
//	                    "partitions": ... (only when the state is partitioned)}
//	offsets/<batchId>   written before a batch runs: the watermark it runs with
//	                    and the source position it reads
//	commits/<batchId>   written after the batch's state is committed: the
//	                    watermark of the next batch
//	state/<operator>/   the state store files of each dedup operator, or, for
//	                    a partitioned query, state/<operator>/<partition>/
//	                    for each shuffle partition, as in Spark
//
// Files are written through engines/fileio: to a temporary name, then
// renamed, so a killed process leaves either the old file or the new one,
// never a torn one (and at most a temporary ".<name>.tmp-*" beside it,
// which readers skip). The metadata, written once, is synced; the log
// entries, written at every batch, are not (fileio.WriteFileNoSync): a
// power loss may lose the last entries, as it may Spark's.
const checkpointFormat = "dedupsim-checkpoint/1"

// ErrNotCheckpoint is returned for a folder that is not a dedupsim checkpoint.
var ErrNotCheckpoint = errors.New("not a dedupsim checkpoint")

// CheckpointMeta is the checkpoint's metadata file.
type CheckpointMeta struct {
	Format string `json:"format"`
	// Query is the query text the checkpoint belongs to.
	Query string `json:"query"`
	// Store is the state store backend ("memory" or "pebble").
	Store string `json:"store"`
	// Partitions is the number of shuffle partitions each dedup
	// operator's state is split over (state/<op>/<partition>/), fixed
	// when the checkpoint is created, as Spark fixes
	// spark.sql.shuffle.partitions at a query's first run; 0 (absent)
	// for one store per operator (state/<op>/).
	Partitions int `json:"partitions,omitempty"`
}

// OffsetEntry is one offsets/<batchId> file.
type OffsetEntry struct {
	BatchWatermarkMs int64 `json:"batchWatermarkMs"`
	BatchTimestampMs int64 `json:"batchTimestampMs"`
	NoData           bool  `json:"noData,omitempty"`
	// Source is the source position the batch reads, opaque to the query.
	Source json.RawMessage `json:"source,omitempty"`
}

// CommitEntry is one commits/<batchId> file.
type CommitEntry struct {
	NextBatchWatermarkMs int64 `json:"nextBatchWatermarkMs"`
}

// Checkpoint is a query's checkpoint folder.
type Checkpoint struct {
	dir string
	// retainFrom is the oldest batch whose log entries must survive
	// retention (Retain), -1 for none; purgeFrom the oldest batch whose
	// entries may still be on disk, -1 until a purge first looks.
	retainFrom, purgeFrom int64
}

// CreateCheckpoint creates a new checkpoint in dir, which must not exist or
// be empty.
func CreateCheckpoint(dir string, meta CheckpointMeta) (*Checkpoint, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("checkpoint %s: folder is not empty; refusing to overwrite it", dir)
	}
	for _, sub := range []string{"offsets", "commits", "state"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o777); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
		}
	}
	meta.Format = checkpointFormat
	data, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{dir: dir, retainFrom: -1, purgeFrom: -1}
	if err := fileio.WriteFile(filepath.Join(dir, "metadata"), append(data, '\n')); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return c, nil
}

// OpenCheckpoint opens an existing checkpoint and returns its metadata.
func OpenCheckpoint(dir string) (*Checkpoint, CheckpointMeta, error) {
	var meta CheckpointMeta
	path := filepath.Join(dir, "metadata")
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, meta, fmt.Errorf("checkpoint %s: no metadata file: %w", dir, ErrNotCheckpoint)
		}
		return nil, meta, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&meta); err != nil || meta.Format != checkpointFormat {
		return nil, meta, fmt.Errorf("checkpoint %s: %s: want a dedupsim metadata file (format %q): %w", dir, path, checkpointFormat, ErrNotCheckpoint)
	}
	return &Checkpoint{dir: dir, retainFrom: -1, purgeFrom: -1}, meta, nil
}

// Dir returns the checkpoint folder.
func (c *Checkpoint) Dir() string { return c.dir }

// StateDir returns the state folder of dedup operator op.
func (c *Checkpoint) StateDir(op int) string {
	return filepath.Join(c.dir, "state", strconv.Itoa(op))
}

// WriteOffsets records that batch batchID is about to run.
func (c *Checkpoint) WriteOffsets(batchID int64, e OffsetEntry) error {
	return c.writeEntry("offsets", batchID, e)
}

// MinBatchesToRetain is how many batches' offsets and commits entries a
// checkpoint keeps, as Spark's spark.sql.streaming.minBatchesToRetain
// (default 100): a restart reads only the last ones, and a long run's
// checkpoint stays bounded.
const MinBatchesToRetain = 100

// Retain makes retention keep the log entries of batchID and every later
// batch, whatever MinBatchesToRetain says; a negative batchID lifts the
// hold. A resumable run (sim/runner) holds the entries its newest job
// snapshot resumes from: a fast query runs more than MinBatchesToRetain
// batches between two snapshots, and a kill in between must still find
// them. Entries older than batchID are purged at the next commit.
func (c *Checkpoint) Retain(batchID int64) { c.retainFrom = max(batchID, -1) }

// WriteCommit records that batch batchID completed, then purges the log
// entries of the batches that fall out of the last MinBatchesToRetain, as
// Spark's MicroBatchExecution does after each commit, except those Retain
// holds.
func (c *Checkpoint) WriteCommit(batchID int64, e CommitEntry) error {
	if err := c.writeEntry("commits", batchID, e); err != nil {
		return err
	}
	return c.purge(batchID - MinBatchesToRetain)
}

// purge removes the offsets and commits entries of every batch up to
// last that Retain does not hold.
func (c *Checkpoint) purge(last int64) error {
	if c.retainFrom >= 0 {
		last = min(last, c.retainFrom-1)
	}
	if last < 0 || last < c.purgeFrom {
		return nil
	}
	if c.purgeFrom < 0 {
		// The oldest entry on disk: a reopened checkpoint may hold
		// entries an earlier hold kept.
		oldest, err := c.oldest()
		if err != nil {
			return err
		}
		c.purgeFrom = oldest
	}
	for ; c.purgeFrom <= last; c.purgeFrom++ {
		for _, kind := range []string{"offsets", "commits"} {
			err := os.Remove(filepath.Join(c.dir, kind, strconv.FormatInt(c.purgeFrom, 10)))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("checkpoint %s: %w", c.dir, err)
			}
		}
	}
	return nil
}

// oldest returns the oldest batch id with an offsets or commits entry,
// or 0 when there is none.
func (c *Checkpoint) oldest() (int64, error) {
	first := int64(-1)
	for _, kind := range []string{"offsets", "commits"} {
		ids, err := c.ids(kind)
		if err != nil {
			return 0, err
		}
		if len(ids) > 0 && (first < 0 || ids[0] < first) {
			first = ids[0]
		}
	}
	return max(first, 0), nil
}

func (c *Checkpoint) writeEntry(kind string, batchID int64, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	// "v1" first, as Spark's offset and commit logs do.
	buf := append([]byte("v1\n"), data...)
	buf = append(buf, '\n')
	if err := fileio.WriteFileNoSync(filepath.Join(c.dir, kind, strconv.FormatInt(batchID, 10)), buf); err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	return nil
}

func (c *Checkpoint) readEntry(kind string, batchID int64, v any) error {
	path := filepath.Join(c.dir, kind, strconv.FormatInt(batchID, 10))
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	body, ok := bytes.CutPrefix(data, []byte("v1\n"))
	if !ok {
		return fmt.Errorf("checkpoint %s: %s: want a \"v1\" log entry: %w", c.dir, path, ErrNotCheckpoint)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("checkpoint %s: %s: %v: %w", c.dir, path, err, ErrNotCheckpoint)
	}
	return nil
}

func (c *Checkpoint) latest(kind string) (int64, bool, error) {
	ids, err := c.ids(kind)
	if err != nil || len(ids) == 0 {
		return 0, false, err
	}
	return ids[len(ids)-1], true, nil
}

// ids returns the batch ids of the kind's log entries, in order.
func (c *Checkpoint) ids(kind string) ([]int64, error) {
	ents, err := os.ReadDir(filepath.Join(c.dir, kind))
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	var ids []int64
	for _, e := range ents {
		if fileio.IsCheckpointTemp(e.Name()) {
			continue
		}
		id, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %s/%s: not a batch log entry: %w", c.dir, kind, e.Name(), ErrNotCheckpoint)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// Recovered is what a restart reads from a checkpoint.
type Recovered struct {
	// State is the query state after the last committed batch.
	State State
	// LastCommitted is the last committed batch id, -1 if none.
	LastCommitted int64
	// Pending is set when a batch was started (offsets written) but not
	// committed: it must run again, reading the same source position.
	Pending *OffsetEntry
	// Offsets is the offset entry of the last committed batch, if any.
	Offsets *OffsetEntry
}

// Recover reads the state a restarted query resumes from, the way Spark's
// MicroBatchExecution.populateStartOffsets does: the batch id after the
// last commit, the watermark recorded by that commit (nextBatchWatermarkMs)
// and, for the late filter, the watermark that batch ran with. A query
// recovered from committed batches is Restarted: it has no last execution
// to ask for a no-data batch.
func (c *Checkpoint) Recover() (Recovered, error) {
	r := Recovered{LastCommitted: -1}
	lastC, okC, err := c.latest("commits")
	if err != nil {
		return r, err
	}
	lastO, okO, err := c.latest("offsets")
	if err != nil {
		return r, err
	}
	if okC {
		var ce CommitEntry
		if err := c.readEntry("commits", lastC, &ce); err != nil {
			return r, err
		}
		var oe OffsetEntry
		if err := c.readEntry("offsets", lastC, &oe); err != nil {
			return r, err
		}
		r.LastCommitted = lastC
		r.Offsets = &oe
		r.State = State{NextBatchID: lastC + 1, Watermark: max(ce.NextBatchWatermarkMs, oe.BatchWatermarkMs), LastBatchWatermark: oe.BatchWatermarkMs, Restarted: true}
	}
	if okO && (!okC || lastO > lastC) {
		if lastO != r.LastCommitted+1 {
			return r, fmt.Errorf("checkpoint %s: offsets/%d has no commit for batch %d: %w", c.dir, lastO, r.LastCommitted+1, ErrNotCheckpoint)
		}
		var oe OffsetEntry
		if err := c.readEntry("offsets", lastO, &oe); err != nil {
			return r, err
		}
		r.Pending = &oe
	}
	return r, nil
}
