package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

// loadScenario writes yaml to a file and loads it.
func loadScenario(t *testing.T, yaml string) *scenario.Scenario {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// exportScenario exports sc to a new folder and returns it.
func exportScenario(t *testing.T, sc *scenario.Scenario, f Format) (string, *Summary) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export")
	sum, err := Scenario(context.Background(), sc, out, Options{Format: f})
	if err != nil {
		t.Fatal(err)
	}
	return out, sum
}

// readParquet reads a batch file with the Parquet library: its schema,
// row groups and rows.
func readParquet(t *testing.T, path string) (*parquet.File, []parquet.Row) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	r := parquet.NewReader(f)
	defer r.Close()
	var rows []parquet.Row
	buf := make([]parquet.Row, 100)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			rows = append(rows, row.Clone())
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return f, rows
}

// readJSONLines reads a JSON batch file: one object per line.
func readJSONLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// countRows counts the rows of a batch file.
func countRows(t *testing.T, path string, f Format) int {
	t.Helper()
	if f == JSON {
		return len(readJSONLines(t, path))
	}
	_, rows := readParquet(t, path)
	return len(rows)
}

// readRecords reads a predicted expected/<name>.jsonl into maps.
func readRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	return readJSONLines(t, path)
}
