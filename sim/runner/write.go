package runner

import (
	"fmt"
	"os"
	"path/filepath"
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
	return WriteFiles(dir, r)
}
