package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics"
)

// summer counts and hashes what is written to it.
type summer struct {
	h hash.Hash
	n int64
}

func newSummer() *summer { return &summer{h: sha256.New()} }

func (s *summer) Write(p []byte) (int, error) {
	s.n += int64(len(p))
	return s.h.Write(p)
}

func (s *summer) sum() FileSum {
	return FileSum{Bytes: s.n, SHA256: hex.EncodeToString(s.h.Sum(nil))}
}

// verifyFiles checks every job file of the shard against the size and
// SHA-256 its manifest recorded when the shard was published: a file cut,
// emptied or edited since, or one the manifest does not list, is refused
// in one line naming the file and the shard to rerun. It reads each file
// once, streaming.
func verifyFiles(s shardFolder, spark bool) error {
	for ji, j := range s.m.Jobs {
		rels := jobRelFiles(j.FileName, spark)
		var tot totals
		if len(j.Files) != len(rels) {
			return fmt.Errorf("%s: job %s lists %d files, want %d: rerun shard %d/%d", filepath.Join(s.dir, ManifestFile), j.FileName, len(j.Files), len(rels), s.m.Shard, s.m.Of)
		}
		for _, rel := range rels {
			want, ok := j.Files[filepath.ToSlash(rel)]
			if !ok {
				return fmt.Errorf("%s: lists no checksum for %s: rerun shard %d/%d", filepath.Join(s.dir, ManifestFile), filepath.ToSlash(rel), s.m.Shard, s.m.Of)
			}
			path := filepath.Join(s.dir, rel)
			var got FileSum
			var err error
			if rel == rels[0] {
				got, err = timeseriesSum(path, &tot)
			} else {
				got, err = fileSum(path)
			}
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("%s: %d bytes with SHA-256 %.12s..., but the shard wrote %d bytes with %.12s...: the file changed after the shard was published; rerun shard %d/%d",
					path, got.Bytes, got.SHA256, want.Bytes, want.SHA256, s.m.Shard, s.m.Of)
			}
		}
		if err := checkCounters(s, ji, &s.m.Summary.Queries[ji], tot); err != nil {
			return err
		}
	}
	return nil
}

// totals are what a job's timeseries file says of its counters: the
// per-batch counts summed, the cumulative ones and the state as of the
// last batch.
type totals struct {
	batches, inputRows, emittedRows, droppedByWatermark, droppedDuplicates int64
	missedDuplicates, falseDrops, finalStateRows, finalStateBytes          int64
}

func (t *totals) add(r *metrics.BatchRecord) error {
	t.batches++
	t.inputRows += r.InputRows
	t.emittedRows += r.EmittedRows
	t.droppedByWatermark += r.DroppedByWatermark
	t.droppedDuplicates += r.DroppedDuplicates
	t.missedDuplicates, t.falseDrops = r.MissedDuplicates, r.FalseDrops
	t.finalStateRows, t.finalStateBytes = r.StateRows, r.StateBytes
	return nil
}

// timeseriesSum is fileSum of a job's timeseries file, which it also adds
// up into tot as it streams (one read).
func timeseriesSum(path string, tot *totals) (FileSum, error) {
	f, err := fileio.Open(path)
	if err != nil {
		return FileSum{}, err
	}
	defer f.Close()
	s := newSummer()
	// A shard's job file is timeseries.csv's rows without its header.
	head := strings.NewReader(strings.Join(metrics.TimeseriesHeader, ",") + "\n")
	if err := metrics.ScanTimeseries(io.MultiReader(head, io.TeeReader(f, s)), tot.add); err != nil {
		return FileSum{}, fmt.Errorf("%s: %w", path, err)
	}
	// The rest of the file, should the scan stop short of it.
	if _, err := io.Copy(s, f); err != nil {
		return FileSum{}, fmt.Errorf("%s: %w", path, err)
	}
	return s.sum(), nil
}

