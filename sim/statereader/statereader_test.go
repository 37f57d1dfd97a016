package statereader

import (
	"encoding/json"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
)

// TestDecodeShowsTimestamps checks that a key's event time is shown in
// RFC 3339 with microseconds, under the names the plan gives the key's
// columns, in key order.
func TestDecodeShowsTimestamps(t *testing.T) {
	p, err := planOf(`withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])`)
	if err != nil {
		t.Fatal(err)
	}
	n := p.Nodes[p.Dedups()[0]]
	var uuid [36]byte
	copy(uuid[:], "0b1e3c1a-0000-4000-8000-000000000001")
	rows := generators.Batch{IDs: generators.UUIDIDs, Rows: []generators.Row{{EventID: uuid, EventTime: 1_767_225_600_000_001}}}
	key := rows.AppendKey(nil, 0, n.KeyColumns)
	l, err := generators.NewKeyLayout(n.KeyColumns, len(key))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(decode(l, n, key))
	if want := `{"event_id":"0b1e3c1a-0000-4000-8000-000000000001","event_time":"2026-01-01T00:00:00.000001Z"}`; string(got) != want {
		t.Fatalf("decoded %s, want %s", got, want)
	}
}
