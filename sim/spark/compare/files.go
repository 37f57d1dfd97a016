package compare

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics/progresslog"
)

// MaxBatches bounds the batches of each side that CompareFiles holds
// (the same as progresslog.MaxRecords, the records of one input): memory
// is bounded by the batches, not by the length of the inputs (a driver
// log is read in one pass, one record at a time). A batch with one state
// operator takes a few hundred bytes (BenchmarkBatchMemory), so tens of
// MB a side at the limit.
const MaxBatches = progresslog.MaxRecords

// ExpectedExt is the extension of the files CompareFiles reads from an
// expected folder: `simulate export` writes expected/<query>.jsonl.
const ExpectedExt = ".jsonl"

// CompareFiles reads the expected and the actual progress records with
// metrics/progresslog, in any form it reads, and compares them (see
// Compare).
//
// An expected path may be a folder, such as an export's expected/: its
// regular files named *.jsonl are read in name order (hidden files and
// subfolders are skipped); every other path must be a regular file. Each
// expected file must hold an executed batch (a record with a batchId and
// durationMs.addBatch). Actual paths are regular files, read in the order
// given.
//
// The error, when an input is bad, is one line that names the file: a
// *progresslog.Error (file and line, what was expected and what was
// found) for a file that is not Spark progress, else a message such as
// "expected/: no *.jsonl file".
func CompareFiles(expectedPaths, actualPaths []string, opts Options) (Result, error) {
	if len(expectedPaths) == 0 {
		return Result{}, errors.New("compare: no expected progress file given")
	}
	if len(actualPaths) == 0 {
		return Result{}, errors.New("compare: no actual progress file given")
	}
	e, a := newSide(MaxBatches), newSide(MaxBatches)
	for _, p := range expectedPaths {
		files, err := expectedFiles(p)
		if err != nil {
			return Result{}, err
		}
		for _, f := range files {
			before := e.seq
			if err := readFile(e, f, "expected"); err != nil {
				return Result{}, err
			}
			if e.seq == before {
				return Result{}, fmt.Errorf("%s: no executed micro-batch (a record with batchId and durationMs.addBatch); want dedupsim's expected progress, one record per batch", show(f, maxEcho))
			}
		}
	}
	for _, p := range actualPaths {
		if err := readFile(a, p, "actual"); err != nil {
			return Result{}, err
		}
	}
	return compareSides(e, a, opts), nil
}

// expectedFiles lists the files an expected path stands for.
func expectedFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %s", show(path, maxEcho), fileio.Reason(err))
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the folder: %s", show(path, maxEcho), fileio.Reason(err))
	}
	var files []string
	for _, en := range entries {
		name := en.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ExpectedExt) || en.IsDir() {
			continue
		}
		files = append(files, filepath.Join(path, name))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *%s file; want the folder of expected/<query>%s files that simulate export writes", show(path, maxEcho), ExpectedExt, ExpectedExt)
	}
	slices.Sort(files)
	return files, nil
}

// readFile reads the records of the regular file path into s.
func readFile(s *side, path, what string) error {
	f, err := fileio.Open(path)
	if err != nil {
		return fmt.Errorf("%s: cannot read the %s progress: %s", show(path, maxEcho), what, fileio.Reason(err))
	}
	defer f.Close()
	rd := progresslog.NewReader(f, path)
	for {
		p, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.add(&p); err != nil {
			return &progresslog.Error{Source: path, Line: p.Line,
				Msg: fmt.Sprintf("more than %s %s batches, the limit of one comparison", interval.Count(MaxBatches), what)}
		}
	}
}
