package flink

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCases runs every Flink case of testdata (each with a notes file
// deriving its expected values by hand, and checked against Flink itself
// by oracles/flink/run) and compares every step with NAME.expected.jsonl.
// Expected files are never generated from the model: there is no -update.
func TestCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no cases in testdata")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(strings.TrimSuffix(f, ".json") + ".notes.md"); err != nil {
				t.Errorf("no notes file: %v", err)
			}
			tr, err := LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := Run(tr)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WriteLines(&buf, lines); err != nil {
				t.Fatal(err)
			}
			got := readLines(t, buf.Bytes())
			data, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".expected.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			want := readLines(t, data)
			if len(got) != len(want) {
				t.Fatalf("%d lines, expected %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					g, _ := json.Marshal(got[i])
					w, _ := json.Marshal(want[i])
					t.Errorf("step %d:\n got  %s\n want %s", i, g, w)
				}
			}
		})
	}
}

// TestErrorCases loads every trace of testdata/errors: each must be
// rejected with one line containing its NAME.error-reason.txt.
func TestErrorCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.json")
	if len(files) == 0 {
		t.Fatal("no cases in testdata/errors")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			reason, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".error-reason.txt")
			if err != nil {
				t.Fatal(err)
			}
			_, err = LoadFile(f)
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error has several lines: %q", err)
			}
			if r := strings.TrimSpace(string(reason)); !strings.Contains(err.Error(), r) {
				t.Errorf("error %q does not contain %q", err, r)
			}
		})
	}
}

func readLines(t *testing.T, data []byte) []any {
	t.Helper()
	var out []any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		out = append(out, v)
	}
	return out
}
