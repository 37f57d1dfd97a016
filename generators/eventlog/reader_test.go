package eventlog

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// got is a record's values, copied.
type got struct {
	ID, Extra      string
	Event, Arrival int64
	Row            int64
	File           string
}

func readAll(t *testing.T, spec Spec) ([]got, error) {
	t.Helper()
	r, err := Open(spec)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []got
	for r.Next() {
		rec := r.Record()
		g := got{ID: string(rec.ID), Event: rec.EventTime, Arrival: rec.Arrival, Row: rec.Row, File: filepath.Base(rec.File)}
		if len(rec.Extra) > 0 {
			g.Extra = string(rec.Extra[0])
		}
		out = append(out, g)
	}
	return out, r.Err()
}

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gz(t *testing.T, text string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(text))
	w.Close()
	return b.String()
}

func spec(path string) Spec {
	return Spec{Path: path, ID: []string{"id"}, EventTime: "et", ArrivalTime: "at", Extra: []string{"customer_id"}}
}

const (
	t0 = 1767225600000000 // 2026-01-01T00:00:00Z in µs
)

var want3 = []got{
	{ID: "a", Extra: "7", Event: t0, Arrival: t0 + 1_500_000, Row: 2},
	{ID: "b,c", Extra: "8", Event: t0 + 123456, Arrival: t0 + 2_000_000, Row: 3},
	{ID: "a", Extra: "7", Event: t0 - 3600e6, Arrival: t0 + 2_000_000, Row: 5},
}

const csv3 = "id,et,at,customer_id\r\n" +
	"a,2026-01-01T00:00:00Z,2026-01-01T00:00:01.5Z,7\n" +
	"\"b,c\",2026-01-01T00:00:00.123456789Z,2026-01-01T00:00:02Z,8\n" +
	"\n" +
	"a,2026-01-01T00:00:00+01:00,2026-01-01 00:00:02z,7\n"

