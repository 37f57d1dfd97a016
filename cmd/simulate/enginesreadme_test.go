package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// enginesSummary is the part of results/engines/summary.json the README
// quotes (cmd may not import metrics: TestImportMap).
type enginesSummary struct {
	Queries []struct {
		Name             string           `json:"name"`
		MissedDuplicates int64            `json:"missedDuplicates"`
		FalseDrops       int64            `json:"falseDrops"`
		PeakStateRows    int64            `json:"peakStateRows"`
		EngineCounters   map[string]int64 `json:"engineCounters"`
	} `json:"queries"`
}

// TestReadmeEnginesTableIsTheCommittedRun: the README's "Which engine
// loses what" table copies results/engines: its rows, in the summary's
// order, give each query's missed duplicates, false drops and peak state
// rows as the committed summary has them, and the counters it quotes are
// the summary's engine counters.
func TestReadmeEnginesTableIsTheCommittedRun(t *testing.T) {
	data, err := os.ReadFile("../../results/engines/summary.json")
	if err != nil {
		t.Fatal(err)
	}
	var s enginesSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "\n## Which engine loses what\n")
	if !ok {
		t.Fatal("README.md has no section Which engine loses what")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var rows [][]string
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| engine") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	if len(rows) != len(s.Queries) {
		t.Fatalf("the README's table has %d rows, results/engines %d queries", len(rows), len(s.Queries))
	}
	for i, q := range s.Queries {
		r := rows[i]
		count := func(n int64) string { return interval.Count(n) }
		if !strings.HasPrefix(r[1], count(q.MissedDuplicates)+" ") {
			t.Errorf("row %d (%s): missed duplicates %q, the summary %d", i, q.Name, r[1], q.MissedDuplicates)
		}
		if !strings.HasPrefix(r[2]+" ", count(q.FalseDrops)+" ") {
			t.Errorf("row %d (%s): false drops %q, the summary %d", i, q.Name, r[2], q.FalseDrops)
		}
		if r[3] != count(q.PeakStateRows) {
			t.Errorf("row %d (%s): peak state rows %q, the summary %d", i, q.Name, r[3], q.PeakStateRows)
		}
	}
	text := strings.Join(strings.Fields(sec), " ")
	for name, counter := range map[string]string{"flink-keep-first": "peakPhysicalStateRows", "kstreams-stream": "peakPhysicalStateRows", "kstreams-record": "droppedRecordsTotal"} {
		found := false
		for _, q := range s.Queries {
			if q.Name == name {
				found = true
				if v, ok := q.EngineCounters[counter]; !ok || !strings.Contains(text, interval.Count(v)) {
					t.Errorf("README.md does not quote %s's %s, %d", name, counter, v)
				}
			}
		}
		if !found {
			t.Errorf("results/engines has no query %s", name)
		}
	}
}
