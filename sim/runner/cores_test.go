package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// resultsBytes writes res into a folder and returns every file's bytes by
// path, summary.json's wall-clock fields zeroed.
func resultsBytes(t *testing.T, res *Results) map[string][]byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, res); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = wallClockField.ReplaceAll(data, []byte(`"$1": 0`))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestResultsDoNotDependOnCores runs scenarios with Workers and
// GOMAXPROCS 1, 2 and 4 and compares every byte of the results folders
// (wall-clock fields aside): the jobs share one generated stream whose
// ring of chunks (streamRing × streamChunk rows) the streams here wrap
// many times, and a partitioned query runs its partitions on the run's
// pool. The scenarios: four queries; a sweep; partitioned queries on the
// modelled cluster (with a cost block and a batch limit, so that jobs cut
// the stream into different batches) with a restart and a lost checkpoint.
func TestResultsDoNotDependOnCores(t *testing.T) {
	spark := strings.Replace(small, "rate: 200/s", "rate: 400/s", 1) + `faults:
  - {at: 100s, kind: restart}
  - {at: 170s, kind: lose-checkpoint}
spark:
  partitions: 8
  maxRowsPerBatch: 3000
`
	for name, text := range map[string]string{
		"queries":    strings.Replace(small, "rate: 200/s", "rate: 400/s", 1),
		"sweep":      strings.Replace(sweepScenario, "rate: 150/s", "rate: 300/s", 1),
		"partitions": spark,
	} {
		t.Run(name, func(t *testing.T) {
			sc := load(t, text)
			var want map[string][]byte
			for _, n := range []int{1, 2, 4} {
				func() {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
					res, err := runOpts(t, sc, Options{Workers: n})
					if err != nil {
						t.Fatal(err)
					}
					if in := res.Summary.Queries[0].InputRows; in < 4*streamRing*streamChunk/3 {
						t.Fatalf("a stream of %d rows does not wrap the ring", in)
					}
					got := resultsBytes(t, res)
					if want == nil {
						want = got
						return
					}
					if len(got) != len(want) {
						t.Errorf("%d cores: %d files, %d with 1", n, len(got), len(want))
					}
					for f, w := range want {
						if !bytes.Equal(got[f], w) {
							t.Errorf("%d cores: %s differs from the run on 1", n, f)
						}
					}
				}()
			}
		})
	}
}
