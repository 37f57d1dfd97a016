package flink

import (
	"strconv"
	"strings"
	"testing"
)

// TestCompactStep: a compact step is RocksDB's; on the heap backend the
// trace is refused in one line naming the step and the option. On RocksDB
// the replay drops the expired flag at the compaction (physical 1 -> 0)
// while the logical count was already 0.
func TestCompactStep(t *testing.T) {
	const heap = `{"engine": "flink", "query": {"keys": ["id"], "order": "proctime", "keep": "first"}, "options": {"table.exec.state.ttl": "10 ms"}, "steps": [{"element": {"id": "a"}}, {"compact": true}]}`
	if _, err := Load([]byte(heap)); err == nil || !strings.Contains(err.Error(), `steps[1].compact: a compaction is RocksDB's`) {
		t.Errorf("compact on heap: %v", err)
	}
	rocks := strings.Replace(heap, `"10 ms"}`, `"10 ms", "state.backend.type": "rocksdb", "`+OptQueryTimeAfter+`": 1}`, 1)
	rocks = strings.Replace(rocks, `{"compact": true}`, `{"ttlTime": 10}, {"compact": true}`, 1)
	tr, err := Load([]byte(rocks))
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.Config(); !c.RocksDB || c.QueryTimeAfterNumEntries != 1 {
		t.Fatalf("config %+v", c)
	}
	lines, err := Run(tr)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, l := range lines {
		got += itoa(l.LogicalState) + "/" + itoa(l.PhysicalState) + " "
	}
	if got != "1/1 0/1 0/0 " {
		t.Errorf("logical/physical per step %q, want %q", got, "1/1 0/1 0/0 ")
	}
	bad := strings.Replace(rocks, `": 1}`, `": 0}`, 1)
	if _, err := Load([]byte(bad)); err == nil || !strings.Contains(err.Error(), "option "+OptQueryTimeAfter+`: "0": want a whole number of entries above 0`) {
		t.Errorf("query-time-after 0: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestExplainRocksDB: explain names RocksDB's cleanup and its bytes.
func TestExplainRocksDB(t *testing.T) {
	text, err := Explain(keepFirstSQL, DefaultTimeAttributes, map[string]string{OptStateBackend: "rocksdb", OptStateTTL: "1 min"}, NewestVersion(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TTL compaction filter", "every 1000 entries", "no incremental cleanup on RocksDB", "backend: RocksDB"} {
		if !strings.Contains(text, want) {
			t.Errorf("explain lacks %q:\n%s", want, text)
		}
	}
}
