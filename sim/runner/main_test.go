package runner

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the package's tests with a temporary folder of their own
// and fails if anything of dedupsim's is left in it afterwards: a run that
// failed, or whose results were closed, must leave no temporary folder.
func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "runner-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		fmt.Fprintf(os.Stderr, "FAIL: the tests left %s in the temporary folder\n", e.Name())
		code = 1
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}
