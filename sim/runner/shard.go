package runner

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// RunSelected runs only the jobs of s that keep selects (keep sees each
// job of Jobs(s), with its Index in the full list) and assembles their
// results as Run does: Summary.Queries and Jobs hold the selected jobs, in
// job order. Every job pulls the same stream, so the markers are those of
// a full run; a selection of no jobs runs nothing and its markers lack the
// stream's bad-clock rows, which only a job sees. A resumable run
// (opts.CheckpointDir) is not supported. Close the results once they are
// written.
func RunSelected(ctx context.Context, s *scenario.Scenario, opts Options, keep func(Job) bool) (_ *Results, err error) {
	if opts.CheckpointDir != "" {
		return nil, fmt.Errorf("scenario %s: a run of selected jobs cannot be resumable", s.File)
	}
	r, err := prepare(s, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.release()
		}
	}()
	r.jobs = slices.DeleteFunc(r.jobs, func(j Job) bool { return !keep(j) })
	if len(r.jobs) == 0 {
		// assemble reads the markers' bad-clock rows from the first
		// job's result: give it an empty one, then drop its query.
		out, err := r.assemble([]*jobResult{{}})
		if err != nil {
			return nil, err
		}
		out.Summary.Queries = []metrics.QuerySummary{}
		out.parts, out.sparkParts = nil, nil
		return out, nil
	}
	results, err := r.runJobs(ctx)
	if err != nil {
		return nil, err
	}
	return r.assemble(results)
}

// WriteJobTimeseries writes the timeseries rows of the i-th job of r (no
// header), as they appear in timeseries.csv.
func (r *Results) WriteJobTimeseries(i int, w io.Writer) error {
	return copySegment(w, r.parts[i][0])
}

// HasSpark reports whether r has spark.csv rows (a scenario with a spark:
// block).
func (r *Results) HasSpark() bool { return r.hasSpark() }

// WriteJobSpark writes the spark.csv rows of the i-th job of r (no
// header); r must have them (HasSpark).
func (r *Results) WriteJobSpark(i int, w io.Writer) error {
	return copySegment(w, *r.sparkParts[i])
}

// JobFiles names the files that hold one job's rows, whole: its
// timeseries rows (no header), its progress lines, and its spark.csv rows
// (no header; "" for a scenario without a spark: block).
type JobFiles struct {
	Timeseries, Progress, Spark string
}

// ResultsFromFiles makes the Results of a run from its summary, its jobs
// (in job order; each job's FileName names its progress file) and the
// files of each job's rows, in the same order, so that WriteFiles writes
// the results folder the run would have written. Spark must be given for
// every job or for none. The files must stay as they are until the
// results are written.
func ResultsFromFiles(sum *metrics.Summary, jobs []Job, files []JobFiles) (*Results, error) {
	if len(jobs) != len(files) {
		return nil, fmt.Errorf("%d jobs, %d sets of files", len(jobs), len(files))
	}
	whole := func(path string) (segment, error) {
		fi, err := fileio.CheckRegular(path)
		if err != nil {
			return segment{}, err
		}
		return segment{path: path, n: fi.Size()}, nil
	}
	r := &Results{Summary: sum, Jobs: jobs}
	for i, f := range files {
		ts, err := whole(f.Timeseries)
		if err != nil {
			return nil, err
		}
		prog, err := whole(f.Progress)
		if err != nil {
			return nil, err
		}
		r.parts = append(r.parts, [2]segment{ts, prog})
		if (f.Spark != "") != (files[0].Spark != "") {
			return nil, fmt.Errorf("job %s: spark rows for some jobs only", jobs[i].FileName)
		}
		if f.Spark != "" {
			sp, err := whole(f.Spark)
			if err != nil {
				return nil, err
			}
			r.sparkParts = append(r.sparkParts, &sp)
		}
	}
	return r, nil
}
