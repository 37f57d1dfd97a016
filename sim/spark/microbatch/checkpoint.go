package microbatch

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

// A checkpoint folder is laid out like Spark's, except that the offsets
// and commits logs are one append-only file:
//
//	metadata            {"format": "dedupsim-checkpoint/2", "query": ..., "store": ...,
//	                    "partitions": ... (only when the state is partitioned)}
//	log                 the batch log (see checkpoint_log.go): an offsets
//	                    record appended before a batch runs (the watermark it
//	                    runs with and the source position it reads) and a
//	                    commit record after its state is committed (the
//	                    watermark of the next batch)
//	state/<operator>/   the state store files of each dedup operator, or, for
//	                    a partitioned query, state/<operator>/<partition>/
//	                    for each shuffle partition, as in Spark
//
// Spark writes offsets/<batchId> and commits/<batchId>, a file per batch;
// creating two files a batch was most of what checkpointing a memory run
// cost (BENCHMARKS.md), so dedupsim appends framed records to one file
// instead. The metadata, written once, is synced; the log is not at every
// batch (Sync syncs it, before a job snapshot names its records): a power
// loss may lose the last records, as it may Spark's last files, and a
// record torn by a kill or a crash fails its length or checksum and is
// read as never written. The log is rewritten (to a temporary name, then
// renamed) only to drop the records retention no longer keeps.
const checkpointFormat = "dedupsim-checkpoint/2"

// checkpointFormatV1 is the layout with offsets/<batchId> and
// commits/<batchId> files, which this version no longer reads.
const checkpointFormatV1 = "dedupsim-checkpoint/1"

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

// OffsetEntry is one offsets record of the log (Spark's offsets/<batchId>).
type OffsetEntry struct {
	BatchWatermarkMs int64 `json:"batchWatermarkMs"`
	BatchTimestampMs int64 `json:"batchTimestampMs"`
	NoData           bool  `json:"noData,omitempty"`
	// Source is the source position the batch reads, opaque to the query.
	Source json.RawMessage `json:"source,omitempty"`
}

// CommitEntry is one commit record of the log (Spark's commits/<batchId>).
type CommitEntry struct {
	NextBatchWatermarkMs int64 `json:"nextBatchWatermarkMs"`
}

// Checkpoint is a query's checkpoint folder.
type Checkpoint struct {
	dir string
	// retainFrom is the oldest batch whose log records must survive
	// retention (Retain), -1 for none.
	retainFrom int64
	// log is the batch log as on disk, loaded at the first write.
	log *batchLog
}

// CreateCheckpoint creates a new checkpoint in dir, which must not exist or
// be empty.
func CreateCheckpoint(dir string, meta CheckpointMeta) (*Checkpoint, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("checkpoint %s: folder is not empty; refusing to overwrite it", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o777); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	// The log first, synced like the metadata: a checkpoint whose
	// metadata is on disk has its log.
	if err := fileio.WriteFile(filepath.Join(dir, logName), []byte(logMagic)); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	meta.Format = checkpointFormat
	data, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{dir: dir, retainFrom: -1}
	if err := fileio.WriteFile(filepath.Join(dir, "metadata"), append(data, '\n')); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return c, nil
}

// OpenCheckpoint opens an existing checkpoint and returns its metadata.
// A checkpoint of the earlier layout (a file per batch) is refused with
// one line saying so.
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
	err = dec.Decode(&meta)
	if err == nil && meta.Format == checkpointFormatV1 {
		return nil, meta, fmt.Errorf("checkpoint %s: %s: format %q keeps a file per batch (offsets/, commits/); this version writes one log (format %q) and does not read the old layout: resume it with the dedupsim that made it, or use a new folder: %w",
			dir, path, checkpointFormatV1, checkpointFormat, ErrNotCheckpoint)
	}
	if err != nil || meta.Format != checkpointFormat {
		return nil, meta, fmt.Errorf("checkpoint %s: %s: want a dedupsim metadata file (format %q): %w", dir, path, checkpointFormat, ErrNotCheckpoint)
	}
	return &Checkpoint{dir: dir, retainFrom: -1}, meta, nil
}

// Dir returns the checkpoint folder.
func (c *Checkpoint) Dir() string { return c.dir }

// StateDir returns the state folder of dedup operator op.
func (c *Checkpoint) StateDir(op int) string {
	return filepath.Join(c.dir, "state", strconv.Itoa(op))
}

// WriteOffsets records that batch batchID is about to run.
func (c *Checkpoint) WriteOffsets(batchID int64, e OffsetEntry) error {
	return c.writeEntry(kindOffsets, batchID, e)
}

// MinBatchesToRetain is how many batches' offsets and commits records a
// checkpoint keeps at least, as Spark's spark.sql.streaming.minBatchesToRetain
// (default 100): a restart reads only the last ones, and a long run's
// checkpoint stays bounded. The log is compacted when as many again are
// due to go, so it holds at most twice as many, and those Retain holds.
const MinBatchesToRetain = 100

// Retain makes retention keep the log records of batchID and every later
// batch, whatever MinBatchesToRetain says; a negative batchID lifts the
// hold. A resumable run (sim/runner) holds the records its newest job
// snapshot resumes from: a fast query runs more than MinBatchesToRetain
// batches between two snapshots, and a kill in between must still find
// them. Records older than batchID may go at any later commit.
func (c *Checkpoint) Retain(batchID int64) { c.retainFrom = max(batchID, -1) }

