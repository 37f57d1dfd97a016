package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fourEnginesSweep has a query of each engine; its own horizons (1 hour)
// are all replaced by the swept values.
const fourEnginesSweep = smallScenario + `  - name: flink
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1
    options: {table.exec.state.ttl: 1 h}
  - name: kstreams
    engine: kafka-streams
    window: 1 hour
  - name: beam
    engine: beam
    duration: 1 hour
`

// TestSweepEveryEnginesHorizon runs `simulate sweep --delay` on a
// scenario with a Spark, a Flink, a Kafka Streams and a Beam query: each
// query with a horizon gets a job per delay, named NAME@DELAY, with the
// delay in the summary; the horizon sets what is missed (the short
// horizons of the uniform 1s-20s retry gap miss copies, the long ones
// none, whatever the query's own 1 hour); two runs with different workers
// write the same bytes; the report draws the horizon tradeoff; and a
// delay an engine refuses (0s) is one line naming it, writing nothing.
func TestSweepEveryEnginesHorizon(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "four.yaml")
	if err := os.WriteFile(sc, []byte(fourEnginesSweep), 0o644); err != nil {
		t.Fatal(err)
	}
	var files [2][]byte
	for i, w := range []string{"1", "3"} {
		out := filepath.Join(dir, "out"+w)
		if code, _, errs := simulate(t, "sweep", sc, "--delay", "2s,10s,40s", "--quiet", "--workers", w, "--out", out); code != 0 {
			t.Fatalf("sweep: exit %d: %s", code, errs)
		}
		entries, err := os.ReadDir(filepath.Join(out, "progress"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
			data, err := os.ReadFile(filepath.Join(out, "progress", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[i] = append(files[i], data...)
		}
		var want []string
		for _, q := range []string{"beam", "flink", "kstreams", "within"} {
			for _, d := range []string{"10s", "2s", "40s"} {
				want = append(want, q+"@"+d+".jsonl")
			}
		}
		want = append(want, "unbounded.jsonl")
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("progress files %v, want %v", names, want)
		}
		ts, err := os.ReadFile(filepath.Join(out, "timeseries.csv"))
		if err != nil {
			t.Fatal(err)
		}
		files[i] = append(files[i], ts...)
		if _, err := os.Stat(filepath.Join(out, "horizon-tradeoff.png")); err != nil {
			t.Errorf("no horizon-tradeoff chart: %v", err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("timeseries.csv or a progress file differs between 1 and 3 workers")
	}
	var sum struct {
		Queries []struct {
			Name, Engine     string
			Delay            *float64
			MissedDuplicates int64
			TrueDuplicates   int64
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "out1", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	missed := map[string][]int64{}
	for _, q := range sum.Queries {
		if q.Name == "unbounded" {
			continue
		}
		if q.Delay == nil || *q.Delay != []float64{2, 10, 40}[len(missed[q.Name])] {
			t.Errorf("%s job %d: delay %v", q.Name, len(missed[q.Name]), q.Delay)
		}
		missed[q.Name] = append(missed[q.Name], q.MissedDuplicates)
	}
	// The retry gap is 1s to 20s: a 2s horizon misses copies, a 40s one
	// misses none (Kafka Streams keeps a copy for W/2 of stream time, so
	// 40s covers 20s too); Spark's within-watermark keeps 2 x delay.
	for _, name := range []string{"flink", "kstreams", "beam"} {
		m := missed[name]
		if len(m) != 3 || m[0] == 0 || m[2] != 0 || m[1] > m[0] {
			t.Errorf("%s: missed %v at 2s, 10s, 40s; want many at 2s, none at 40s", name, m)
		}
	}

	refused := filepath.Join(dir, "refused")
	code, stdout, errs := simulate(t, "sweep", sc, "--delay", "0s,1m", "--quiet", "--out", refused)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code == 0 || stdout != "" || len(lines) != 3 || !strings.Contains(lines[0], "sweep.delay[0]: sets options.table.exec.state.ttl of queries[2] (a flink query), which must") {
		t.Errorf("sweep with 0s: exit %d, %q; want three lines, the first about Flink's TTL", code, errs)
	}
	if _, err := os.Stat(refused); !os.IsNotExist(err) {
		t.Error("a refused sweep wrote its folder")
	}
}
