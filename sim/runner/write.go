package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/dedupsim/dedupsim/metrics"
)

// Write writes the results files into the folder dir, creating it if needed:
// timeseries.csv, progress/<query>.jsonl and, last, summary.json. It does
// not make dir appear atomically: write into a metrics.Staging folder and
// publish it for that.
func Write(dir string, r *Results) error {
	if err := writeInto(dir, r); err != nil {
		return fmt.Errorf("results %s: %w", dir, err)
	}
	return nil
}

func writeInto(dir string, r *Results) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	var ts bytes.Buffer
	if err := metrics.WriteTimeseries(&ts, r.Records); err != nil {
		return err
	}
	if err := metrics.WriteFileAtomic(filepath.Join(dir, "timeseries.csv"), ts.Bytes()); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "progress"), 0o777); err != nil {
		return err
	}
	names := make([]string, 0, len(r.Progress))
	for n := range r.Progress {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := metrics.WriteFileAtomic(filepath.Join(dir, "progress", n+".jsonl"), r.Progress[n]); err != nil {
			return err
		}
	}
	sum, err := metrics.MarshalSummary(r.Summary)
	if err != nil {
		return err
	}
	// summary.json last: its presence means the files are complete.
	return metrics.WriteFileAtomic(filepath.Join(dir, "summary.json"), sum)
}
