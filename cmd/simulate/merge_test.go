package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shardScenarioText is killScenario with an unbounded query: bad-clock
// rows (markers that only a job's stream finds), a restart and a lost
// checkpoint, two watermarked queries and an unbounded one; swept over two
// delays it has five jobs.
func shardScenarioText() string {
	i := strings.Index(killScenario, "faults:")
	return killScenario[:i] + "  - name: unbounded\n    query: dropDuplicates([\"event_id\"])\n" + killScenario[i:]
}

// sweepShards runs the sweep of sc over delays as shards 0..n-1 into
// dir/shard-K, and returns the shard folders.
func sweepShards(t *testing.T, sc, dir, delays string, n int) []string {
	t.Helper()
	var shards []string
	for k := range n {
		out := filepath.Join(dir, fmt.Sprintf("shard-%d", k))
		if code, _, errs := simulate(t, "sweep", sc, "--delay", delays, "--quiet", "--shard", fmt.Sprintf("%d/%d", k, n), "--out", out); code != 0 {
			t.Fatalf("shard %d/%d: %s", k, n, errs)
		}
		shards = append(shards, out)
	}
	return shards
}

// TestShardedSweepMergesToTheSweep runs a sweep of five jobs unsharded,
// then as N = 1, 2, 3 and 7 shards (7: two shards own no job), merges the
// shards given in several orders, and compares every file of the merged
// folder with the unsharded sweep's (sameResults: byte for byte, the
// wall-clock fields aside, the reports rendered again with them zeroed).
// A spark: block (spark.csv) is merged too.
func TestShardedSweepMergesToTheSweep(t *testing.T) {
	for _, c := range []struct {
		name  string
		extra string
		ns    []int
	}{
		{"plain", "", []int{1, 2, 3, 7}},
		{"spark", "spark: {partitions: 3, provider: rocksdb, executors: 2, cost: {}}\n", []int{2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sc := filepath.Join(dir, "sc.yaml")
			os.WriteFile(sc, []byte(shardScenarioText()+c.extra), 0o644)
			full := filepath.Join(dir, "full")
			if code, _, errs := simulate(t, "sweep", sc, "--delay", "1m,3m", "--quiet", "--out", full); code != 0 {
				t.Fatalf("sweep: %s", errs)
			}
			sum, _ := os.ReadFile(filepath.Join(full, "summary.json"))
			if !strings.Contains(string(sum), `"kind": "bad-clock"`) || strings.Count(string(sum), `"inputRows":`) != 5 {
				t.Fatalf("the unsharded sweep lacks bad-clock markers or five jobs")
			}
			if _, err := os.Stat(filepath.Join(full, "spark.csv")); (err == nil) != (c.extra != "") {
				t.Fatalf("spark.csv present: %v, want %v", err == nil, c.extra != "")
			}
			for _, n := range c.ns {
				nd := filepath.Join(dir, fmt.Sprint(n))
				shards := sweepShards(t, sc, nd, "1m,3m", n)
				// The first merge renders the report; the others, in other
				// orders, write the data files only (sameResults then
				// compares those), to keep the test short.
				orders := [][]string{reversed(shards)}
				if n >= 3 {
					orders = append(orders, shards, append(slices.Clone(shards[1:]), shards[0]))
				}
				for i, order := range orders {
					merged := filepath.Join(nd, fmt.Sprintf("merged-%d", i))
					args := append(append([]string{"merge"}, order...), "--out", merged)
					if i > 0 {
						args = append(args, "--no-report")
					}
					if code, _, errs := simulate(t, args...); code != 0 {
						t.Fatalf("N=%d order %d: merge: %s", n, i, errs)
					}
					sameResults(t, full, merged)
					if t.Failed() {
						t.Fatalf("N=%d, shards in the order %v: the merged folder differs from the sweep's", n, order)
					}
				}
			}
		})
	}
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// TestShardsSplitTheJobs: the shards of N = 2, 3 and 7 own disjoint jobs
// that together are the five of the sweep, round-robin (job i in shard
// i mod N); a shard of no job is a folder with no job's files.
func TestShardsSplitTheJobs(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "sc.yaml")
	os.WriteFile(sc, []byte(smallScenario), 0o644)
	// smallScenario swept over three delays: within@1m, @2m, @3m, unbounded.
	names := []string{"within@1m", "within@2m", "within@3m", "unbounded"}
	for _, n := range []int{2, 3, 7} {
		shards := sweepShards(t, sc, filepath.Join(dir, fmt.Sprint(n)), "1m,2m,3m", n)
		seen := map[string]int{}
		for k, s := range shards {
			var m struct {
				Jobs []struct {
					Index    int    `json:"index"`
					FileName string `json:"fileName"`
				} `json:"jobs"`
				TotalJobs int `json:"totalJobs"`
			}
			data, err := os.ReadFile(filepath.Join(s, "shard.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if m.TotalJobs != 4 {
				t.Errorf("N=%d shard %d: totalJobs %d, want 4", n, k, m.TotalJobs)
			}
			ents, _ := os.ReadDir(filepath.Join(s, "progress"))
			if len(ents) != len(m.Jobs) {
				t.Errorf("N=%d shard %d: %d progress files for %d jobs", n, k, len(ents), len(m.Jobs))
			}
			for _, j := range m.Jobs {
				if j.Index%n != k || names[j.Index] != j.FileName {
					t.Errorf("N=%d: shard %d holds job %d (%s)", n, k, j.Index, j.FileName)
				}
				if _, err := os.Stat(filepath.Join(s, "timeseries", j.FileName+".csv")); err != nil {
					t.Errorf("N=%d shard %d: %v", n, k, err)
				}
				seen[j.FileName]++
			}
		}
		for _, name := range names {
			if seen[name] != 1 {
				t.Errorf("N=%d: job %s in %d shards, want 1", n, name, seen[name])
			}
		}
	}
}

// TestMergeRefuses: every refusal is one line naming what is wrong, a
// non-zero exit, and no output folder (or the existing one untouched).
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "sc.yaml")
	os.WriteFile(sc, []byte(smallScenario), 0o644)
	shards := sweepShards(t, sc, filepath.Join(dir, "a"), "1m,2m", 3)
	shard := func(name string, args ...string) string {
		out := filepath.Join(dir, name)
		if code, _, errs := simulate(t, append([]string{"sweep", "--quiet", "--out", out}, args...)...); code != 0 {
			t.Fatalf("%s: %s", name, errs)
		}
		return out
	}
	otherSeed := shard("seed", sc, "--delay", "1m,2m", "--shard", "1/3", "--seed", "9")
	otherSweep := shard("sweep", sc, "--delay", "1m,3m", "--shard", "1/3")
	sc2 := filepath.Join(dir, "sc2.yaml")
	os.WriteFile(sc2, []byte(strings.Replace(smallScenario, "rate: 100/s", "rate: 90/s", 1)), 0o644)
	otherScenario := shard("scenario", sc2, "--delay", "1m,2m", "--shard", "1/3")
	otherN := shard("n", sc, "--delay", "1m,2m", "--shard", "1/2")
	otherVersion := filepath.Join(dir, "version")
	os.CopyFS(otherVersion, os.DirFS(shards[1]))
	mf := filepath.Join(otherVersion, "shard.json")
	data, _ := os.ReadFile(mf)
	os.WriteFile(mf, []byte(strings.Replace(string(data), `"version": "`, `"version": "other `, 1)), 0o644)
	pebble := shard("pebble", sc, "--delay", "1m,2m", "--shard", "1/3", "--store", "pebble")
	// Shard 1/3 with one job file changed after it was published: cut to
	// a few lines, emptied, or a value edited in place (same size).
	tampered := func(name, rel string, change func([]byte) []byte) string {
		d := filepath.Join(dir, name)
		if err := os.CopyFS(d, os.DirFS(shards[1])); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(d, rel)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, change(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	var job1 struct {
		Jobs []struct{ FileName string } `json:"jobs"`
	}
	mdata, _ := os.ReadFile(filepath.Join(shards[1], "shard.json"))
	if err := json.Unmarshal(mdata, &job1); err != nil || len(job1.Jobs) == 0 {
		t.Fatalf("shard 1/3's manifest: %v, %d jobs", err, len(job1.Jobs))
	}
	ts := filepath.Join("timeseries", job1.Jobs[0].FileName+".csv")
	prog := filepath.Join("progress", job1.Jobs[0].FileName+".jsonl")
	cut := tampered("cut", ts, func(b []byte) []byte {
		lines := strings.SplitAfter(string(b), "\n")
		return []byte(strings.Join(lines[:len(lines)/2], ""))
	})
	emptied := tampered("emptied", prog, func([]byte) []byte { return nil })
	edited := tampered("edited", ts, func(b []byte) []byte {
		i := strings.LastIndexAny(string(b), "123456789")
		b[i] = '0'
		return b
	})
	full := filepath.Join(dir, "full")
	if code, _, errs := simulate(t, "sweep", sc, "--delay", "1m,2m", "--quiet", "--out", full); code != 0 {
		t.Fatal(errs)
	}
	notOurs := filepath.Join(dir, "notours")
	os.Mkdir(notOurs, 0o777)
	os.WriteFile(filepath.Join(notOurs, "keep.txt"), []byte("mine"), 0o644)

	for _, c := range []struct {
		name string
		dirs []string
		out  string
		want string
	}{
		{"missing", []string{shards[0], shards[2]}, "", "missing shard 1/3: merge needs all 3 shard folders"},
		{"duplicate", []string{shards[0], shards[1], shards[1], shards[2]}, "", shards[1] + " and " + shards[1] + " are both shard 1/3"},
		{"seed", []string{shards[0], otherSeed, shards[2]}, "", otherSeed + ": seed 9, but " + shards[0] + " has seed 3"},
		{"sweep", []string{shards[0], otherSweep, shards[2]}, "", otherSweep + ": sweep delays 1m,3m, but " + shards[0] + " has 1m,2m"},
		{"scenario", []string{shards[0], otherScenario, shards[2]}, "", otherScenario + ": another scenario than " + shards[0] + "'s"},
		{"N", []string{shards[0], otherN, shards[2]}, "", otherN + ": shard 1/2, but " + shards[0] + " is shard 0/3"},
		{"version", []string{shards[0], otherVersion, shards[2]}, "", otherVersion + ": written by dedupsim other "},
		{"results folder", []string{shards[0], full, shards[2]}, "", full + ": a results folder, not a shard"},
		{"other folder", []string{shards[0], notOurs, shards[2]}, "", notOurs + ": not a shard folder (it has no shard.json"},
		{"absent folder", []string{shards[0], filepath.Join(dir, "nope"), shards[2]}, "", filepath.Join(dir, "nope") + ": no such folder"},
		{"out not ours", shards, notOurs, notOurs + ": exists and is not a dedupsim results folder"},
		{"out is a shard", shards, shards[1], "--out " + shards[1] + ": is one of the shards"},
		{"cut", []string{shards[0], cut, shards[2]}, "", filepath.Join(cut, ts) + ": "},
		{"emptied", []string{shards[0], emptied, shards[2]}, "", filepath.Join(emptied, prog) + ": 0 bytes with SHA-256 "},
		{"edited", []string{shards[0], edited, shards[2]}, "", filepath.Join(edited, ts) + ": "},
		{"store", []string{shards[0], pebble, shards[2]}, "", pebble + ": run with --store pebble, but " + shards[0] + " with each query's own store"},
	} {
		out := c.out
		if out == "" {
			out = filepath.Join(dir, "merged-"+strings.ReplaceAll(c.name, " ", "-"))
		}
		before := listing(t, dir)
		code, stdout, stderr := simulate(t, append(append([]string{"merge"}, c.dirs...), "--out", out)...)
		want := "simulate merge: " + c.want
		if code == 0 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stderr %q; want a non-zero exit and one line starting %q", c.name, code, stderr, want)
		}
		if after := listing(t, dir); after != before {
			t.Errorf("%s: the refused merge changed the folder:\n%s\nwas:\n%s", c.name, after, before)
		}
	}
}

