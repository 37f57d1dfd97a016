package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mixedStateScenario is stateScenario with the within-watermark query on
// Pebble, the other two in memory.
var mixedStateScenario = strings.Replace(stateScenario,
	"dropDuplicatesWithinWatermark([\"event_id\"])\n",
	"dropDuplicatesWithinWatermark([\"event_id\"])\n    store: pebble\n", 1)

// summaryStores returns the store of each query of a results folder, by
// name, and each query's final state rows.
func summaryStores(t *testing.T, out string) (map[string]string, map[string]int64) {
	t.Helper()
	var sum struct {
		Queries []struct {
			Name           string
			Store          string
			FinalStateRows int64
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	stores, rows := map[string]string{}, map[string]int64{}
	for _, q := range sum.Queries {
		stores[q.Name], rows[q.Name] = q.Store, q.FinalStateRows
	}
	return stores, rows
}

// TestStoreFlagBeatsQueryStores: without --store each query runs on its
// own store (the table shows a store column); --store puts every query
// on the one named (and the table is as before).
func TestStoreFlagBeatsQueryStores(t *testing.T) {
	if !strings.Contains(mixedStateScenario, "store: pebble") {
		t.Fatal("the scenario has no query on pebble")
	}
	sc := writeScenario(t, mixedStateScenario)
	for _, c := range []struct {
		flag []string
		want map[string]string
	}{
		{nil, map[string]string{"pair": "memory", "within": "pebble", "customers": "memory"}},
		{[]string{"--store", "memory"}, map[string]string{"pair": "memory", "within": "memory", "customers": "memory"}},
		{[]string{"--store", "pebble"}, map[string]string{"pair": "pebble", "within": "pebble", "customers": "pebble"}},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"run", sc, "--quiet", "--no-report", "--out", out}, c.flag...)
		code, stdout, errs := simulate(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.flag, code, errs)
		}
		got, _ := summaryStores(t, out)
		for name, w := range c.want {
			if got[name] != w {
				t.Errorf("%v: %s ran on %s, want %s", c.flag, name, got[name], w)
			}
		}
		header, _, _ := strings.Cut(stdout, "\n")
		if hasCol := strings.Fields(header)[1] == "store"; hasCol != (c.flag == nil) {
			t.Errorf("%v: table header %q; a store column only when the queries' stores differ", c.flag, header)
		}
	}
}

// TestStateReadsMixedCheckpoint: `simulate state` on the checkpoint of a
// run whose queries ran on different stores opens each query's state
// with its own backend.
func TestStateReadsMixedCheckpoint(t *testing.T) {
	sc := writeScenario(t, mixedStateScenario)
	dir := t.TempDir()
	ck, out := filepath.Join(dir, "ck"), filepath.Join(dir, "out")
	if code, _, errs := simulate(t, "run", sc, "--quiet", "--no-report", "--checkpoint", ck, "--out", out); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	stores, rows := summaryStores(t, out)
	code, stdout, errs := simulate(t, "state", "--format", "json", ck, "--limit", "3")
	if code != 0 {
		t.Fatalf("state: exit %d: %s", code, errs)
	}
	var st struct {
		Queries []struct {
			Name      string
			Store     string
			Operators []struct{ NumRows int64 }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	seen := map[string]bool{}
	for _, q := range st.Queries {
		seen[q.Store] = true
		if q.Store != stores[q.Name] {
			t.Errorf("%s: state reads store %s, the run used %s", q.Name, q.Store, stores[q.Name])
		}
		if len(q.Operators) != 1 || q.Operators[0].NumRows != rows[q.Name] || rows[q.Name] == 0 {
			t.Errorf("%s: operators %+v, the run ended with %d rows", q.Name, q.Operators, rows[q.Name])
		}
	}
	if len(st.Queries) != 3 || !seen["memory"] || !seen["pebble"] {
		t.Fatalf("state read %d queries on stores %v, want 3 on memory and pebble", len(st.Queries), seen)
	}
	code, text, errs := simulate(t, "state", ck)
	if code != 0 {
		t.Fatalf("state: exit %d: %s", code, errs)
	}
	for _, w := range []string{"store memory, ", "store pebble, "} {
		if !strings.Contains(text, w) {
			t.Errorf("state's text lacks %q:\n%s", w, text)
		}
	}
}

// TestKillMixedStoresThenResume kills `simulate run --checkpoint` of a
// scenario whose queries run on different stores (pair on Pebble, within
// in memory) with SIGKILL, resumes it with the same command, and compares
// every data file with an uninterrupted run's.
func TestKillMixedStoresThenResume(t *testing.T) {
	text := strings.Replace(killScenario,
		"dropDuplicates([\"event_id\", \"event_time\"])\n",
		"dropDuplicates([\"event_id\", \"event_time\"])\n    store: pebble\n", 1)
	if text == killScenario {
		t.Fatal("the scenario has no query on pebble")
	}
	sc := writeScenario(t, text)
	ref := filepath.Join(t.TempDir(), "ref")
	if code, p := runProc(t, "", "", "run", sc, "--quiet", "--out", ref); code != 0 {
		t.Fatalf("reference run: exit %d: %s", code, p.stderr.String())
	}
	if got, _ := summaryStores(t, ref); got["pair"] != "pebble" || got["within"] != "memory" {
		t.Fatalf("the reference ran on %v", got)
	}
	for _, p := range killPoints("pebble") {
		t.Run(p.name, func(t *testing.T) {
			k := newKillRun(t, sc, "memory", false)
			// No --store: each query's own store.
			i := slices.Index(k.args, "--store")
			if i < 0 {
				t.Fatal("newKillRun passes no --store")
			}
			k.args = slices.Delete(k.args, i, i+2)
			k.killAt(t, p.hooks, p.wait)
			k.resume(t)
			sameResults(t, ref, k.out)
		})
	}
}
