package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/dedupsim/dedupsim/metrics"
)

// Write writes the results folder dir: summary.json, timeseries.csv and
// progress/<query>.jsonl. It builds the folder beside dir and swaps it in
// with renames, so an interrupted or failed write leaves the previous
// results (or nothing), never a partial summary.json.
func Write(dir string, r *Results) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := writeInto(tmp, r); err != nil {
		return fmt.Errorf("results %s: %w", dir, err)
	}
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("results %s: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return fmt.Errorf("results %s: %w", dir, err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}

func writeInto(dir string, r *Results) error {
	var ts bytes.Buffer
	if err := metrics.WriteTimeseries(&ts, r.Records); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "timeseries.csv"), ts.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "progress"), 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(r.Progress))
	for n := range r.Progress {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, "progress", n+".jsonl"), r.Progress[n], 0o644); err != nil {
			return err
		}
	}
	sum, err := metrics.MarshalSummary(r.Summary)
	if err != nil {
		return err
	}
	// summary.json last: its presence means the folder is complete.
	return os.WriteFile(filepath.Join(dir, "summary.json"), sum, 0o644)
}