// TestShardFlagRefuses: a bad --shard, and --shard with --checkpoint, are
// refused with one line and nothing written.
func TestShardFlagRefuses(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "sc.yaml")
	os.WriteFile(sc, []byte(smallScenario), 0o644)
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "3/3"}, `--shard "3/3": K counts from 0, as JOB_COMPLETION_INDEX does: want K from 0 to 2`},
		{[]string{"--shard", "1/0"}, `--shard "1/0": want K/N`},
		{[]string{"--shard", "-1/2"}, `--shard "-1/2": want K/N`},
		{[]string{"--shard", "two"}, `--shard "two": want K/N`},
		{[]string{"--shard", "0/2", "--checkpoint", filepath.Join(dir, "ck")}, `--shard: a shard cannot be resumable`},
	} {
		code, _, stderr := simulate(t, append([]string{"sweep", sc, "--delay", "1m", "--quiet", "--out", out}, c.args...)...)
		want := "simulate sweep: " + c.want
		if code == 0 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want one line starting %q", c.args, code, stderr, want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%v: wrote %s", c.args, listing(t, dir))
		}
	}
}

// TestReportRefusesAShard: report takes a shard folder for what it is,
// not a results folder, and says to merge.
func TestReportRefusesAShard(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "sc.yaml")
	os.WriteFile(sc, []byte(smallScenario), 0o644)
	shards := sweepShards(t, sc, dir, "1m", 2)
	before := listing(t, dir)
	code, _, stderr := simulate(t, "report", shards[1])
	want := "simulate report: " + shards[1] + ": shard 1/2 of a sweep, not a results folder: combine the shards first"
	if code == 0 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want one line starting %q", code, stderr, want)
	}
	if listing(t, dir) != before {
		t.Error("report changed the shard")
	}
}