func TestReadCSVAndGzip(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"plain.csv", "zipped.csv.gz", "zipped-no-suffix"} {
		text := csv3
		if name != "plain.csv" {
			text = gz(t, csv3)
		}
		rows, err := readAll(t, spec(write(t, dir, name, text)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range rows {
			rows[i].File = ""
		}
		if !reflect.DeepEqual(rows, want3) {
			t.Errorf("%s: got %+v\nwant %+v", name, rows, want3)
		}
	}
}

func TestReadJSONL(t *testing.T) {
	dir := t.TempDir()
	text := `{"id":"a","et":"2026-01-01T00:00:00Z","at":1767225601500,"customer_id":7,"x":{"y":[1,"}"]}}` + "\n" +
		`{"id":"b,c","et":"2026-01-01T00:00:00.123456Z","at":1767225602000,"customer_id":"8"}` + "\n\n" +
		`{"at":1767225602000,"customer_id":7,"id":"\u0061","et":"2025-12-31T23:00:00Z"}` + "\n"
	r, err := Open(Spec{Path: write(t, dir, "log.jsonl", text), ID: []string{"id"}, EventTime: "et", ArrivalTime: "at", Extra: []string{"customer_id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows []got
	for r.Next() {
		rec := r.Record()
		rows = append(rows, got{ID: string(rec.ID), Extra: string(rec.Extra[0]), Event: rec.EventTime, Arrival: rec.Arrival, Row: rec.Row})
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	want := []got{want3[0], want3[1], want3[2]}
	want[0].Row, want[1].Row, want[2].Row = 1, 2, 4
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("got %+v\nwant %+v", rows, want)
	}
	et, at, detected := r.Units()
	if et != UnitRFC3339 || at != UnitMillis || !detected {
		t.Errorf("units %q %q %v, want rfc3339 ms detected", et, at, detected)
	}
}

type pqRow struct {
	ID       string `parquet:"id"`
	ET       int64  `parquet:"et,timestamp(microsecond)"`
	AT       int64  `parquet:"at,timestamp(millisecond)"`
	Customer int64  `parquet:"customer_id"`
}

func parquetBytes(t *testing.T, rows []pqRow) []byte {
	var b bytes.Buffer
	w := parquet.NewGenericWriter[pqRow](&b)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadParquetFolder(t *testing.T) {
	dir := t.TempDir()
	a := parquetBytes(t, []pqRow{{"a", t0, (t0 + 1_500_000) / 1000, 7}, {"b,c", t0 + 123456, (t0 + 2_000_000) / 1000, 8}})
	b := parquetBytes(t, []pqRow{{"a", t0 - 3600e6, (t0 + 2_000_000) / 1000, 7}})
	write(t, dir, "part-0.parquet", string(a))
	write(t, dir, "part-1.parquet.gz", gz(t, string(b)))
	write(t, dir, "_SUCCESS", "")
	rows, err := readAll(t, spec(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := []got{want3[0], want3[1], want3[2]}
	want[0].Row, want[1].Row, want[2].Row = 0, 1, 0
	want[0].File, want[1].File, want[2].File = "part-0.parquet", "part-0.parquet", "part-1.parquet.gz"
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("got %+v\nwant %+v", rows, want)
	}
	// A truncated Parquet file is one line naming it.
	write(t, dir, "part-2.parquet", string(a[:len(a)-10]))
	_, err = readAll(t, spec(dir))
	wantErr(t, err, "part-2.parquet: a truncated or corrupt Parquet file")
}

func TestCompositeID(t *testing.T) {
	dir := t.TempDir()
	// ("ab","c") and ("a","bc") must not encode alike.
	p := write(t, dir, "c.csv", "k1,k2,et,at\nab,c,1,1\na,bc,1,1\n")
	r, err := Open(Spec{Path: p, ID: []string{"k1", "k2"}, EventTime: "et", ArrivalTime: "at"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ids []string
	for r.Next() {
		ids = append(ids, string(r.Record().ID))
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Errorf("composite ids %q collide", ids)
	}
}

func wantErr(t *testing.T, err error, prefix string) {
	t.Helper()
	var e *Error
	if err == nil || !errors.As(err, &e) {
		t.Fatalf("error %v, want an *Error starting %q", err, prefix)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, filepath.Dir(e.File)) || !strings.Contains(msg, prefix) || strings.Contains(msg, "\n") {
		t.Errorf("error %q, want one line with %q", msg, prefix)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	full := gz(t, csv3)
	for _, c := range []struct{ name, text, want string }{
		{"missing.csv", "id,et,customer_id\na,1,2\n", "missing.csv: line 1: column at: missing from the header"},
		{"badtime.csv", "id,et,at,customer_id\na,1,2,3\nb,xx,3,3\n", "badtime.csv: line 3: column et: cannot parse xx as a time"},
		{"badrfc.csv", "id,et,at,customer_id\na,2026-02-30T00:00:00Z,2,3\n", "badrfc.csv: line 2: column et: cannot parse 2026-02-30T00:00:00Z as a time"},
		{"emptyid.csv", "id,et,at,customer_id\n,1,2,3\n", "emptyid.csv: line 2: column id: an empty id"},
		{"order.csv", "id,et,at,customer_id\na,1,5,3\nb,1,4,3\n", "order.csv: line 3: column at: arrival"},
		{"norows.csv", "id,et,at,customer_id\n", "norows.csv: the log has no rows"},
		{"trunc.csv.gz", full[:len(full)-12], "trunc.csv.gz: line 6: a truncated or corrupt gzip file"},
		{"fields.csv", "id,et,at,customer_id\na,1,2\n", "fields.csv: line 2: has 3 fields, the header 4"},
		{"json.jsonl", "{\"id\":\"a\",\"et\":1,\"customer_id\":1}\n", "json.jsonl: line 1: column at: missing in this row"},
		{"null.jsonl", "{\"id\":null,\"at\":1,\"et\":1,\"customer_id\":1}\n", "null.jsonl: line 1: column id: null"},
		{"badjson.jsonl", "{\"id\":\"a\",\"at\":1,\"et\":1,\"customer_id\":1}\n{\"id\":\"a\" \"at\":1}\n", "badjson.jsonl: line 2: bad JSON at byte 11"},
		{"quote.csv", "id,et,at,customer_id\n\"a,1,2,3\n", "quote.csv: line 2: a quoted field is not closed"},
		{"nanos.csv", "id,et,at,customer_id\na,1767225600000000000,1,2\n", "nanos.csv: line 2: column et: cannot parse 1767225600000000000 as a time"},
		// A column or member read twice was taken silently (the first
		// column, the last member): which one the user meant is unknown.
		{"twice.csv", "id,et,at,et,customer_id\na,1,2,3,4\n", "twice.csv: line 1: column et: named twice in the header (columns 2 and 4)"},
		{"twice.jsonl", "{\"id\":\"a\",\"at\":1,\"et\":1,\"et\":5,\"customer_id\":1}\n", "twice.jsonl: line 1: member \"et\" given twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAll(t, spec(write(t, dir, c.name, c.text)))
			wantErr(t, err, c.want)
		})
	}
}