// checkCounters compares the counters shard.json's summary holds for the
// shard's job ji (q) with what its timeseries file says (tot) and with
// themselves (a rate is its counts' ratio, missed duplicates are at most
// the duplicates, false drops at most the events): shard.json is not
// covered by a checksum, so a counter edited in it (12,345 missed of 1,504
// duplicates) is refused in one line naming the job and the counter.
func checkCounters(s shardFolder, ji int, q *metrics.QuerySummary, tot totals) error {
	path := filepath.Join(s.dir, ManifestFile)
	bad := func(what string, got, want any) error {
		return fmt.Errorf("%s: job %s: summary's %s is %v, but its files say %v: the shard was changed after it was published; rerun shard %d/%d",
			path, s.m.Jobs[ji].FileName, what, got, want, s.m.Shard, s.m.Of)
	}
	wantInput := tot.inputRows
	if s.m.Split == SplitByKey {
		// A part of a run split by key counts its own rows in its summary,
		// while its timeseries holds each batch's whole input (every part
		// reads the whole stream): the merge checks those against each
		// other across the parts.
		wantInput = q.InputRows
	}
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"batches", q.Batches, tot.batches},
		{"inputRows", q.InputRows, wantInput},
		{"emittedRows", q.EmittedRows, tot.emittedRows},
		{"droppedByWatermark", q.DroppedByWatermark, tot.droppedByWatermark},
		{"droppedDuplicates", q.DroppedDuplicates, tot.droppedDuplicates},
		{"missedDuplicates", q.MissedDuplicates, tot.missedDuplicates},
		{"falseDrops", q.FalseDrops, tot.falseDrops},
		{"finalStateRows", q.FinalStateRows, tot.finalStateRows},
		{"finalStateBytes", q.FinalStateBytes, tot.finalStateBytes},
	} {
		if c.got != c.want {
			return bad(c.name, c.got, c.want)
		}
	}
	switch {
	case q.TrueDuplicates < 0 || q.MissedDuplicates < 0 || q.MissedDuplicates > q.TrueDuplicates:
		return bad("missedDuplicates", q.MissedDuplicates, fmt.Sprintf("from 0 to its trueDuplicates, %d", q.TrueDuplicates))
	case q.LogicalEvents < 0 || q.FalseDrops < 0 || q.FalseDrops > q.LogicalEvents:
		return bad("falseDrops", q.FalseDrops, fmt.Sprintf("from 0 to its logicalEvents, %d", q.LogicalEvents))
	case q.FalseDropsByCause.Late+q.FalseDropsByCause.BadClock+q.FalseDropsByCause.Collision != q.FalseDrops:
		return bad("falseDropsByCause", q.FalseDropsByCause, fmt.Sprintf("causes adding up to falseDrops, %d", q.FalseDrops))
	case q.MissedDuplicateRate != rateOf(q.MissedDuplicates, q.TrueDuplicates):
		return bad("missedDuplicateRate", q.MissedDuplicateRate, rateOf(q.MissedDuplicates, q.TrueDuplicates))
	case q.FalseDropRate != rateOf(q.FalseDrops, q.LogicalEvents):
		return bad("falseDropRate", q.FalseDropRate, rateOf(q.FalseDrops, q.LogicalEvents))
	}
	// Every job of a sweep runs on the same stream: one ground truth.
	if q0 := &s.m.Summary.Queries[0]; q.LogicalEvents != q0.LogicalEvents || q.TrueDuplicates != q0.TrueDuplicates {
		return bad("logicalEvents and trueDuplicates", fmt.Sprint(q.LogicalEvents, " and ", q.TrueDuplicates),
			fmt.Sprint(q0.LogicalEvents, " and ", q0.TrueDuplicates, " as job ", s.m.Jobs[0].FileName))
	}
	return nil
}

