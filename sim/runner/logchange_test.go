package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogCutBetweenPassesFails: a log cut short after the loader's first
// pass (mid-row, as a file being rewritten) gave results on the rows before
// the cut, exit 0: the shared stream checked the source's error only while
// its context was live, and the group's context is cancelled once every job
// returns; a job reading its own source (a resumable run) never checked it.
// Since the first pass keeps the rows it parsed (the second pass replays
// them, not the file), a run after the cut is the run of the log as it was
// first read, whole; where it reads the file again it fails naming the log.
// Every query kind, with and without a checkpoint: never the rows before
// the cut.
func TestLogCutBetweenPassesFails(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "events.csv")
	whole := filepath.Join(dir, "whole.csv")
	var b strings.Builder
	b.WriteString("event_id,event_time,ingest_time\n")
	for i := range 3000 {
		ms := int64(1772366400000) + int64(i)*100
		fmt.Fprintf(&b, "id%d,%d,%d\n", i, ms, ms)
		if i%10 == 0 {
			fmt.Fprintf(&b, "id%d,%d,%d\n", i, ms, ms)
		}
	}
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, queries := range []string{
		"  - {name: w, query: 'withWatermark(\"event_time\", \"30 seconds\").dropDuplicatesWithinWatermark([\"event_id\"])'}\n",
		"  - {name: w, query: 'withWatermark(\"event_time\", \"30 seconds\").dropDuplicatesWithinWatermark([\"event_id\"])'}\n  - {name: u, query: 'dropDuplicates([\"event_id\"])'}\n",
		"  - {name: k, engine: kafka-streams, window: 1m}\n",
	} {
		os.WriteFile(log, []byte(b.String()), 0o644)
		os.WriteFile(whole, []byte(b.String()), 0o644)
		scenarioOf := func(file string) string {
			return "name: cut\ntrigger: 10s\nworkload:\n  events: {file: " + file + ", id: event_id, eventTime: event_time, arrivalTime: ingest_time}\nqueries:\n" + queries
		}
		ref, err := runOpts(t, load(t, scenarioOf(whole)), Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		sc := load(t, scenarioOf(log))
		if err := os.Truncate(log, int64(b.Len()/2)); err != nil {
			t.Fatal(err)
		}
		cks := []string{"", filepath.Join(t.TempDir(), "ck")}
		if strings.Contains(queries, "kafka-streams") {
			cks = cks[:1] // a row engine's query runs without a checkpoint only
		}
		for _, ck := range cks {
			res, err := runOpts(t, sc, Options{Workers: 2, CheckpointDir: ck})
			if err == nil {
				for i, q := range res.Summary.Queries {
					r := ref.Summary.Queries[i]
					if q.InputRows != r.InputRows || q.TrueDuplicates != r.TrueDuplicates || q.MissedDuplicates != r.MissedDuplicates || q.FalseDrops != r.FalseDrops {
						t.Errorf("%d queries, checkpoint %q: a log cut after its first pass ran on %d input rows, %d duplicates, %d missed, %d lost; the log as first read gives %d, %d, %d, %d",
							strings.Count(queries, "name:"), ck, q.InputRows, q.TrueDuplicates, q.MissedDuplicates, q.FalseDrops, r.InputRows, r.TrueDuplicates, r.MissedDuplicates, r.FalseDrops)
					}
				}
			} else if !strings.Contains(err.Error(), "the log changed since it was first read") {
				t.Errorf("%d queries, checkpoint %q: %v: want the log named as changed", strings.Count(queries, "name:"), ck, err)
			}
		}
	}
}