// WriteCommit records that batch batchID completed, then drops the log
// records of the batches that fall out of the last MinBatchesToRetain, as
// Spark's MicroBatchExecution does after each commit, except those Retain
// holds; it drops them by rewriting the log once MinBatchesToRetain
// batches are due to go.
func (c *Checkpoint) WriteCommit(batchID int64, e CommitEntry) error {
	if err := c.writeEntry(kindCommit, batchID, e); err != nil {
		return err
	}
	return c.purge(batchID - MinBatchesToRetain)
}

// purge drops the records of every batch up to last that Retain does not
// hold, once there are MinBatchesToRetain such batches.
func (c *Checkpoint) purge(last int64) error {
	if c.retainFrom >= 0 {
		last = min(last, c.retainFrom-1)
	}
	if last < 0 || c.log.oldest < 0 || last-c.log.oldest+1 < MinBatchesToRetain {
		return nil
	}
	if err := c.log.rewrite(func(r logRecord) bool { return r.batch > last }); err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	return nil
}

// Close closes the log file the checkpoint appends to; a later write
// opens it again.
func (c *Checkpoint) Close() error {
	if c.log == nil {
		return nil
	}
	if err := c.log.close(); err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	return nil
}

// Sync makes the log records written so far durable: a job snapshot that
// names them is written after.
func (c *Checkpoint) Sync() error {
	if c.log == nil {
		// Nothing appended by this Checkpoint: an earlier one (closed by
		// a restart) wrote what is there.
		var err error
		if c.log, err = loadLog(c.dir); err != nil {
			return fmt.Errorf("checkpoint %s: %w", c.dir, err)
		}
	}
	if err := c.log.sync(); err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	return nil
}

// LogBatches returns the batch ids of the log's offsets and commit
// records, in order.
func (c *Checkpoint) LogBatches() (offsets, commits []int64, err error) {
	recs, err := c.records()
	if err != nil {
		return nil, nil, err
	}
	for _, r := range recs {
		if r.kind == kindOffsets {
			offsets = append(offsets, r.batch)
		} else {
			commits = append(commits, r.batch)
		}
	}
	return dedupSorted(offsets), dedupSorted(commits), nil
}

func dedupSorted(ids []int64) []int64 {
	slices.Sort(ids)
	return slices.Compact(ids)
}

func (c *Checkpoint) writeEntry(kind byte, batchID int64, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if c.log == nil {
		if c.log, err = loadLog(c.dir); err != nil {
			return fmt.Errorf("checkpoint %s: %w", c.dir, err)
		}
	}
	if err := c.log.append(kind, batchID, data); err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	return nil
}

// records returns the log's records as on disk, without changing it.
func (c *Checkpoint) records() ([]logRecord, error) {
	if c.log != nil {
		return c.log.recs, nil
	}
	l, err := loadLog(c.dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	return l.recs, nil
}

// latestEntries returns, for each kind, the newest record of each batch
// and the last batch with a record (-1 for none).
func latestEntries(recs []logRecord) (last [2]int64, at [2]map[int64]logRecord) {
	last = [2]int64{-1, -1}
	for k := range at {
		at[k] = map[int64]logRecord{}
	}
	for _, r := range recs {
		k := kindIndex(r.kind)
		at[k][r.batch] = r
		last[k] = max(last[k], r.batch)
	}
	return last, at
}

func (c *Checkpoint) decode(r logRecord, v any) error {
	dec := json.NewDecoder(bytes.NewReader(r.payload()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("checkpoint %s: %s: %s record of batch %d: %v: %w", c.dir, filepath.Join(c.dir, logName), kindName(r.kind), r.batch, err, ErrNotCheckpoint)
	}
	return nil
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
	recs, err := c.records()
	if err != nil {
		return r, err
	}
	last, at := latestEntries(recs)
	lastO, lastC := last[0], last[1]
	if lastC >= 0 {
		var ce CommitEntry
		if err := c.decode(at[1][lastC], &ce); err != nil {
			return r, err
		}
		or, ok := at[0][lastC]
		if !ok {
			return r, fmt.Errorf("checkpoint %s: %s: a commit of batch %d without its offsets record: %w", c.dir, filepath.Join(c.dir, logName), lastC, ErrNotCheckpoint)
		}
		var oe OffsetEntry
		if err := c.decode(or, &oe); err != nil {
			return r, err
		}
		r.LastCommitted = lastC
		r.Offsets = &oe
		r.State = State{NextBatchID: lastC + 1, Watermark: max(ce.NextBatchWatermarkMs, oe.BatchWatermarkMs), LastBatchWatermark: oe.BatchWatermarkMs, Restarted: true}
	}
	if lastO >= 0 && lastO > lastC {
		if lastO != r.LastCommitted+1 {
			return r, fmt.Errorf("checkpoint %s: %s: the offsets of batch %d, with no commit of batch %d: %w", c.dir, filepath.Join(c.dir, logName), lastO, r.LastCommitted+1, ErrNotCheckpoint)
		}
		var oe OffsetEntry
		if err := c.decode(at[0][lastO], &oe); err != nil {
			return r, err
		}
		r.Pending = &oe
	}
	return r, nil
}