// checkBalances refuses a shard whose summary breaks the balances every
// job's counters keep, which its files cannot check on their own (a part
// of a run split by key counts its own rows, while its timeseries holds
// each batch's whole input): every row is an event's first row or a copy;
// it is emitted, dropped as late or dropped as a duplicate; the sink
// writes the emitted rows and, only when it can fail, a retried batch's
// rows again. It runs after the checks against the files and the other
// shards, which name an edit more precisely.
func checkBalances(s shardFolder) error {
	path := filepath.Join(s.dir, ManifestFile)
	for ji := range s.m.Jobs {
		q := &s.m.Summary.Queries[ji]
		bad := func(what string, got, want any) error {
			return fmt.Errorf("%s: job %s: summary's %s is %v, but its files say %v: the shard was changed after it was published; rerun shard %d/%d",
				path, s.m.Jobs[ji].FileName, what, got, want, s.m.Shard, s.m.Of)
		}
		switch {
		case q.InputRows != q.LogicalEvents+q.TrueDuplicates:
			// Every row is an event's first row or a copy.
			return bad("inputRows", q.InputRows, fmt.Sprintf("its logicalEvents plus trueDuplicates, %d", q.LogicalEvents+q.TrueDuplicates))
		case q.InputRows != q.EmittedRows+q.DroppedByWatermark+q.DroppedDuplicates:
			// Every row is emitted, dropped as late or dropped as a duplicate.
			return bad("inputRows", q.InputRows, fmt.Sprintf("its emittedRows plus droppedByWatermark plus droppedDuplicates, %d", q.EmittedRows+q.DroppedByWatermark+q.DroppedDuplicates))
		case q.SinkDuplicates < 0 || q.SinkDuplicates > 0 && !sinkCanFail(s.m.Summary.Scenario):
			return bad("sinkDuplicates", q.SinkDuplicates, "0: the scenario's sink never writes a batch twice")
		case q.SinkWrites != q.EmittedRows+q.SinkDuplicates:
			return bad("sinkWrites", q.SinkWrites, fmt.Sprintf("its emittedRows plus sinkDuplicates, %d", q.EmittedRows+q.SinkDuplicates))
		}
	}
	return nil
}

// sinkCanFail reports whether the scenario as run (a summary's scenario)
// has an append sink whose writes can fail, the only sink that writes a
// retried batch's rows twice. A scenario that cannot be read can.
func sinkCanFail(scenario json.RawMessage) bool {
	var sc struct {
		Sink struct {
			Kind               string  `json:"kind"`
			FailureProbability float64 `json:"failureProbability"`
		} `json:"sink"`
	}
	if json.Unmarshal(scenario, &sc) != nil {
		return true
	}
	return sc.Sink.Kind != "idempotent" && sc.Sink.FailureProbability != 0
}

// rateOf is num/den, 0 when den is 0, as the summary computes its rates.
func rateOf(num, den int64) float64 {
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// checkGroundTruth refuses shards whose jobs disagree on the ground truth
// of the stream they all ran on (logical events, true duplicates): a
// shard whose summary was edited consistently within itself.
func checkGroundTruth(shards []shardFolder) error {
	if len(shards[0].m.Summary.Queries) == 0 {
		return nil
	}
	q0 := &shards[0].m.Summary.Queries[0]
	for _, s := range shards[1:] {
		if len(s.m.Summary.Queries) == 0 {
			continue
		}
		q := &s.m.Summary.Queries[0]
		if q.LogicalEvents != q0.LogicalEvents || q.TrueDuplicates != q0.TrueDuplicates {
			return fmt.Errorf("%s: %d logical events and %d true duplicates, but %s has %d and %d: the shards ran the same stream, so one was changed after it was published",
				filepath.Join(s.dir, ManifestFile), q.LogicalEvents, q.TrueDuplicates, filepath.Join(shards[0].dir, ManifestFile), q0.LogicalEvents, q0.TrueDuplicates)
		}
	}
	return nil
}

// fileSum returns the size and SHA-256 of the regular file path.
func fileSum(path string) (FileSum, error) {
	f, err := fileio.Open(path)
	if err != nil {
		return FileSum{}, err
	}
	defer f.Close()
	s := newSummer()
	if _, err := io.Copy(s, f); err != nil {
		return FileSum{}, fmt.Errorf("%s: %w", path, err)
	}
	return s.sum(), nil
}
