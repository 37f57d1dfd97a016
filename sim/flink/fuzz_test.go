package flink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadAndRun feeds arbitrary documents to the trace loader: it must
// never panic, its errors must be one line, and a trace it accepts must
// run. The seed corpus is every case and error case of testdata.
func FuzzLoadAndRun(f *testing.F) {
	for _, pattern := range []string{"testdata/*.json", "testdata/errors/*.json"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Load(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of several lines: %q", err)
			}
			return
		}
		if _, err := Run(tr); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("run error of several lines: %q", err)
		}
	})
}
