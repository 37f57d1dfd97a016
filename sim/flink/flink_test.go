package flink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/enginetrace"
	"github.com/dedupsim/dedupsim/sim/enginetrace/casetest"
)

// TestCases runs every Flink case of testdata (each with a notes file
// deriving its expected values by hand, and checked against Flink itself
// by oracles/flink/run) and compares every step with NAME.expected.jsonl
// as JSON values. Expected files are never generated from the model:
// there is no -update.
func TestCases(t *testing.T) { casetest.Run(t, "testdata/*.json", Replay, true) }

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
			_, err = enginetrace.LoadFile(f, Load)
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
