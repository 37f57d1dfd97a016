package shard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// The folders of a shard that hold each job's rows, one file per job
// named after its FileName.
const (
	timeseriesDir = "timeseries"
	progressDir   = "progress"
	sparkDir      = "spark"
)

// Run runs shard spec of s's jobs and publishes the shard folder at out,
// with the guarantees of runner.RunTo: out is checked first by the same
// rule (absent, empty, or a folder dedupsim wrote), everything is written
// into a staging folder beside it, and the staging folder replaces out in
// one step, so a failure leaves out as it was. The folder holds shard.json
// (written last) and each job's rows: timeseries/<job>.csv,
// progress/<job>.jsonl and, with a spark: block, spark/<job>.csv. It
// returns the shard's summary (its jobs only). opts.CheckpointDir must be
// empty: a shard is not resumable.
func Run(ctx context.Context, s *scenario.Scenario, opts runner.Options, spec Spec, out string) (*metrics.Summary, error) {
	return run(ctx, s, opts, spec, out, false)
}

// RunByKey runs part spec of the run of s split by key and publishes its
// shard folder at out, as Run does: every job of s, each over the whole
// stream, deciding and counting only the events whose event_id hashes to
// K (runner.KeyShard). A scenario or query that cannot split is refused
// with one line (runner.CheckKeyShard), and so is opts.CheckpointDir: a
// part is not resumable. Merge combines the N parts into the results
// folder of the unsplit run.
func RunByKey(ctx context.Context, s *scenario.Scenario, opts runner.Options, spec Spec, out string) (*metrics.Summary, error) {
	return run(ctx, s, opts, spec, out, true)
}

func run(ctx context.Context, s *scenario.Scenario, opts runner.Options, spec Spec, out string, byKey bool) (*metrics.Summary, error) {
	if opts.CheckpointDir != "" {
		return nil, fmt.Errorf("--shard: a shard cannot be resumable (no --checkpoint); rerun a failed shard whole")
	}
	jobs, err := runner.Jobs(s)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.File, err)
	}
	owns := func(j runner.Job) bool { return spec.Owns(j.Index) }
	split, trafficLast := "", int64(0)
	if byKey {
		if err := runner.CheckKeyShard(s); err != nil {
			return nil, err
		}
		opts.KeyShard = &runner.KeyShard{K: spec.K, N: spec.N}
		owns = func(runner.Job) bool { return true }
		split = SplitByKey
		trafficLast = (s.Start.UnixMicro() + s.LastTrafficTrigger().Microseconds()) / 1000
	}
	res, err := runner.PublishRun(ctx, out, &opts.ScratchDir, func() (*runner.Results, error) {
		return runner.RunSelected(ctx, s, opts, owns)
	}, func(dir string, res *runner.Results) error {
		m := &Manifest{Format: Format, Shard: spec.K, Of: spec.N, Version: Version(), Seed: s.Seed,
			Sweep: sweepDelays(s), InputsSHA256: inputsHash(s), Store: opts.Store, Split: split, TrafficLastMs: trafficLast,
			TotalJobs: len(jobs), Jobs: []JobEntry{}, Summary: res.Summary}
		var err error
		if m.ScenarioSHA256, err = scenarioHash(res.Summary.Scenario); err != nil {
			return err
		}
		if err := writeJobs(dir, res, m); err != nil {
			return fmt.Errorf("shard folder %s: %w", out, err)
		}
		data, err := marshalManifest(m)
		if err != nil {
			return err
		}
		if err := fileio.WriteFile(filepath.Join(dir, ManifestFile), data); err != nil {
			return fmt.Errorf("shard folder %s: %w", out, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res.Summary, nil
}

// writeJobs writes every job's rows into dir and lists the jobs in m.
func writeJobs(dir string, res *runner.Results, m *Manifest) error {
	dirs := []string{timeseriesDir, progressDir}
	if res.HasSpark() {
		dirs = append(dirs, sparkDir)
	}
	for _, d := range dirs {
		if err := os.Mkdir(filepath.Join(dir, d), 0o777); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	for i, j := range res.Jobs {
		e := JobEntry{Index: j.Index, Name: j.Name, FileName: j.FileName, Files: map[string]FileSum{}}
		fill := map[string]func(io.Writer) error{
			timeseriesDir: func(w io.Writer) error { return res.WriteJobTimeseries(i, w) },
			progressDir:   func(w io.Writer) error { return res.WriteProgress(j.FileName, w) },
			sparkDir:      func(w io.Writer) error { return res.WriteJobSpark(i, w) },
		}
		for _, rel := range jobRelFiles(j.FileName, res.HasSpark()) {
			sum, err := writeFile(filepath.Join(dir, rel), fill[filepath.Dir(rel)])
			if err != nil {
				return err
			}
			e.Files[filepath.ToSlash(rel)] = sum
		}
		m.Jobs = append(m.Jobs, e)
	}
	return nil
}

// jobRelFiles names the files of the job fileName, relative to its shard
// folder: timeseries/, progress/ and, with a spark: block, spark/.
func jobRelFiles(fileName string, spark bool) []string {
	out := []string{filepath.Join(timeseriesDir, fileName+".csv"), filepath.Join(progressDir, fileName+".jsonl")}
	if spark {
		out = append(out, filepath.Join(sparkDir, fileName+".csv"))
	}
	return out
}

// jobFiles names the files of the job fileName in the shard folder dir.
func jobFiles(dir, fileName string, spark bool) runner.JobFiles {
	rel := jobRelFiles(fileName, spark)
	f := runner.JobFiles{Timeseries: filepath.Join(dir, rel[0]), Progress: filepath.Join(dir, rel[1])}
	if spark {
		f.Spark = filepath.Join(dir, rel[2])
	}
	return f
}

// writeFile writes path atomically with what fill writes, streaming, and
// returns its size and SHA-256.
func writeFile(path string, fill func(io.Writer) error) (FileSum, error) {
	f, err := fileio.Create(path)
	if err != nil {
		return FileSum{}, err
	}
	defer f.Abort()
	h := newSummer()
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 256<<10)
	if err := fill(w); err != nil {
		return FileSum{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if err := w.Flush(); err != nil {
		return FileSum{}, err
	}
	return h.sum(), f.Commit()
}
