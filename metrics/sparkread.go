package metrics

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// SparkBatch is one row of spark.csv as the reports use it: the instants
// parsed, in milliseconds since the epoch.
type SparkBatch struct {
	SparkRow
	// StartMs and EndMs are Start and End in ms since the epoch.
	StartMs, EndMs int64
}

// ReadSpark reads a spark.csv written by the runner: the header, then one
// row per executed batch. Errors name the line and the column.
func ReadSpark(r io.Reader) ([]SparkBatch, error) {
	var out []SparkBatch
	err := ScanSpark(r, func(b *SparkBatch) error {
		out = append(out, *b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ScanSpark reads a spark.csv as ReadSpark does and calls fn with each row
// in file order, holding none after fn returns; fn must copy what it
// keeps. An error from fn stops the scan and is returned as is.
func ScanSpark(r io.Reader, fn func(*SparkBatch) error) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("spark.csv: header: %w", err)
	}
	if len(head) != len(SparkHeader) {
		return fmt.Errorf("spark.csv: header has %d columns, want %d (%v)", len(head), len(SparkHeader), SparkHeader)
	}
	for i, h := range SparkHeader {
		if head[i] != h {
			return fmt.Errorf("spark.csv: column %d is %s, want %s", i+1, fileio.Show(head[i]), h)
		}
	}
	for line := 2; ; line++ {
		f, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("spark.csv: %w", err)
		}
		row, err := ParseSparkRow(f)
		if err != nil {
			return fmt.Errorf("spark.csv: line %d: %w", line, err)
		}
		b := SparkBatch{SparkRow: row}
		for _, x := range []struct {
			dst  *int64
			name string
			v    string
		}{{&b.StartMs, "start", row.Start}, {&b.EndMs, "end", row.End}} {
			t, err := time.Parse(timeLayout, x.v)
			if err != nil {
				return fmt.Errorf("spark.csv: line %d: %s: want a time like 2026-01-01T00:00:10.000Z, got %s", line, x.name, fileio.Show(x.v))
			}
			*x.dst = t.UnixMilli()
		}
		if err := fn(&b); err != nil {
			return err
		}
	}
}

// ReadSparkFile reads dir/spark.csv, streaming at most
// fileio.MaxTimeseriesBytes of a regular file. A folder without one (a
// run without a spark: block) gives an error satisfying
// errors.Is(err, fs.ErrNotExist).
func ReadSparkFile(dir string) ([]SparkBatch, error) {
	f, r, err := fileio.OpenLimited(filepath.Join(dir, "spark.csv"), fileio.MaxTimeseriesBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := ReadSpark(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return recs, nil
}

// ScanSparkFile is ScanSpark over dir/spark.csv, with the limits of
// ReadSparkFile (a missing file satisfies errors.Is(err,
// fs.ErrNotExist)). Errors of the file name the folder; an error from fn
// is returned as is.
func ScanSparkFile(dir string, fn func(*SparkBatch) error) error {
	f, r, err := fileio.OpenLimited(filepath.Join(dir, "spark.csv"), fileio.MaxTimeseriesBytes)
	if err != nil {
		return err
	}
	defer f.Close()
	var fnErr error
	err = ScanSpark(r, func(b *SparkBatch) error {
		fnErr = fn(b)
		return fnErr
	})
	if err != nil && err != fnErr {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return err
}
