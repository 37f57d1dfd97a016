package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the trace reader and, when a trace
// loads, runs it. Neither may panic; a rejected trace gets a one-line error.
// Seeds: every case of testdata plus the inputs kept in
// testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	for _, dir := range []string{"testdata/conformance", "testdata/cases"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`{"query": "dropDuplicates()", "steps": [{"addData": [{}]}]}`))
	f.Add([]byte(`{"query": "withWatermark('t', '1 second').dropDuplicates()", "eventTime": "t", "steps": [{"addData": [{"t": 1e300}]}]}`))
	f.Add([]byte(`{"query": [{"op": "dropDuplicates"}], "steps": [{"restart": true}, {"addData": []}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Load(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if len(tr.Steps) > 50 {
			return // keep each run short
		}
		if _, err := Run(tr); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error is not one line: %q", err)
		}
	})
}
