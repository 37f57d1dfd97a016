package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// stateScenario has a key of two columns (a UUID and a timestamp) with
// expiries, one of integer ids without, and one with a watermark on
// ingest_time.
const stateScenario = `# state command tests
name: state
seed: 4
duration: 3m
workload:
  rate: 100/s
  retries:
    probability: 0.1
    delay: {dist: uniform, min: 1s, max: 20s}
    timestamp: restamp
queries:
  - name: pair
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
  - name: customers
    query: dropDuplicates(["customer_id", "attempt"])
`

// treeHashes hashes every file and folder under dir.
func treeHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			out[rel] = "dir"
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameHashes(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d files before, %d after", what, len(a), len(b))
	}
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: %s changed or vanished", what, k)
		}
	}
}

// stateJSON is the part of `state --format json` the tests read.
type stateJSON struct {
	Kind    string
	Queries []struct {
		Name                 string
		Dir                  string
		LastCommittedBatchID *int64 `json:"lastCommittedBatchId"`
		WatermarkMs          *int64
		Operators            []struct {
			Name         string
			KeyColumns   []string
			HasExpiresAt bool
			BatchID      *int64
			NumRows      int64
			Rows         []struct {
				Key       map[string]any
				ExpiresAt string
			}
		}
	}
}

// sortable renders a decoded key column so that text order is value
// order for the values of the tests: UUIDs, RFC 3339 times and
// non-negative integers (numbers from JSON, zero-padded).
func sortable(v any) string {
	if f, ok := v.(float64); ok {
		return fmt.Sprintf("%020.0f", f)
	}
	return fmt.Sprint(v)
}

func readStateJSON(t *testing.T, args ...string) stateJSON {
	t.Helper()
	code, out, errs := simulate(t, append([]string{"state", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("state %v: exit %d: %s", args, code, errs)
	}
	var st stateJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("state %v: %v\n%s", args, err, out)
	}
	return st
}

// TestStateReadsRunCheckpoints runs a scenario with --checkpoint on both
// backends and reads the state back: the counts match the run's summary,
// keys come decoded and in order, and the folder is left as it was.
func TestStateReadsRunCheckpoints(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "state.yaml")
	os.WriteFile(sc, []byte(stateScenario), 0o644)
	for _, store := range []string{"memory", "pebble"} {
		t.Run(store, func(t *testing.T) {
			ck, out := filepath.Join(dir, store+"-ck"), filepath.Join(dir, store+"-out")
			if code, _, errs := simulate(t, "run", sc, "--quiet", "--no-report", "--store", store, "--checkpoint", ck, "--out", out); code != 0 {
				t.Fatalf("run: exit %d: %s", code, errs)
			}
			var sum struct {
				Queries []struct {
					Name           string
					FinalStateRows int64
					Batches        int64
				}
			}
			data, _ := os.ReadFile(filepath.Join(out, "summary.json"))
			if err := json.Unmarshal(data, &sum); err != nil {
				t.Fatal(err)
			}
			before := treeHashes(t, ck)

			st := readStateJSON(t, ck, "--limit", "5")
			if st.Kind != "run" || len(st.Queries) != 3 {
				t.Fatalf("kind %q, %d queries", st.Kind, len(st.Queries))
			}
			byName := map[string]int{}
			for i, q := range st.Queries {
				byName[q.Name] = i
			}
			for _, want := range sum.Queries {
				q := st.Queries[byName[want.Name]]
				if q.Name != want.Name || len(q.Operators) != 1 {
					t.Fatalf("query %s: got %s with %d operators", want.Name, q.Name, len(q.Operators))
				}
				o := q.Operators[0]
				if o.NumRows != want.FinalStateRows {
					t.Errorf("%s: %d rows in state, the run ended with %d", want.Name, o.NumRows, want.FinalStateRows)
				}
				if q.LastCommittedBatchID == nil || *q.LastCommittedBatchID != want.Batches-1 || o.BatchID == nil || *o.BatchID != want.Batches-1 {
					t.Errorf("%s: last committed batch %v, state batch %v; the run ran %d batches", want.Name, q.LastCommittedBatchID, o.BatchID, want.Batches)
				}
				if (q.WatermarkMs != nil) != (want.Name != "customers") {
					t.Errorf("%s: watermark %v", want.Name, q.WatermarkMs)
				}
				if len(o.Rows) != min(5, int(o.NumRows)) {
					t.Errorf("%s: %d rows listed of %d, limit 5", want.Name, len(o.Rows), o.NumRows)
				}
				prev := ""
				for _, r := range o.Rows {
					if len(r.Key) != len(o.KeyColumns) {
						t.Fatalf("%s: key %v, columns %v", want.Name, r.Key, o.KeyColumns)
					}
					var parts []string
					for _, c := range o.KeyColumns {
						parts = append(parts, sortable(r.Key[c]))
					}
					cur := strings.Join(parts, "|")
					if cur <= prev {
						t.Errorf("%s: rows out of key order: %s after %s", want.Name, cur, prev)
					}
					prev = cur
					if (r.ExpiresAt != "") != o.HasExpiresAt {
						t.Errorf("%s: expiresAt %q, hasExpiresAt %v", want.Name, r.ExpiresAt, o.HasExpiresAt)
					}
				}
			}
			pair := st.Queries[byName["pair"]].Operators[0]
			if pair.Name != "dedupe" || !pair.HasExpiresAt || len(pair.Rows) == 0 {
				t.Fatalf("pair: %+v", pair)
			}
			id, _ := pair.Rows[0].Key["event_id"].(string)
			et, _ := pair.Rows[0].Key["event_time"].(string)
			if len(id) != 36 || !strings.HasPrefix(et, "20") || len(et) != len("2026-01-01T00:00:00.000000Z") || pair.Rows[0].ExpiresAt != et {
				t.Errorf("pair row decoded as %v, expiresAt %s", pair.Rows[0].Key, pair.Rows[0].ExpiresAt)
			}
			if st.Queries[byName["customers"]].Operators[0].HasExpiresAt {
				t.Error("customers: a dedupe without the event time in its keys has no expiry")
			}

			// One query, a query checkpoint, the table: same counts.
			one := readStateJSON(t, ck, "--query", "within", "--limit", "-1")
			within := st.Queries[byName["within"]]
			if len(one.Queries) != 1 || int64(len(one.Queries[0].Operators[0].Rows)) != within.Operators[0].NumRows {
				t.Fatalf("--query within --limit -1: %d queries", len(one.Queries))
			}
			q := readStateJSON(t, within.Dir, "--limit", "0")
			if q.Kind != "query" || q.Queries[0].Operators[0].NumRows != within.Operators[0].NumRows || len(q.Queries[0].Operators[0].Rows) != 0 {
				t.Fatalf("query checkpoint read differs")
			}
			code, table, errs := simulate(t, "state", ck, "--limit", "2")
			if code != 0 || !strings.Contains(table, fmt.Sprintf("operator 0 dedupeWithinWatermark on [event_id]: %s rows at batch", interval.Count(within.Operators[0].NumRows))) || !strings.Contains(table, "expiresAt") {
				t.Fatalf("table: exit %d, %s\n%s", code, errs, table)
			}
			// Counts print with thousands separators, as everywhere.
			if n := within.Operators[0].NumRows; n < 1000 || strings.Contains(table, fmt.Sprintf(" %d rows", n)) {
				t.Errorf("table: %d rows not printed with thousands separators (or too few to tell):\n%s", n, table)
			}
			sameHashes(t, "state", before, treeHashes(t, ck))
		})
	}
}

