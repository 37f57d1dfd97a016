package metrics

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// timeLayout is how timeseries.csv prints instants: UTC, milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z"

// FormatMillis renders ms since the epoch as an RFC 3339 UTC timestamp
// with milliseconds, the way Spark's progress prints a watermark.
func FormatMillis(ms int64) string { return time.UnixMilli(ms).UTC().Format(timeLayout) }

func formatDelay(d *float64) string {
	if d == nil {
		return ""
	}
	return strconv.FormatFloat(*d, 'f', -1, 64)
}

// Record returns r as the fields of one timeseries.csv row.
func (r *BatchRecord) Record(dst []string) []string {
	wm := ""
	if r.HasWatermark {
		wm = FormatMillis(r.Watermark)
	}
	return append(dst[:0],
		r.Query, formatDelay(r.Delay), strconv.FormatInt(r.BatchID, 10),
		FormatMillis(r.ProcessingTime), wm,
		strconv.FormatInt(r.InputRows, 10), strconv.FormatInt(r.EmittedRows, 10),
		strconv.FormatInt(r.DroppedByWatermark, 10), strconv.FormatInt(r.DroppedDuplicates, 10),
		strconv.FormatInt(r.StateRows, 10), strconv.FormatInt(r.StateBytes, 10),
		strconv.FormatInt(r.MissedDuplicates, 10), strconv.FormatInt(r.FalseDrops, 10),
	)
}

// WriteTimeseries writes records as timeseries.csv.
func WriteTimeseries(w io.Writer, records []BatchRecord) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(TimeseriesHeader); err != nil {
		return err
	}
	var row []string
	for i := range records {
		row = records[i].Record(row)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadTimeseries reads a timeseries.csv written by WriteTimeseries.
func ReadTimeseries(r io.Reader) ([]BatchRecord, error) {
	var out []BatchRecord
	err := ScanTimeseries(r, func(rec *BatchRecord) error {
		out = append(out, *rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ScanTimeseries reads a timeseries.csv written by WriteTimeseries and
// calls fn with each record in file order. It holds no record after fn
// returns, so its memory does not grow with the file; fn must copy what
// it keeps. An error from fn stops the scan and is returned as is.
func ScanTimeseries(r io.Reader, fn func(*BatchRecord) error) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("timeseries.csv: header: %w", err)
	}
	if len(head) != len(TimeseriesHeader) {
		return fmt.Errorf("timeseries.csv: header has %d columns, want %d (%v)", len(head), len(TimeseriesHeader), TimeseriesHeader)
	}
	for i, h := range TimeseriesHeader {
		if head[i] != h {
			return fmt.Errorf("timeseries.csv: column %d is %q, want %q", i+1, head[i], h)
		}
	}
	for line := 2; ; line++ {
		f, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("timeseries.csv: %w", err)
		}
		rec, err := parseRecord(f)
		if err != nil {
			return fmt.Errorf("timeseries.csv: line %d: %w", line, err)
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
}

func parseRecord(f []string) (BatchRecord, error) {
	r := BatchRecord{Query: f[0]}
	if f[1] != "" {
		d, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return r, fmt.Errorf("delay: %w", err)
		}
		r.Delay = &d
	}
	ints := []*int64{&r.BatchID, nil, nil, &r.InputRows, &r.EmittedRows, &r.DroppedByWatermark,
		&r.DroppedDuplicates, &r.StateRows, &r.StateBytes, &r.MissedDuplicates, &r.FalseDrops}
	for i, p := range ints {
		if p == nil {
			continue
		}
		v, err := strconv.ParseInt(f[2+i], 10, 64)
		if err != nil {
			return r, fmt.Errorf("%s: %w", TimeseriesHeader[2+i], err)
		}
		*p = v
	}
	t, err := time.Parse(timeLayout, f[3])
	if err != nil {
		return r, fmt.Errorf("processingTime: %w", err)
	}
	r.ProcessingTime = t.UnixMilli()
	if f[4] != "" {
		t, err := time.Parse(timeLayout, f[4])
		if err != nil {
			return r, fmt.Errorf("watermark: %w", err)
		}
		r.Watermark, r.HasWatermark = t.UnixMilli(), true
	}
	return r, nil
}

// ReadSummary reads dir/summary.json. Only a regular file of at most
// fileio.MaxSummaryBytes is read: a FIFO or a link to a device is refused
// before it is opened (see fileio.ReadFile).
func ReadSummary(dir string) (*Summary, error) {
	path := filepath.Join(dir, "summary.json")
	data, err := fileio.ReadFile(path, fileio.MaxSummaryBytes)
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Format != ResultsFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", path, s.Format, ResultsFormat)
	}
	return &s, nil
}

// ReadTimeseriesFile reads dir/timeseries.csv, streaming at most
// fileio.MaxTimeseriesBytes of a regular file (see fileio.OpenLimited).
func ReadTimeseriesFile(dir string) ([]BatchRecord, error) {
	var out []BatchRecord
	err := ScanTimeseriesFile(dir, func(rec *BatchRecord) error {
		out = append(out, *rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ScanTimeseriesFile is ScanTimeseries over dir/timeseries.csv, with the
// limits of ReadTimeseriesFile. Errors of the file name the folder; an
// error from fn is returned as is.
func ScanTimeseriesFile(dir string, fn func(*BatchRecord) error) error {
	f, r, err := fileio.OpenLimited(filepath.Join(dir, "timeseries.csv"), fileio.MaxTimeseriesBytes)
	if err != nil {
		return err
	}
	defer f.Close()
	var fnErr error
	err = ScanTimeseries(r, func(rec *BatchRecord) error {
		fnErr = fn(rec)
		return fnErr
	})
	if err != nil && err != fnErr {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return err
}

// MarshalSummary renders s as indented JSON with a trailing newline.
func MarshalSummary(s *Summary) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteFileAtomic writes data to path through a temporary file in the same
// folder and a rename, so readers never see a half-written file; the file
// gets mode 0666 less the umask (see fileio.WriteFile).
func WriteFileAtomic(path string, data []byte) error { return fileio.WriteFile(path, data) }

// CheckInputs refuses a results folder dir whose report inputs
// (summary.json, timeseries.csv, and stores.json and spark.csv when
// present) are not regular files, before anything is read or drawn, so
// that a named pipe or a device in their place is refused at once, with
// one line naming it. A missing file is left to the reader that needs it.
func CheckInputs(dir string) error {
	for _, name := range []string{"summary.json", "timeseries.csv", StoresFile, CurvesFile, "spark.csv"} {
		_, err := fileio.CheckRegular(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
