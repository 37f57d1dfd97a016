package runner

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics"
)

// Results is a finished run. The summary is in memory; every batch's
// timeseries row and progress line stays in the part files the jobs wrote
// as batches completed (in the run's folder of temporaries, or in the
// checkpoint of a resumable run), and is read back on demand, so that a
// run's memory does not grow with its length. Close the results once they
// are written: it removes the run's temporaries and, for a resumable run,
// releases the checkpoint folder's lock, which the results hold until
// then so that no other run changes the files they read.
type Results struct {
	Summary *metrics.Summary
	Jobs    []Job
	// parts holds each job's timeseries and progress segments, in job
	// order.
	parts [][2]segment
	// sparkParts holds each job's spark.csv segment, with a spark: block.
	sparkParts []*segment

	closeOnce sync.Once
	closeErr  error
	release   func() error
}

// Close releases what the results hold: the run's temporary folder and
// the checkpoint's lock. The results cannot be read afterwards. It may be
// called more than once.
func (r *Results) Close() error {
	r.closeOnce.Do(func() {
		if r.release != nil {
			r.closeErr = r.release()
		}
	})
	return r.closeErr
}

// segmentReader returns a reader of a segment: exactly its n bytes.
func segmentReader(s segment) (io.ReadCloser, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(s.off, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(f, s.n), f}, nil
}

// copySegment copies a segment to w, failing if the file is shorter than
// the segment.
func copySegment(w io.Writer, s segment) error {
	rc, err := segmentReader(s)
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := io.Copy(w, rc)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	if n != s.n {
		return fmt.Errorf("%s: %d bytes, want %d", s.path, n, s.n)
	}
	return nil
}