// TestStateRefusesWhatIsNotACheckpoint: a foreign folder, a foreign file
// and a corrupted state file each give one line naming the file, nothing on
// stdout, and leave the folder as it was.
func TestStateRefusesWhatIsNotACheckpoint(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "state.yaml")
	os.WriteFile(sc, []byte(smallScenario), 0o644)
	ck := filepath.Join(dir, "ck")
	if code, _, errs := simulate(t, "run", sc, "--quiet", "--no-report", "--checkpoint", ck, "--out", filepath.Join(dir, "out")); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	st := readStateJSON(t, ck, "--query", "within")
	stateDir := filepath.Join(st.Queries[0].Dir, "state", "0")
	// The file the last version is read from: its snapshot if one was
	// written at that version, else the delta log holding its delta (the
	// newest log starting at or before it; the delta is its last record).
	v := *st.Queries[0].LastCommittedBatchID + 1
	corrupt := filepath.Join(stateDir, fmt.Sprintf("%d.snapshot", v))
	if _, err := os.Stat(corrupt); err != nil {
		for u := v; u > 0; u-- {
			corrupt = filepath.Join(stateDir, fmt.Sprintf("%d.log", u))
			if _, err := os.Stat(corrupt); err == nil {
				break
			}
		}
	}

	foreign := filepath.Join(dir, "photos")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "cat.jpg"), []byte("meow"), 0o644)
	cases := []struct {
		name, dir, want string
		damage          func() error
	}{
		{"foreign folder", foreign, foreign, func() error { return nil }},
		{"missing folder", filepath.Join(dir, "nope"), filepath.Join(dir, "nope"), func() error { return nil }},
		{"truncated state file", ck, corrupt, func() error {
			data, err := os.ReadFile(corrupt)
			if err != nil {
				return err
			}
			return os.WriteFile(corrupt, data[:len(data)-3], 0o644)
		}},
		{"foreign file in a query checkpoint", st.Queries[0].Dir, filepath.Join(st.Queries[0].Dir, "notes.txt"), func() error {
			return os.WriteFile(filepath.Join(st.Queries[0].Dir, "notes.txt"), nil, 0o644)
		}},
		{"foreign file in the run checkpoint", ck, filepath.Join(ck, "README"), func() error {
			return os.WriteFile(filepath.Join(ck, "README"), nil, 0o644)
		}},
	}
	for _, c := range cases {
		if err := c.damage(); err != nil {
			t.Fatal(err)
		}
		var before map[string]string
		if _, err := os.Stat(c.dir); err == nil {
			before = treeHashes(t, c.dir)
		}
		code, out, errs := simulate(t, "state", c.dir)
		if code == 0 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want one line naming %s", c.name, code, out, errs, c.want)
		}
		if before != nil {
			sameHashes(t, c.name, before, treeHashes(t, c.dir))
		}
	}
}
