package enginetrace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestEngine checks the engine sniff: a string "engine" key of a JSON
// object, else "".
func TestEngine(t *testing.T) {
	for doc, want := range map[string]string{
		`{"engine": "beam", "steps": []}`:  "beam",
		`{"steps": [], "engine": "flink"}`: "flink",
		`{"steps": []}`:                    "",
		`{"engine": 5}`:                    "",
		`["engine"]`:                       "",
		`engine`:                           "",
		`{"engine": "beam"} trailing`:      "",
	} {
		if got := Engine([]byte(doc)); got != want {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
}

// TestMillis checks the two forms of a duration and the one-line errors.
func TestMillis(t *testing.T) {
	for raw, want := range map[string]int64{`120000`: 120000, `"2 minutes"`: 120000, `"1 second"`: 1000, `0`: 0} {
		if got, err := Millis(json.RawMessage(raw), "2 minutes"); err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", raw, got, err, want)
		}
	}
	for raw, want := range map[string]string{
		`1.5`:                 "1.5 is not a whole number: want a whole number of milliseconds from 0 to 2^53",
		`-1`:                  "-1 is negative",
		`9223372036854775807`: "9223372036854775807 is above 2^53",
		`true`:                `true: want a duration such as "2 minutes" or a number of milliseconds`,
		`"1 microsecond"`:     `"1 microsecond": want a non-negative whole number of milliseconds`,
	} {
		_, err := Millis(json.RawMessage(raw), "2 minutes")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", raw, err, want)
		}
	}
}

// TestWriteExplain checks that the warnings follow every rule, each group
// in its order.
func TestWriteExplain(t *testing.T) {
	var b strings.Builder
	if err := WriteExplain(&b, []string{"a", "warning: 1", "  b", "warning: 2", "c"}); err != nil {
		t.Fatal(err)
	}
	if want := "a\n  b\nc\nwarning: 1\nwarning: 2\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestPublish checks that Publish writes everything or nothing, names
// the trace in write's errors, and leaves no temporary file, for output
// held in memory and for output past spoolMemory.
func TestPublish(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	line := strings.Repeat("x", 1000)
	for _, n := range []int{0, 3, 3 * spoolMemory / 1000} {
		var out bytes.Buffer
		err := Publish(ctx, "t.json", &out, func(enc *json.Encoder) error {
			for range n {
				if err := enc.Encode(line + "<&>"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || out.Len() != n*(len(line)+len(`"<&>"`)+1) || (n > 0 && !strings.HasSuffix(out.String(), "x<&>\"\n")) {
			t.Errorf("%d lines: err %v, %d bytes", n, err, out.Len())
		}
		out.Reset()
		err = Publish(ctx, "t.json", &out, func(enc *json.Encoder) error {
			for range n {
				if err := enc.Encode(line); err != nil {
					return err
				}
			}
			return errors.New("steps[2]: bad")
		})
		if err == nil || err.Error() != "t.json: steps[2]: bad" || out.Len() != 0 {
			t.Errorf("%d lines then a failure: err %v, %d bytes written", n, err, out.Len())
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var out bytes.Buffer
	if err := Publish(cancelled, "t.json", &out, func(enc *json.Encoder) error { return enc.Encode(line) }); !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Errorf("cancelled: err %v, %d bytes", err, out.Len())
	}
}
