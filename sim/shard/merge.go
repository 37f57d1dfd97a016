package shard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
)

// shardFolder is a shard folder read for a merge.
type shardFolder struct {
	dir string
	m   *Manifest
}

// IsShard reports whether dir holds a shard's manifest.
func IsShard(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, ManifestFile))
	return err == nil && fi.Mode().IsRegular()
}

// ReadManifest reads and checks the shard.json of the shard folder dir. A
// folder that is not a shard (a results folder, anything else) is refused
// with one line saying what it is.
func ReadManifest(dir string) (*Manifest, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such folder", dir)
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, fmt.Errorf("%s: is a file, not a shard folder (merge takes the folders simulate sweep --shard K/N or run --shard K/N wrote)", dir)
	}
	path := filepath.Join(dir, ManifestFile)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(filepath.Join(dir, "summary.json")); err == nil {
			return nil, fmt.Errorf("%s: a results folder, not a shard (it has no %s; merge takes the folders simulate sweep --shard K/N or run --shard K/N wrote)", dir, ManifestFile)
		}
		return nil, fmt.Errorf("%s: not a shard folder (it has no %s; merge takes the folders simulate sweep --shard K/N or run --shard K/N wrote)", dir, ManifestFile)
	}
	data, err := fileio.ReadFile(path, fileio.MaxSummaryBytes)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %s", path, fileio.Reason(err))
	}
	if m.Format != Format {
		return nil, fmt.Errorf("%s: format %s, want %q (a shard of another dedupsim version?)", path, fileio.Quote(m.Format), Format)
	}
	if m.Of < 1 || m.Of > MaxShards || m.Shard < 0 || m.Shard >= m.Of || m.Summary == nil ||
		m.Summary.Format != metrics.ResultsFormat || len(m.Summary.Queries) != len(m.Jobs) {
		return nil, fmt.Errorf("%s: not a consistent shard manifest (shard, of, jobs and summary disagree)", path)
	}
	spec := Spec{K: m.Shard, N: m.Of}
	var want []int
	switch m.Split {
	case "":
		for i := spec.K; i < m.TotalJobs; i += spec.N {
			want = append(want, i)
		}
	case SplitByKey:
		// Every job is in every part of a run split by key.
		for i := range m.TotalJobs {
			want = append(want, i)
		}
	default:
		return nil, fmt.Errorf("%s: split %s, want %q (a run split by key) or none (a sweep's jobs)", path, fileio.Quote(m.Split), SplitByKey)
	}
	var got []int
	for _, j := range m.Jobs {
		got = append(got, j.Index)
		if !validFileName(j.FileName) {
			return nil, fmt.Errorf("%s: job file name %s: want a plain file name", path, fileio.Quote(j.FileName))
		}
	}
	if !slices.Equal(got, want) {
		return nil, fmt.Errorf("%s: lists jobs %v, but shard %s of %d jobs owns %v", path, got, spec, m.TotalJobs, want)
	}
	return &m, nil
}

