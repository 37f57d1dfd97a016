package runner

import (
	"strings"
	"testing"
)

// TestOpenFilesNeeded counts the files a run's Pebble stores keep open:
// a store per dedup operator and shuffle partition, for the jobs open at
// once.
func TestOpenFilesNeeded(t *testing.T) {
	sc := load(t, strings.Replace(fast, "queries:\n", "spark: {partitions: 100}\nqueries:\n  - {name: two, query: 'dropDuplicates([\"event_id\"])'}\n", 1))
	jobs, err := Jobs(sc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs {
		jobs[i].Store = "pebble"
	}
	need, largest, _ := openFilesNeeded(sc, jobs, 1, false)
	if want := int64(2*100*pebbleFilesPerStore + baseOpenFiles); need != want || largest != 100*pebbleFilesPerStore {
		t.Fatalf("two jobs at once: %d (largest %d), want %d", need, largest, want)
	}
	if need, _, _ := openFilesNeeded(sc, jobs, 1, true); need != 100*pebbleFilesPerStore+baseOpenFiles {
		t.Fatalf("one worker, resumable: %d", need)
	}
	jobs[0].Store = "memory"
	if need, _, job := openFilesNeeded(sc, jobs, 2, false); need != 100*pebbleFilesPerStore+baseOpenFiles || job != jobs[1].FileName {
		t.Fatalf("one Pebble job: %d, %s", need, job)
	}
}
