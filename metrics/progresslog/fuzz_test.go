package progresslog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzReader checks that no input makes the Reader panic, return a
// record without the id and runId it was recognised by, or an error that
// is not one printable line naming the source and a line of the input.
// Its seeds are in testdata/fuzz/FuzzReader.
func FuzzReader(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte("[" + minimal + "," + minimal + "]"))
	f.Add([]byte("x Streaming query made progress: {\n\"id\" : \"q\",\n\"runId\" : \"r\",\n\"batchId\" : 3\n}\ny\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte{'\n'}) + 1
		r := NewReader(bytes.NewReader(data), "fuzz")
		last := 0
		for {
			p, err := r.Next()
			if err == io.EOF {
				if last == 0 {
					t.Fatal("io.EOF without a record")
				}
				break
			}
			if err != nil {
				checkError(t, err, lines)
				if _, again := r.Next(); again != err {
					t.Fatalf("error %v, then %v", err, again)
				}
				break
			}
			if p.Line < last || p.Line < 1 || p.Line > lines {
				t.Fatalf("record on line %d after one on line %d, in %d lines", p.Line, last, lines)
			}
			last = p.Line
			if r.Form() == Unknown {
				t.Fatal("a record from an input of unknown form")
			}
		}
	})
}

// checkError checks that err is an *Error on one printable line naming
// the source and a line of the input.
func checkError(t *testing.T, err error, lines int) {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v, want *Error", err, err)
	}
	msg := err.Error()
	if pe.Line < 1 || pe.Line > lines {
		t.Fatalf("error on line %d of %d: %s", pe.Line, lines, msg)
	}
	if !strings.HasPrefix(msg, fmt.Sprintf("fuzz: line %d: ", pe.Line)) {
		t.Fatalf("message %q does not start with the source and line", msg)
	}
	// Invalid UTF-8 is escaped; a real U+FFFD prints as itself.
	for i := 0; i < len(msg); {
		c, size := utf8.DecodeRuneInString(msg[i:])
		if c == utf8.RuneError && size == 1 || !unicode.IsPrint(c) && c != ' ' {
			t.Fatalf("message holds %q: %q", msg[i:i+size], msg)
		}
		i += size
	}
	// Want, a field path, and an echo of at most MaxEcho characters,
	// each escaped in at most 10 (\U0010ffff).
	if n := len([]rune(msg)); n > len(Want)+200+10*MaxEcho {
		t.Fatalf("message of %d characters: %s", n, msg)
	}
}