// validFileName reports whether a job's file name stays in its folder.
func validFileName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, `/\`) && !strings.ContainsRune(n, 0)
}

// Merge combines the shard folders dirs, given in any order, into the
// results folder out, which it publishes as runner.RunTo does (same rule
// for what out may replace, same staging and swap): summary.json,
// timeseries.csv, progress/*.jsonl, spark.csv with a spark: block, and
// the report when render is not nil, exactly as the unsharded sweep
// writes them. It refuses, with one line and nothing written: a folder
// that is not a shard, shards of different versions, scenarios, seeds,
// sweeps, splits or --store, a shard given twice, a missing shard, a job
// file whose size or SHA-256 is not the one its shard recorded, and an out
// that is one of the shards. It returns the merged summary.
func Merge(dirs []string, out string, render runner.Renderer) (*metrics.Summary, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no shard folders to merge")
	}
	var shards []shardFolder
	for _, d := range dirs {
		m, err := ReadManifest(d)
		if err != nil {
			return nil, err
		}
		shards = append(shards, shardFolder{dir: d, m: m})
	}
	if err := checkSet(shards, out); err != nil {
		return nil, err
	}
	slices.SortFunc(shards, func(a, b shardFolder) int { return a.m.Shard - b.m.Shard })
	spark := hasSpark(shards)
	for _, s := range shards {
		if err := verifyFiles(s, spark); err != nil {
			return nil, err
		}
	}
	byKey := shards[0].m.Split == SplitByKey
	var res *runner.Results
	if !byKey {
		// A sweep's shards each ran the whole stream: the same ground
		// truth in every one (a run's parts each count their own events).
		if err := checkGroundTruth(shards); err != nil {
			return nil, err
		}
		var err error
		if res, err = assemble(shards, spark); err != nil {
			return nil, err
		}
	}
	for _, s := range shards {
		if err := checkBalances(s); err != nil {
			return nil, err
		}
	}
	err := runner.Publish(out, func(st *fileio.Staging) error {
		if byKey {
			// The parts' rows are merged into files in the staging
			// folder, copied into the results from there and removed:
			// a merge killed on the way leaves only the staging folder,
			// which the next run or merge beside out removes.
			tmp := filepath.Join(st.Dir, ".merging")
			if err := os.Mkdir(tmp, 0o777); err != nil {
				return fmt.Errorf("merge: %w", err)
			}
			var err error
			if res, err = assembleByKey(shards, tmp); err != nil {
				return err
			}
			if err := runner.WriteFiles(st.Dir, res); err != nil {
				return err
			}
			if err := os.RemoveAll(tmp); err != nil {
				return fmt.Errorf("merge: %w", err)
			}
		} else if err := runner.WriteFiles(st.Dir, res); err != nil {
			return err
		}
		if render != nil {
			return render(st.Dir)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res.Summary, nil
}

// checkSet checks that shards are the N shards of one sweep, each once,
// and that out is none of them.
func checkSet(shards []shardFolder, out string) error {
	first := shards[0]
	f := first.m
	for _, s := range shards[1:] {
		m := s.m
		switch {
		case m.Version != f.Version:
			return fmt.Errorf("%s: written by dedupsim %s, but %s by %s: run every shard with the same binary", s.dir, m.Version, first.dir, f.Version)
		case m.Seed != f.Seed:
			return fmt.Errorf("%s: seed %d, but %s has seed %d: every shard must run with the same seed", s.dir, m.Seed, first.dir, f.Seed)
		case m.Split != f.Split:
			// Before the sweep: a part of a run split by key has none.
			return fmt.Errorf("%s: %s, but %s is %s: merge the shards of one command", s.dir, splitName(m.Split), first.dir, splitName(f.Split))
		case !slices.Equal(m.Sweep, f.Sweep):
			return fmt.Errorf("%s: sweep delays %s, but %s has %s: every shard must run with the same --delay", s.dir, strings.Join(m.Sweep, ","), first.dir, strings.Join(f.Sweep, ","))
		case m.ScenarioSHA256 != f.ScenarioSHA256 || m.TotalJobs != f.TotalJobs:
			return fmt.Errorf("%s: another scenario than %s's: every shard must run the same scenario file", s.dir, first.dir)
		case m.InputsSHA256 != f.InputsSHA256:
			return fmt.Errorf("%s: the scenario's input files (empirical distributions) differ from %s's: give every shard the same files", s.dir, first.dir)
		case m.Store != f.Store:
			return fmt.Errorf("%s: run with %s, but %s with %s: run every shard with the same --store", s.dir, storeFlag(m.Store), first.dir, storeFlag(f.Store))
		case m.Of != f.Of:
			return fmt.Errorf("%s: shard %d/%d, but %s is shard %d/%d: every shard must be of the same N", s.dir, m.Shard, m.Of, first.dir, f.Shard, f.Of)
		}
	}
	seen := map[int]string{}
	for _, s := range shards {
		if prev, ok := seen[s.m.Shard]; ok {
			return fmt.Errorf("%s and %s are both shard %d/%d: give each shard once", prev, s.dir, s.m.Shard, s.m.Of)
		}
		seen[s.m.Shard] = s.dir
	}
	var missing []string
	for k := range f.Of {
		if _, ok := seen[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, f.Of))
			if len(missing) == 10 {
				missing = append(missing, "...")
				break
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing shard %s: merge needs all %d shard folders", strings.Join(missing, ", "), f.Of)
	}
	oabs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	for _, s := range shards {
		if sabs, err := filepath.Abs(s.dir); err == nil && sabs == oabs {
			return fmt.Errorf("--out %s: is one of the shards; merge into another folder", out)
		}
	}
	return nil
}

// hasSpark reports whether a shard has spark rows (a spark/ folder): the
// sweep had a spark: block.
func hasSpark(shards []shardFolder) bool {
	for _, s := range shards {
		if _, err := os.Stat(filepath.Join(s.dir, sparkDir)); err == nil {
			return true
		}
	}
	return false
}

// assemble makes the results of the whole sweep from its shards, sorted
// by K: the summary of shard 0 (which holds job 0, whose stream found the
// bad-clock markers) with every shard's queries in job order, and each
// job's files.
func assemble(shards []shardFolder, spark bool) (*runner.Results, error) {
	s0 := shards[0].m.Summary
	sum := &metrics.Summary{Format: s0.Format, Scenario: s0.Scenario, Seed: s0.Seed, Warnings: s0.Warnings,
		Windows: s0.Windows, Markers: s0.Markers, Queries: []metrics.QuerySummary{}}
	type entry struct {
		job   runner.Job
		q     metrics.QuerySummary
		files runner.JobFiles
	}
	entries := make([]*entry, shards[0].m.TotalJobs)
	for _, s := range shards {
		for i, j := range s.m.Jobs {
			entries[j.Index] = &entry{
				job:   runner.Job{Index: j.Index, Name: j.Name, FileName: j.FileName},
				q:     s.m.Summary.Queries[i],
				files: jobFiles(s.dir, j.FileName, spark),
			}
		}
	}
	var jobs []runner.Job
	var files []runner.JobFiles
	for i, e := range entries {
		if e == nil {
			return nil, fmt.Errorf("job %d is in no shard", i)
		}
		jobs = append(jobs, e.job)
		files = append(files, e.files)
		sum.Queries = append(sum.Queries, e.q)
	}
	res, err := runner.ResultsFromFiles(sum, jobs, files)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return res, nil
}

// splitName describes a shard's split.
func splitName(split string) string {
	if split == SplitByKey {
		return "a part of a run split by key (run --shard)"
	}
	return "a part of a sweep's jobs (sweep --shard)"
}

// storeFlag describes the --store a shard ran with.
func storeFlag(store string) string {
	if store == "" {
		return "each query's own store (no --store)"
	}
	return "--store " + store
}
