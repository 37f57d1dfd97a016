package statereader

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/chain"
)

func node(t *testing.T, query string) chain.Node {
	t.Helper()
	p, err := planOf(query)
	if err != nil {
		t.Fatal(err)
	}
	return p.Nodes[p.Dedups()[0]]
}

// TestKeyLayoutAndOrder decodes the keys generators.Batch.AppendKey
// encodes, with UUID and integer event ids, and orders them by value.
func TestKeyLayoutAndOrder(t *testing.T) {
	n := node(t, `withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])`)
	var uuid [36]byte
	copy(uuid[:], "0b1e3c1a-0000-4000-8000-000000000001")
	rows := generators.Batch{IDs: generators.UUIDIDs, Rows: []generators.Row{{EventID: uuid, EventTime: 1_767_225_600_000_001}}}
	key := rows.AppendKey(nil, 0, n.KeyColumns)
	l, err := layoutFor(n, len(key))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(l.decode(key))
	if want := `{"event_id":"0b1e3c1a-0000-4000-8000-000000000001","event_time":"2026-01-01T00:00:00.000001Z"}`; string(got) != want {
		t.Fatalf("decoded %s, want %s", got, want)
	}

	ints := generators.Batch{IDs: generators.IntIDs, Rows: []generators.Row{
		{EventNum: 5, EventTime: -3}, {EventNum: -1, EventTime: 7}, {EventNum: 5, EventTime: -4},
	}}
	var keys [][]byte
	for i := range ints.Rows {
		keys = append(keys, ints.AppendKey(nil, i, n.KeyColumns))
	}
	l, err = layoutFor(n, len(keys[0]))
	if err != nil || l.width[0] != 8 {
		t.Fatalf("integer ids: layout %+v, %v", l, err)
	}
	a, b, c := l.sortKey(nil, keys[0]), l.sortKey(nil, keys[1]), l.sortKey(nil, keys[2])
	// -1 before 5; at the same id, -4 before -3.
	if !(bytes.Compare(b, c) < 0 && bytes.Compare(c, a) < 0) {
		t.Fatal("sort keys do not order by value")
	}
	if id := l.decode(keys[1])[0].Value; id != int64(-1) {
		t.Fatalf("event_id decoded as %v", id)
	}

	if _, err := layoutFor(n, 20); err == nil || !strings.Contains(err.Error(), "20 bytes") {
		t.Fatalf("a key of no layout: %v", err)
	}
	c2 := node(t, `dropDuplicates(["customer_id"])`)
	if _, err := layoutFor(c2, 9); err == nil {
		t.Fatal("a 9-byte customer_id key was accepted")
	}
	if l, err := layoutFor(c2, 8); err != nil || l.decode(binary.BigEndian.AppendUint64(nil, 42))[0].Value != int64(42) {
		t.Fatalf("customer_id: %v", err)
	}
}