// TestMergeRefusesOtherInputs: two machines whose scenario files are the
// same but whose empirical distribution files (same name, same number of
// lines) differ make shards the merge refuses; with the same files it
// merges them.
func TestMergeRefusesOtherInputs(t *testing.T) {
	dir := t.TempDir()
	text := strings.Replace(smallScenario, "{dist: uniform, min: 1s, max: 20s}", "{dist: empirical, file: delays.csv}", 1)
	var scs []string
	for i, delays := range []string{"2s\n5s\n9s\n", "2s\n5s\n19s\n", "2s\n5s\n9s\n"} {
		d := filepath.Join(dir, fmt.Sprintf("machine-%d", i))
		os.Mkdir(d, 0o777)
		os.WriteFile(filepath.Join(d, "delays.csv"), []byte(delays), 0o644)
		os.WriteFile(filepath.Join(d, "sc.yaml"), []byte(text), 0o644)
		scs = append(scs, filepath.Join(d, "sc.yaml"))
	}
	shard := func(sc, spec string) string {
		out := filepath.Join(filepath.Dir(sc), "shard")
		if code, _, errs := simulate(t, "sweep", sc, "--delay", "1m,2m", "--quiet", "--shard", spec, "--out", out); code != 0 {
			t.Fatalf("%s: %s", sc, errs)
		}
		return out
	}
	s0, other, same := shard(scs[0], "0/2"), shard(scs[1], "1/2"), shard(scs[2], "1/2")
	out := filepath.Join(dir, "merged")
	code, _, stderr := simulate(t, "merge", s0, other, "--out", out)
	want := "simulate merge: " + other + ": the scenario's input files (empirical distributions) differ from " + s0 + "'s"
	if code == 0 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want one line starting %q", code, stderr, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused merge wrote its folder")
	}
	if code, _, errs := simulate(t, "merge", s0, same, "--out", out, "--no-report", "--quiet"); code != 0 { // merge accepts --quiet
		t.Errorf("the same inputs on two machines: %s", errs)
	}
}
