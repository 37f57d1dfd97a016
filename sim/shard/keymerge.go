package shard

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
)

// A run split by key (run --shard K/N) has every job in every part; part
// K decided and counted the rows of the events whose event_id hashes to
// K, over the whole stream. So, per job, the parts have the same batches
// (or samples) in the same order, and the merge combines them:
//
//   - what every part saw whole is taken once, after checking that every
//     part has it: in a timeseries row the query, delay, batch id,
//     processing time, watermark and input rows; in a progress line the
//     batch id, timestamp, no-data flag, numInputRows, eventTime and the
//     operators' names; in the summary the query as run, its warnings,
//     flavour, horizon, bytes per entry, watermark lag, batches, no-data
//     batches and restarts;
//   - what each part counted for its own rows is summed: emitted rows,
//     drops, state rows and bytes, the cumulative missed duplicates and
//     false drops, each operator's counters, the sink's rows, the
//     engine's counters; the summary's totals;
//   - what is a maximum over time is recomputed from the summed samples
//     of the traffic window (peak state rows and bytes, an engine's peak
//     physical rows), and the rates from the summed totals.
//
// The shard files are read as streams, one row and one line of each part
// at a time: the merge's memory does not grow with the run.

// assembleByKey makes the results of the unsplit run from the parts of a
// run split by key, sorted by K, writing each job's merged rows into tmp.
func assembleByKey(shards []shardFolder, tmp string) (*runner.Results, error) {
	m0 := shards[0].m
	if err := sameRunSummary(shards); err != nil {
		return nil, err
	}
	s0 := m0.Summary
	sum := &metrics.Summary{Format: s0.Format, Scenario: s0.Scenario, Seed: s0.Seed, Warnings: s0.Warnings,
		Windows: s0.Windows, Markers: s0.Markers, Queries: []metrics.QuerySummary{}}
	var jobs []runner.Job
	var files []runner.JobFiles
	for ji, j := range m0.Jobs {
		for _, s := range shards[1:] {
			if o := s.m.Jobs[ji]; o.Name != j.Name || o.FileName != j.FileName {
				return nil, fmt.Errorf("%s: job %d is %s, but %s's is %s: rerun shard %d/%d", filepath.Join(s.dir, ManifestFile), ji, o.FileName, shards[0].dir, j.FileName, s.m.Shard, s.m.Of)
			}
		}
		f := runner.JobFiles{
			Timeseries: filepath.Join(tmp, fmt.Sprintf("%d.csv", ji)),
			Progress:   filepath.Join(tmp, fmt.Sprintf("%d.jsonl", ji)),
		}
		pk, err := mergeJobFiles(shards, j.FileName, m0.TrafficLastMs, f)
		if err != nil {
			return nil, err
		}
		var qs []metrics.QuerySummary
		for _, s := range shards {
			qs = append(qs, s.m.Summary.Queries[ji])
		}
		q, err := mergeQuery(qs, pk)
		if err != nil {
			return nil, fmt.Errorf("%s: query %s: %w: rerun the shards with one binary", shards[0].dir, j.FileName, err)
		}
		sum.Queries = append(sum.Queries, q)
		jobs = append(jobs, runner.Job{Index: j.Index, Name: j.Name, FileName: j.FileName})
		files = append(files, f)
	}
	res, err := runner.ResultsFromFiles(sum, jobs, files)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return res, nil
}

// sameRunSummary checks that every part's summary agrees on what is not
// a query's: the scenario, seed, warnings, windows and markers (each part
// read the whole stream).
func sameRunSummary(shards []shardFolder) error {
	head := func(s *metrics.Summary) ([]byte, error) {
		c := *s
		c.Queries = nil
		return json.Marshal(&c)
	}
	want, err := head(shards[0].m.Summary)
	if err != nil {
		return err
	}
	for _, s := range shards[1:] {
		got, err := head(s.m.Summary)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s: its summary (scenario, warnings, markers) differs from %s's: rerun shard %d/%d", filepath.Join(s.dir, ManifestFile), shards[0].dir, s.m.Shard, s.m.Of)
		}
	}
	return nil
}

