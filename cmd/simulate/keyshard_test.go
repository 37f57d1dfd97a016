package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// keyShardEnginesScenario has a Spark query beside every query of Kafka
// Streams and Beam that splits: stream time over three partitions and
// record time, keep-last, Beam in processing time, event time and fixed
// windows; a bad clock makes the watermark-bound ones lose events.
const keyShardEnginesScenario = `name: keysplit-engines
seed: 5
duration: 4m
trigger: 10s
workload:
  rate: 60/s
  ids: uuid
  customers: 1000
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.1
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 20s, p99: 3m}
    timestamp: restamp
faults:
  - {at: 2m, kind: bad-clock, skew: 5m}
queries:
  - name: spark-within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
  - name: kstreams-stream
    engine: kafka-streams
    window: 1 minute
    time: stream
    partitions: 3
  - name: kstreams-record
    engine: kafka-streams
    window: 1 minute
    time: record
  - name: kstreams-last
    engine: kafka-streams
    mode: keep-last
  - name: beam-processing
    engine: beam
    timeDomain: processing
    duration: 1 minute
  - name: beam-event
    engine: beam
    timeDomain: event
    duration: 1 minute
  - name: beam-fixed
    engine: beam
    timeDomain: event
    duration: 1 minute
    window: {fixed: 1 minute}
`

// keyShardSparkScenario is shardScenarioText (bad-clock rows, a restart
// and a lost checkpoint; pair-keyed, within-watermark and unbounded
// queries) with a chain of two dedups whose keys both hold event_id
// (one of them as EVENT_ID, which Spark matches ignoring case).
func keyShardSparkScenario() string {
	s := shardScenarioText()
	i := strings.Index(s, "faults:")
	return s[:i] + "  - name: chain\n    query: withWatermark(\"event_time\", \"1 minute\").dropDuplicates([\"event_id\", \"event_time\"]).dropDuplicatesWithinWatermark([\"EVENT_ID\", \"customer_id\"])\n" + s[i:]
}

// runParts runs sc split by key into n parts, dir/part-K, and returns
// their folders.
func runParts(t *testing.T, sc, dir string, n int, extra ...string) []string {
	t.Helper()
	var parts []string
	for k := range n {
		out := filepath.Join(dir, fmt.Sprintf("part-%d", k))
		args := append([]string{"run", sc, "--quiet", "--shard", fmt.Sprintf("%d/%d", k, n), "--out", out}, extra...)
		if code, _, errs := simulate(t, args...); code != 0 {
			t.Fatalf("part %d/%d: %s", k, n, errs)
		}
		parts = append(parts, out)
	}
	return parts
}

