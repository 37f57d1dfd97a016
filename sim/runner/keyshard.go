package runner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// KeyShard is part K of N of a run split by key (Options.KeyShard): every
// job of the part reads the whole stream, so batches, watermarks,
// no-data batches and samples are the unsplit run's, but keeps state and
// counts rows only for the events whose event_id hashes to K
// (ShardOfEventID). Every copy of a logical event has its event_id, and
// every query of a run that splits keys on it, so each row's verdict
// depends only on rows of its own part, each row is decided and counted
// by exactly one part, and the N parts' counters add up to the unsplit
// run's (sim/shard merges them).
type KeyShard struct {
	K, N int
}

// ShardOfEventID returns the part, from 0 to n-1, of the row r whose
// event_id is of kind ids: a stable hash of the event_id's value (its
// UUID text, or its integer) through SplitMix64's finalizer, the same on
// every machine. Parts of binaries that hash otherwise are not merged:
// the merge requires one binary (shard.Version).
func ShardOfEventID(r *generators.Row, ids generators.IDKind, n int) int {
	var h uint64
	if ids == generators.UUIDIDs {
		// The 36 bytes of text as four 64-bit words and one 32-bit word,
		// each folded in with a multiply (MurmurHash3's constant) and a
		// shift: a few nanoseconds a row, which every job of every part
		// pays on every row of the stream.
		b := r.EventID[:]
		h = 0x9e3779b97f4a7c15
		for i := 0; i < 32; i += 8 {
			h = (h ^ binary.LittleEndian.Uint64(b[i:])) * 0xff51afd7ed558ccd
			h ^= h >> 32
		}
		h ^= uint64(binary.LittleEndian.Uint32(b[32:]))
	} else {
		h = uint64(r.EventNum)
	}
	// SplitMix64's finalizer spreads consecutive integers over the parts.
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return int(h % uint64(n))
}

// owns reports whether the row r is of this part.
func (k *KeyShard) owns(r *generators.Row, ids generators.IDKind) bool {
	return ShardOfEventID(r, ids, k.N) == k.K
}

// owned appends to dst the numbers of the rows of b that are of this part.
func (k *KeyShard) owned(b *generators.Batch, dst []int32) []int32 {
	for i := range b.Rows {
		if k.owns(&b.Rows[i], b.IDs) {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

// CheckKeyShard returns why the run of s cannot split by key, in one line,
// or nil when every job can: a spark: block (its cluster model's batch
// durations, which decide when the next batch starts, and its executor
// memory depend on every key's rows), or a query whose verdicts on one
// event's rows depend on rows of other events (checkSplit).
func CheckKeyShard(s *scenario.Scenario) error {
	if s.Spark != nil {
		return fmt.Errorf("--shard: scenario %s has a spark: block, which cannot split by key: the cluster model's batch durations (which decide when the next batch starts) and executor memory depend on every key's rows; run it whole", s.File)
	}
	jobs, err := Jobs(s)
	if err != nil {
		return fmt.Errorf("scenario %s: %w", s.File, err)
	}
	for _, j := range jobs {
		if err := checkSplit(j); err != nil {
			return fmt.Errorf("--shard: query %s cannot split by key: %v; run it whole, or leave it out", j.FileName, err)
		}
	}
	return nil
}

// checkSplit returns why job j's verdicts are not decided by the rows of
// one event_id alone, or nil:
//
//   - a Spark query: every dedup keys on event_id (so two rows that meet
//     in state share their event_id) and every withWatermark comes before
//     the first dedup (so the watermark, computed from every row, does not
//     depend on any verdict);
//   - Flink: never; its verdicts and logical state would split, but the
//     heap backend's incremental cleanup and table sizing, which its
//     physical state and bytes model, run over every key's entries;
//   - Kafka Streams and Beam: always (their key is event_id); the rows of
//     other parts' keys move the clocks every key's verdicts depend on, a
//     task's stream time (and its window store's expiry), Beam's
//     watermark and processing time, without being processed
//     (observingOperator).
func checkSplit(j Job) error {
	if j.Rows == nil {
		seenDedup := false
		for _, n := range j.Plan.Nodes {
			if n.Op.Kind == chain.WithWatermark {
				if seenDedup {
					return fmt.Errorf("a withWatermark follows a dedup, so its watermark depends on the verdicts of every key's rows")
				}
				continue
			}
			seenDedup = true
			if n.Op.Kind == chain.TransformWithStateDedup {
				return fmt.Errorf("a transformWithState dedup runs a batch at every trigger while any key is in state, so each part's batches end when its own keys expire, not when the run's do")
			}
			if !slices.Contains(n.KeyColumns, generators.ColEventID) {
				return fmt.Errorf("%s does not key on event_id, the column a run splits on: two rows of different parts could meet in its state", n.Op.Kind)
			}
		}
		return nil
	}
	if j.Rows.NoKeySplit != "" {
		return errors.New(j.Rows.NoKeySplit)
	}
	if !slices.Contains(j.Rows.Keys, "event_id") {
		return fmt.Errorf("its key (%v) does not include event_id, the column a run splits on", j.Rows.Keys)
	}
	// An engine that splits (Kafka Streams, Beam) sees every row on its
	// clocks (a task's stream time, the watermark, processing time):
	// another part's rows move them (observingOperator). One that cannot
	// (Flink) says why in NoKeySplit (sim/registry), above.
	return nil
}
