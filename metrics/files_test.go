package metrics

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// withinSeconds runs f: a read that hangs on a FIFO or streams /dev/zero
// forever would never return, and the test binary's own timeout then
// fails the test with every goroutine's stack. No wall-clock deadline of
// its own decides the verdict, so a slow machine cannot fail it.
func withinSeconds(t *testing.T, what string, f func()) {
	t.Helper()
	f()
}

// resultsWith returns a folder whose file name is a FIFO, and one where
// it is a symlink to /dev/zero.
func resultsWith(t *testing.T, name string) (fifoDir, zeroDir string) {
	t.Helper()
	fifoDir, zeroDir = t.TempDir(), t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, name), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(zeroDir, name)); err != nil {
		t.Fatal(err)
	}
	return fifoDir, zeroDir
}

func TestReadSummaryRefusesSpecialFiles(t *testing.T) {
	fifo, zero := resultsWith(t, "summary.json")
	for _, dir := range []string{fifo, zero} {
		withinSeconds(t, dir, func() {
			_, err := ReadSummary(dir)
			var nr *fileio.NotRegularError
			if !errors.As(err, &nr) {
				t.Errorf("ReadSummary(%s) = %v, want not a regular file", dir, err)
			}
		})
	}
}

func TestReadTimeseriesFileRefusesSpecialFiles(t *testing.T) {
	fifo, zero := resultsWith(t, "timeseries.csv")
	for _, dir := range []string{fifo, zero} {
		withinSeconds(t, dir, func() {
			_, err := ReadTimeseriesFile(dir)
			var nr *fileio.NotRegularError
			if !errors.As(err, &nr) {
				t.Errorf("ReadTimeseriesFile(%s) = %v, want not a regular file", dir, err)
			}
		})
	}
}

func TestReadSummaryLimit(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file one byte past the limit: nothing is written to disk.
	if err := f.Truncate(fileio.MaxSummaryBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadSummary(dir)
	var tl *fileio.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != fileio.MaxSummaryBytes {
		t.Fatalf("got %v, want a TooLargeError at %d bytes", err, fileio.MaxSummaryBytes)
	}
}

func TestReadMissingFilesWrapNotExist(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadSummary(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("summary: %v", err)
	}
	if _, err := ReadTimeseriesFile(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("timeseries: %v", err)
	}
}

func TestSummaryWarningsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := &Summary{Format: ResultsFormat, Scenario: []byte(`{}`), Warnings: []string{"trigger: 1h is not shorter than duration (1h)"}}
	data, err := MarshalSummary(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"warnings": [`) {
		t.Fatalf("summary.json lacks warnings:\n%s", data)
	}
	os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644)
	got, err := ReadSummary(dir)
	if err != nil || len(got.Warnings) != 1 || got.Warnings[0] != s.Warnings[0] {
		t.Fatalf("read back %v, %v", got, err)
	}
	s.Warnings = nil
	data, _ = MarshalSummary(s)
	if strings.Contains(string(data), "warnings") {
		t.Errorf("a summary without warnings names them:\n%s", data)
	}
}