// partSummary reads the summary a part's shard.json holds.
func partSummary(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "shard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Split   string         `json:"split"`
		Summary map[string]any `json:"summary"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Split != "key" {
		t.Fatalf("%s: split %q, want key", dir, m.Split)
	}
	return m.Summary
}

// TestRunSplitByKeyMergesToTheRun runs a scenario whole, then split by key
// into 3 parts, merges the parts (given out of order) and compares every
// file of the merged folder with the whole run's (sameResults: summary.json
// counter for counter, the wall-clock fields aside; timeseries.csv row for
// row; every progress line; the report and charts, rendered again with
// the wall-clock fields zeroed). Each part must hold a real share of the
// events (within 40% of 1/N of them), so that the split is not one part
// doing everything.
func TestRunSplitByKeyMergesToTheRun(t *testing.T) {
	for _, c := range []struct {
		name, text string
		n          int
	}{
		{"spark", keyShardSparkScenario(), 3},
		{"engines", keyShardEnginesScenario, 3},
		{"sweep-block", smallScenario + "sweep: {delay: [1m, 2m]}\n", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sc := filepath.Join(dir, "sc.yaml")
			os.WriteFile(sc, []byte(c.text), 0o644)
			full := filepath.Join(dir, "full")
			if code, _, errs := simulate(t, "run", sc, "--quiet", "--out", full); code != 0 {
				t.Fatalf("run: %s", errs)
			}
			parts := runParts(t, sc, dir, c.n)
			merged := filepath.Join(dir, "merged")
			if code, _, errs := simulate(t, append(append([]string{"merge"}, reversed(parts)...), "--out", merged)...); code != 0 {
				t.Fatalf("merge: %s", errs)
			}
			sameResults(t, full, merged)
			if t.Failed() {
				t.Fatal("the merged parts differ from the whole run")
			}
			whole, err := os.ReadFile(filepath.Join(full, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var w struct {
				Queries []struct {
					Name          string  `json:"name"`
					LogicalEvents float64 `json:"logicalEvents"`
				} `json:"queries"`
			}
			json.Unmarshal(whole, &w)
			for k, p := range parts {
				qs := partSummary(t, p)["queries"].([]any)
				for i, q := range qs {
					got := q.(map[string]any)["logicalEvents"].(float64)
					if share := got / w.Queries[i].LogicalEvents * float64(c.n); share < 0.6 || share > 1.4 {
						t.Errorf("part %d/%d, query %s: %v of %v logical events (%.2f of a fair share)", k, c.n, w.Queries[i].Name, got, w.Queries[i].LogicalEvents, share)
					}
				}
			}
		})
	}
}

// TestProductionDaySplitInFour: the production day's scenario
// (experiments/production-day.yaml: 10,800 events/s, three queries, one
// of them unbounded) on a slice of 90 seconds, split by key into 4 parts
// and merged, gives the whole slice's counters, samples and progress
// lines. The whole day is measured in BENCHMARKS.md.
func TestProductionDaySplitInFour(t *testing.T) {
	data, err := os.ReadFile("../../experiments/production-day.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "duration: 24h", "duration: 90s", 1)
	if text == string(data) {
		t.Fatal("experiments/production-day.yaml has no duration: 24h to shorten")
	}
	dir := t.TempDir()
	sc := filepath.Join(dir, "day.yaml")
	os.WriteFile(sc, []byte(text), 0o644)
	full := filepath.Join(dir, "full")
	if code, _, errs := simulate(t, "run", sc, "--quiet", "--no-report", "--out", full); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	parts := runParts(t, sc, dir, 4, "--no-report")
	merged := filepath.Join(dir, "merged")
	if code, _, errs := simulate(t, append(append([]string{"merge", "--no-report"}, parts...), "--out", merged)...); code != 0 {
		t.Fatalf("merge: %s", errs)
	}
	sameResults(t, full, merged)
	sum, _ := os.ReadFile(filepath.Join(merged, "summary.json"))
	if strings.Count(string(sum), `"inputRows":`) != 3 || strings.Contains(string(sum), `"inputRows": 0,`) {
		t.Errorf("the merged slice lacks its three queries' rows:\n%.600s", sum)
	}
}

// TestRunShardRefuses: what cannot split by key is refused with one line
// saying why, a non-zero exit and nothing written.
func TestRunShardRefuses(t *testing.T) {
	dir := t.TempDir()
	with := func(name, queries, extra string) string {
		i := strings.Index(smallScenario, "queries:")
		sc := filepath.Join(dir, name+".yaml")
		os.WriteFile(sc, []byte(smallScenario[:i]+extra+"queries:\n"+queries), 0o644)
		return sc
	}
	plain := with("plain", "  - name: within\n    query: withWatermark(\"event_time\", \"1 minute\").dropDuplicatesWithinWatermark([\"event_id\"])\n", "")
	for _, c := range []struct {
		name string
		sc   string
		args []string
		want string
	}{
		{"key without event_id", with("customer", "  - name: by-customer\n    query: withWatermark(\"event_time\", \"1 minute\").dropDuplicatesWithinWatermark([\"customer_id\", \"event_time\"])\n", ""), nil,
			"--shard: query by-customer cannot split by key: dropDuplicatesWithinWatermark does not key on event_id, the column a run splits on"},
		{"watermark after a dedup", with("late-wm", "  - name: wm-after\n    query: dropDuplicates([\"event_id\"]).withWatermark(\"event_time\", \"1 minute\").dropDuplicatesWithinWatermark([\"event_id\"])\n", ""), nil,
			"--shard: query wm-after cannot split by key: a withWatermark follows a dedup, so its watermark depends on the verdicts of every key's rows"},
		{"flink", with("flink", "  - name: flink-first\n    engine: flink\n    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1\n    options: {table.exec.state.ttl: 1 min}\n", ""), nil,
			"--shard: query flink-first cannot split by key: the Flink heap state backend cleans expired entries incrementally"},
		{"spark block", with("spark", "  - name: within\n    query: withWatermark(\"event_time\", \"1 minute\").dropDuplicatesWithinWatermark([\"event_id\"])\n", "spark: {partitions: 3, provider: rocksdb, executors: 2, cost: {}}\n"), nil,
			"--shard: scenario "},
		{"checkpoint", plain, []string{"--checkpoint", filepath.Join(dir, "ck")}, "--shard: a shard cannot be resumable (no --checkpoint)"},
		{"bad spec", plain, []string{"--shard", "2/2"}, `--shard "2/2": K counts from 0`},
	} {
		out := filepath.Join(dir, "out")
		before := listing(t, dir)
		args := append([]string{"run", c.sc, "--quiet", "--out", out}, c.args...)
		if !slices.Contains(c.args, "--shard") {
			args = append(args, "--shard", "0/2")
		}
		code, stdout, stderr := simulate(t, args...)
		want := "simulate run: " + c.want
		if code == 0 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stderr %q; want a non-zero exit and one line starting %q", c.name, code, stderr, want)
		}
		if after := listing(t, dir); after != before {
			t.Errorf("%s: the refused run changed the folder:\n%s\nwas:\n%s", c.name, after, before)
		}
	}
}

// TestMergeRefusesKeyParts: the parts of a run split by key are refused
// as a sweep's shards are, one line and nothing written: a missing part,
// a part given twice, a part whose data changed after it was published,
// a part of another seed or scenario or N, and a sweep's shard among the
// parts.
func TestMergeRefusesKeyParts(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "sc.yaml")
	os.WriteFile(sc, []byte(smallScenario), 0o644)
	parts := runParts(t, sc, filepath.Join(dir, "a"), 3)
	part := func(name string, args ...string) string {
		out := filepath.Join(dir, name)
		if code, _, errs := simulate(t, append([]string{"run", "--quiet", "--out", out}, args...)...); code != 0 {
			t.Fatalf("%s: %s", name, errs)
		}
		return out
	}
	otherSeed := part("seed", sc, "--shard", "1/3", "--seed", "9")
	sc2 := filepath.Join(dir, "sc2.yaml")
	os.WriteFile(sc2, []byte(strings.Replace(smallScenario, "rate: 100/s", "rate: 90/s", 1)), 0o644)
	otherScenario := part("scenario", sc2, "--shard", "1/3")
	otherN := part("n", sc, "--shard", "1/2")
	sweepShard := filepath.Join(dir, "sweep")
	if code, _, errs := simulate(t, "sweep", sc, "--delay", "1m", "--quiet", "--shard", "1/3", "--out", sweepShard); code != 0 {
		t.Fatal(errs)
	}
	// Part 1/3 with a count edited in place (same size): the merge would
	// sum it into the results.
	edited := filepath.Join(dir, "edited")
	if err := os.CopyFS(edited, os.DirFS(parts[1])); err != nil {
		t.Fatal(err)
	}
	ts := filepath.Join("timeseries", "within.csv")
	data, err := os.ReadFile(filepath.Join(edited, ts))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndexAny(string(data), "123456789")
	data[i] = '0'
	os.WriteFile(filepath.Join(edited, ts), data, 0o644)
	code, _, stderr := simulate(t, "report", parts[0])
	if want := "simulate report: " + parts[0] + ": shard 0/3 of a run split by key, not a results folder: combine the shards first"; code == 0 || !strings.HasPrefix(stderr, want) {
		t.Errorf("report of a part: exit %d, stderr %q; want %q", code, stderr, want)
	}
	// Part 1/3 forged: a batch's input rows (which every part saw whole)
	// changed, and its checksum in shard.json with it, as if a part of
	// another run had been renamed. The merge finds it while summing.
	forged := filepath.Join(dir, "forged")
	if err := os.CopyFS(forged, os.DirFS(parts[1])); err != nil {
		t.Fatal(err)
	}
	fdata, _ := os.ReadFile(filepath.Join(forged, ts))
	oldSum := sha256.Sum256(fdata)
	oldLen := len(fdata)
	f := strings.SplitN(string(fdata), ",", 7)
	f[5] = "9" + f[5]
	fdata = []byte(strings.Join(f, ","))
	os.WriteFile(filepath.Join(forged, ts), fdata, 0o644)
	newSum := sha256.Sum256(fdata)
	mdata, _ := os.ReadFile(filepath.Join(forged, "shard.json"))
	mtext := strings.Replace(string(mdata), hex.EncodeToString(oldSum[:]), hex.EncodeToString(newSum[:]), 1)
	mtext = strings.Replace(mtext, fmt.Sprintf(`"bytes": %d,
          "sha256": "%s"`, oldLen, hex.EncodeToString(newSum[:])), fmt.Sprintf(`"bytes": %d,
          "sha256": "%s"`, len(fdata), hex.EncodeToString(newSum[:])), 1)
	if mtext == string(mdata) {
		t.Fatal("could not forge part 1/3's manifest")
	}
	os.WriteFile(filepath.Join(forged, "shard.json"), []byte(mtext), 0o644)
	for _, c := range []struct {
		name string
		dirs []string
		want string
	}{
		{"forged", []string{parts[0], forged, parts[2]}, filepath.Join(forged, ts) + ": row 1: batch 0's 9"},
		{"missing", []string{parts[0], parts[2]}, "missing shard 1/3: merge needs all 3 shard folders"},
		{"repeated", []string{parts[0], parts[1], parts[1], parts[2]}, parts[1] + " and " + parts[1] + " are both shard 1/3"},
		{"edited", []string{parts[0], edited, parts[2]}, filepath.Join(edited, ts) + ": "},
		{"seed", []string{parts[0], otherSeed, parts[2]}, otherSeed + ": seed 9, but " + parts[0] + " has seed 3"},
		{"scenario", []string{parts[0], otherScenario, parts[2]}, otherScenario + ": another scenario than " + parts[0] + "'s"},
		{"N", []string{parts[0], otherN, parts[2]}, otherN + ": shard 1/2, but " + parts[0] + " is shard 0/3"},
		{"sweep shard", []string{parts[0], sweepShard, parts[2]}, sweepShard + ": "},
	} {
		out := filepath.Join(dir, "merged-"+strings.ReplaceAll(c.name, " ", "-"))
		before := listing(t, dir)
		code, stdout, stderr := simulate(t, append(append([]string{"merge"}, c.dirs...), "--out", out)...)
		want := "simulate merge: " + c.want
		if code == 0 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stderr %q; want a non-zero exit and one line starting %q", c.name, code, stderr, want)
		}
		if after := listing(t, dir); after != before {
			t.Errorf("%s: the refused merge changed the folder", c.name)
		}
	}
}