// WriteTimeseries writes timeseries.csv: the header, then every job's rows
// in job order.
func (r *Results) WriteTimeseries(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(metrics.TimeseriesHeader); err != nil {
		return err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	for _, p := range r.parts {
		if err := copySegment(w, p[0]); err != nil {
			return err
		}
	}
	return nil
}

// jobIndex returns the index of the job whose FileName is name.
func (r *Results) jobIndex(name string) (int, error) {
	for i, j := range r.Jobs {
		if j.FileName == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no query %q in the results", name)
}

// WriteProgress writes progress/<name>.jsonl of the job whose FileName is
// name.
func (r *Results) WriteProgress(name string, w io.Writer) error {
	i, err := r.jobIndex(name)
	if err != nil {
		return err
	}
	return copySegment(w, r.parts[i][1])
}

// OpenProgress returns a reader of progress/<name>.jsonl of the job
// whose FileName is name, read from its part file; close it.
func (r *Results) OpenProgress(name string) (io.ReadCloser, error) {
	i, err := r.jobIndex(name)
	if err != nil {
		return nil, err
	}
	return segmentReader(r.parts[i][1])
}

// Progress returns the content of progress/<name>.jsonl, whole, in
// memory: for tests and small runs (OpenProgress streams it).
func (r *Results) Progress(name string) ([]byte, error) {
	var b bytes.Buffer
	if err := r.WriteProgress(name, &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Rows yields every timeseries row, in the order of timeseries.csv, read
// from the part files one at a time; it stops at the first error, which
// it yields.
func (r *Results) Rows() iter.Seq2[*metrics.BatchRecord, error] {
	return func(yield func(*metrics.BatchRecord, error) bool) {
		var rec metrics.BatchRecord
		for _, p := range r.parts {
			rc, err := segmentReader(p[0])
			if err != nil {
				yield(nil, err)
				return
			}
			cr := csv.NewReader(bufio.NewReader(rc))
			cr.ReuseRecord = true
			cr.FieldsPerRecord = len(metrics.TimeseriesHeader)
			for line := 1; ; line++ {
				f, err := cr.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err == nil {
					rec, err = metrics.ParseRecord(f)
				}
				if err != nil {
					rc.Close()
					yield(nil, fmt.Errorf("%s: row %d: %w", p[0].path, line, err))
					return
				}
				if !yield(&rec, nil) {
					rc.Close()
					return
				}
			}
			rc.Close()
		}
	}
}

// Records returns every timeseries row, in memory: for tests and small
// runs (Rows streams them).
func (r *Results) Records() ([]metrics.BatchRecord, error) {
	var out []metrics.BatchRecord
	for rec, err := range r.Rows() {
		if err != nil {
			return nil, err
		}
		out = append(out, *rec)
	}
	return out, nil
}

// WriteFiles writes the results files of r into the existing folder dir:
// timeseries.csv, progress/<query>.jsonl for every job, and summary.json
// last, each one atomically (fileio.Create: a temporary file renamed into
// place), so that a summary.json in dir means the other files are
// complete. Memory does not grow with the run's length: the rows are
// copied from the part files.
func WriteFiles(dir string, r *Results) error {
	write := func(path string, fill func(io.Writer) error) error {
		f, err := fileio.Create(path)
		if err != nil {
			return err
		}
		defer f.Abort()
		w := bufio.NewWriterSize(f, 256<<10)
		if err := fill(w); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		return f.Commit()
	}
	if err := write(filepath.Join(dir, "timeseries.csv"), r.WriteTimeseries); err != nil {
		return fmt.Errorf("results %s: timeseries.csv: %w", dir, err)
	}
	if err := os.Mkdir(filepath.Join(dir, "progress"), 0o777); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("results %s: %w", dir, err)
	}
	for i, j := range r.Jobs {
		seg := r.parts[i][1]
		if err := write(filepath.Join(dir, "progress", j.FileName+".jsonl"), func(w io.Writer) error { return copySegment(w, seg) }); err != nil {
			return fmt.Errorf("results %s: progress/%s.jsonl: %w", dir, j.FileName, err)
		}
	}
	if r.hasSpark() {
		if err := write(filepath.Join(dir, "spark.csv"), r.writeSpark); err != nil {
			return fmt.Errorf("results %s: spark.csv: %w", dir, err)
		}
	}
	sum, err := metrics.MarshalSummary(r.Summary)
	if err != nil {
		return err
	}
	if err := fileio.WriteFile(filepath.Join(dir, "summary.json"), sum); err != nil {
		return fmt.Errorf("results %s: summary.json: %w", dir, err)
	}
	return nil
}

// ReadResults opens the results folder dir (written by WriteFiles) as
// Results, reading its rows from timeseries.csv and progress/*.jsonl on
// demand; Jobs holds only each job's FileName, from the progress files.
// Tests and tools that compare runs use it.
func ReadResults(dir string) (*Results, error) {
	sum, err := metrics.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	ts := filepath.Join(dir, "timeseries.csv")
	fi, err := fileio.CheckRegular(ts)
	if err != nil {
		return nil, err
	}
	f, err := fileio.Open(ts)
	if err != nil {
		return nil, err
	}
	head, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	if err != nil || strings.TrimSpace(head) != strings.Join(metrics.TimeseriesHeader, ",") {
		return nil, fmt.Errorf("%s: want the header %s", ts, strings.Join(metrics.TimeseriesHeader, ","))
	}
	ents, err := os.ReadDir(filepath.Join(dir, "progress"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && e.Type().IsRegular() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	r := &Results{Summary: sum}
	// The whole timeseries is one segment after the header, given to the
	// first job; the others have no rows of their own.
	tsSeg := segment{path: ts, off: int64(len(head)), n: fi.Size() - int64(len(head))}
	for i, n := range names {
		pf := filepath.Join(dir, "progress", n+".jsonl")
		pi, err := fileio.CheckRegular(pf)
		if err != nil {
			return nil, err
		}
		seg := [2]segment{{path: ts}, {path: pf, n: pi.Size()}}
		if i == 0 {
			seg[0] = tsSeg
		}
		r.Jobs = append(r.Jobs, Job{Index: i, FileName: n})
		r.parts = append(r.parts, seg)
	}
	if len(names) == 0 && tsSeg.n > 0 {
		return nil, fmt.Errorf("%s: rows, but no progress files", dir)
	}
	return r, nil
}