// peaks are a job's maxima over the summed samples of the traffic window.
type peaks struct {
	stateRows, stateBytes, physical int64
	// hasPhysical is set when the samples carry numPhysicalEntries (the
	// jobs of engines other than Spark).
	hasPhysical bool
}

// mergeJobFiles merges the timeseries rows and progress lines of the job
// fileName of every part into out's files, one batch at a time, and
// returns the peaks of the summed samples up to trafficLastMs.
func mergeJobFiles(shards []shardFolder, fileName string, trafficLastMs int64, out runner.JobFiles) (pk peaks, err error) {
	type input struct {
		ts    *csv.Reader
		prog  *bufio.Reader
		tsP   string
		progP string
	}
	var ins []input
	for _, s := range shards {
		f := jobFiles(s.dir, fileName, false)
		tf, err := fileio.Open(f.Timeseries)
		if err != nil {
			return pk, err
		}
		defer tf.Close()
		pf, err := fileio.Open(f.Progress)
		if err != nil {
			return pk, err
		}
		defer pf.Close()
		cr := csv.NewReader(bufio.NewReaderSize(tf, 64<<10))
		cr.ReuseRecord = true
		cr.FieldsPerRecord = len(metrics.TimeseriesHeader)
		ins = append(ins, input{ts: cr, prog: bufio.NewReaderSize(pf, 64<<10), tsP: f.Timeseries, progP: f.Progress})
	}
	tsOut, err := fileio.Create(out.Timeseries)
	if err != nil {
		return pk, err
	}
	defer tsOut.Abort()
	progOut, err := fileio.Create(out.Progress)
	if err != nil {
		return pk, err
	}
	defer progOut.Abort()
	tw := bufio.NewWriterSize(tsOut, 256<<10)
	cw := csv.NewWriter(tw)
	pw := bufio.NewWriterSize(progOut, 256<<10)
	var row []string
	for n := 1; ; n++ {
		var rec metrics.BatchRecord
		var line metrics.ProgressLine
		ended := 0
		for i, in := range ins {
			f, terr := in.ts.Read()
			l, perr := in.prog.ReadBytes('\n')
			if errors.Is(terr, io.EOF) && errors.Is(perr, io.EOF) && len(l) == 0 {
				ended++
				continue
			}
			if terr != nil {
				return pk, fmt.Errorf("%s: row %d: %w", in.tsP, n, terr)
			}
			if perr != nil {
				return pk, fmt.Errorf("%s: line %d: %w", in.progP, n, perr)
			}
			r, err := metrics.ParseRecord(f)
			if err != nil {
				return pk, fmt.Errorf("%s: row %d: %w", in.tsP, n, err)
			}
			var p metrics.ProgressLine
			if err := json.Unmarshal(l, &p); err != nil {
				return pk, fmt.Errorf("%s: line %d: %s", in.progP, n, fileio.Reason(err))
			}
			if i == 0 {
				rec, line = r, p
				continue
			}
			if err := addRecord(&rec, &r); err != nil {
				return pk, fmt.Errorf("%s: row %d: %w, but %s has it otherwise: the parts are not of one run", in.tsP, n, err, ins[0].tsP)
			}
			if err := addLine(&line, &p); err != nil {
				return pk, fmt.Errorf("%s: line %d: %w, but %s has it otherwise: the parts are not of one run", in.progP, n, err, ins[0].progP)
			}
		}
		if ended == len(ins) {
			break
		}
		if ended > 0 {
			return pk, fmt.Errorf("job %s: the parts have different numbers of batches (%d of %d end at batch %d): the parts are not of one run", fileName, ended, len(ins), n)
		}
		if rec.ProcessingTime <= trafficLastMs {
			pk.stateRows = max(pk.stateRows, rec.StateRows)
			pk.stateBytes = max(pk.stateBytes, rec.StateBytes)
			if len(line.StateOperators) == 1 {
				if v, ok := line.StateOperators[0].CustomMetrics["numPhysicalEntries"]; ok {
					pk.physical, pk.hasPhysical = max(pk.physical, v), true
				}
			}
		}
		row = rec.Record(row)
		if err := cw.Write(row); err != nil {
			return pk, err
		}
		b, err := json.Marshal(&line)
		if err != nil {
			return pk, err
		}
		pw.Write(b)
		if err := pw.WriteByte('\n'); err != nil {
			return pk, err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return pk, err
	}
	if err := tw.Flush(); err != nil {
		return pk, err
	}
	if err := pw.Flush(); err != nil {
		return pk, err
	}
	if err := tsOut.Commit(); err != nil {
		return pk, err
	}
	return pk, progOut.Commit()
}

// addRecord adds the part's counts of o to r, after checking that what
// every part saw whole is the same.
func addRecord(r, o *metrics.BatchRecord) error {
	switch {
	case r.Query != o.Query || !equalPtr(r.Delay, o.Delay):
		return fmt.Errorf("query %s", o.Query)
	case r.BatchID != o.BatchID:
		return fmt.Errorf("batch id %d", o.BatchID)
	case r.ProcessingTime != o.ProcessingTime:
		return fmt.Errorf("batch %d's processing time %s", o.BatchID, metrics.FormatMillis(o.ProcessingTime))
	case r.HasWatermark != o.HasWatermark || r.Watermark != o.Watermark:
		return fmt.Errorf("batch %d's watermark %s", o.BatchID, metrics.FormatMillis(o.Watermark))
	case r.InputRows != o.InputRows:
		return fmt.Errorf("batch %d's %d input rows", o.BatchID, o.InputRows)
	}
	r.EmittedRows += o.EmittedRows
	r.DroppedByWatermark += o.DroppedByWatermark
	r.DroppedDuplicates += o.DroppedDuplicates
	r.StateRows += o.StateRows
	r.StateBytes += o.StateBytes
	r.MissedDuplicates += o.MissedDuplicates
	r.FalseDrops += o.FalseDrops
	return nil
}

// addLine adds the part's counts of o to l, after checking that what
// every part saw whole is the same.
func addLine(l, o *metrics.ProgressLine) error {
	switch {
	case l.BatchID != o.BatchID || l.Timestamp != o.Timestamp:
		return fmt.Errorf("batch %d at %s", o.BatchID, o.Timestamp)
	case l.NoData != o.NoData:
		return fmt.Errorf("batch %d's noData %v", o.BatchID, o.NoData)
	case l.NumInputRows != o.NumInputRows:
		return fmt.Errorf("batch %d's numInputRows %d", o.BatchID, o.NumInputRows)
	case (l.EventTime == nil) != (o.EventTime == nil) || (l.EventTime != nil && *l.EventTime != *o.EventTime):
		return fmt.Errorf("batch %d's eventTime", o.BatchID)
	case len(l.StateOperators) != len(o.StateOperators):
		return fmt.Errorf("batch %d's %d state operators", o.BatchID, len(o.StateOperators))
	}
	for k := range l.StateOperators {
		a, b := &l.StateOperators[k], &o.StateOperators[k]
		if a.OperatorName != b.OperatorName || len(a.CustomMetrics) != len(b.CustomMetrics) {
			return fmt.Errorf("batch %d's state operator %d (%s)", o.BatchID, k, b.OperatorName)
		}
		a.NumRowsTotal += b.NumRowsTotal
		a.NumRowsUpdated += b.NumRowsUpdated
		a.NumRowsRemoved += b.NumRowsRemoved
		a.NumRowsDroppedByWatermark += b.NumRowsDroppedByWatermark
		for name, v := range b.CustomMetrics {
			if _, ok := a.CustomMetrics[name]; !ok {
				return fmt.Errorf("batch %d's state operator %d's metric %s", o.BatchID, k, name)
			}
			a.CustomMetrics[name] += v
		}
	}
	l.Sink.NumOutputRows += o.Sink.NumOutputRows
	return nil
}

func equalPtr(a, b *float64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// mergeQuery combines the summaries of one query from every part: totals
// summed, what every part saw whole checked and taken once, peaks from
// the summed samples (pk), rates recomputed.
func mergeQuery(qs []metrics.QuerySummary, pk peaks) (metrics.QuerySummary, error) {
	// whole is what every part must agree on: the summary without what
	// is summed, recomputed or measured.
	whole := func(q metrics.QuerySummary) ([]byte, error) {
		q.InputRows, q.LogicalEvents, q.TrueDuplicates, q.EmittedRows = 0, 0, 0, 0
		q.MissedDuplicates, q.FalseDrops, q.FalseDropsByCause = 0, 0, metrics.FalseDropCauses{}
		q.DroppedByWatermark, q.DroppedDuplicates, q.MissedDuplicateRate, q.FalseDropRate = 0, 0, 0, 0
		q.PeakStateRows, q.FinalStateRows, q.PeakStateBytes, q.FinalStateBytes = 0, 0, 0, 0
		q.SinkDuplicates, q.SinkWrites, q.EventsPerSecond, q.WallSeconds = 0, 0, 0, 0
		q.EngineCounters = nil
		return json.Marshal(&q)
	}
	out := qs[0]
	want, err := whole(out)
	if err != nil {
		return out, err
	}
	if out.EngineCounters != nil {
		out.EngineCounters = maps.Clone(out.EngineCounters)
	}
	for k, q := range qs[1:] {
		got, err := whole(q)
		if err != nil {
			return out, err
		}
		if !bytes.Equal(got, want) {
			return out, fmt.Errorf("part %d's summary differs from part 0's in what every part sees whole (%s)", k+1, firstDiff(want, got))
		}
		out.InputRows += q.InputRows
		out.LogicalEvents += q.LogicalEvents
		out.TrueDuplicates += q.TrueDuplicates
		out.EmittedRows += q.EmittedRows
		out.MissedDuplicates += q.MissedDuplicates
		out.FalseDrops += q.FalseDrops
		out.FalseDropsByCause.Late += q.FalseDropsByCause.Late
		out.FalseDropsByCause.BadClock += q.FalseDropsByCause.BadClock
		out.FalseDropsByCause.Collision += q.FalseDropsByCause.Collision
		out.DroppedByWatermark += q.DroppedByWatermark
		out.DroppedDuplicates += q.DroppedDuplicates
		out.FinalStateRows += q.FinalStateRows
		out.FinalStateBytes += q.FinalStateBytes
		out.SinkDuplicates += q.SinkDuplicates
		out.SinkWrites += q.SinkWrites
		out.WallSeconds += q.WallSeconds
		if len(q.EngineCounters) != len(out.EngineCounters) {
			return out, fmt.Errorf("part %d has other engine counters than part 0", k+1)
		}
		for name, v := range q.EngineCounters {
			if _, ok := out.EngineCounters[name]; !ok {
				return out, fmt.Errorf("part %d has engine counter %s, part 0 not", k+1, name)
			}
			out.EngineCounters[name] += v
		}
	}
	out.MissedDuplicateRate, out.FalseDropRate = 0, 0
	if out.TrueDuplicates > 0 {
		out.MissedDuplicateRate = float64(out.MissedDuplicates) / float64(out.TrueDuplicates)
	}
	if out.LogicalEvents > 0 {
		out.FalseDropRate = float64(out.FalseDrops) / float64(out.LogicalEvents)
	}
	out.PeakStateRows, out.PeakStateBytes = pk.stateRows, pk.stateBytes
	if _, ok := out.EngineCounters["peakPhysicalStateRows"]; ok && pk.hasPhysical {
		out.EngineCounters["peakPhysicalStateRows"] = pk.physical
	}
	out.EventsPerSecond = 0
	if out.WallSeconds > 0 {
		out.EventsPerSecond = float64(out.InputRows) / out.WallSeconds
	}
	return out, nil
}

// firstDiff names where two JSON texts first differ, with a little
// context.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-30)
	return fmt.Sprintf("at ...%s", fileio.Quote(string(b[lo:min(len(b), i+30)])))
}
