package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("a", 100)
	cases := []struct{ in, want string }{
		{"my run", `"my run"`},
		{"\x1b[31mred\x1b[0m", `"\x1b[31mred\x1b[0m"`},
		{"tab\there", `"tab\there"`},
		{"bad \xff byte", `"bad \xff byte"`},
		{long, `"` + long[:80] + `"...`},
		{strings.Repeat("é", 81), `"` + strings.Repeat("é", 80) + `"...`},
		{strings.Repeat("a", 80), `"` + strings.Repeat("a", 80) + `"`},
	}
	for _, c := range cases {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := QuoteN("root:x:0:0:root:/root:/bin/bash", 8); got != `"root:x:0"...` {
		t.Errorf("QuoteN(_, 8) = %s", got)
	}
}

func TestShow(t *testing.T) {
	cases := []struct{ in, want string }{
		{"redis", "redis"},
		{"../escape", "../escape"},
		{"", `""`},
		{"my run", `"my run"`},
		{"it's", `"it's"`},
		{`back\slash`, `"back\\slash"`},
		{"esc\x1b[2J", `"esc\x1b[2J"`},
		{"nbsp\u00a0", `"nbsp\u00a0"`},
		{strings.Repeat("b", 81), `"` + strings.Repeat("b", 80) + `"...`},
	}
	for _, c := range cases {
		if got := Show(c.in); got != c.want {
			t.Errorf("Show(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestClean(t *testing.T) {
	long := strings.Repeat("x", 200)
	cases := []struct{ in, want string }{
		{`query: unknown operator "foo" at offset 3`, `query: unknown operator "foo" at offset 3`},
		{`query: unknown operator ` + strconv.Quote(long) + ` at offset 0`,
			`query: unknown operator "` + long[:80] + `"... at offset 0`},
		{"open /tmp/\x1b[31m: no such file", `open /tmp/\x1b[31m: no such file`},
		{"line\nbreak\r", `line\nbreak\r`},
		{"bad \xff", `bad \xff`},
		{`a lone " quote`, `a lone " quote`},
		{`short "\x1b" literal`, `short "\x1b" literal`},
	}
	for _, c := range cases {
		if got := Clean(c.in); got != c.want {
			t.Errorf("Clean(%q)\n = %s\nwant %s", c.in, got, c.want)
		}
	}
	huge := strings.Repeat("word ", 1000)
	if got := Clean(huge); utf8.RuneCountInString(got) != MaxMessage+3 || !strings.HasSuffix(got, "...") {
		t.Errorf("Clean of a %d-character message kept %d characters", len(huge), utf8.RuneCountInString(got))
	}
}

// FuzzClean checks the promises of Clean and Quote on any text: one line,
// only printable characters, bounded length, and Clean is idempotent.
// Interesting inputs live in testdata/fuzz/FuzzClean.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31m", `"` + strings.Repeat("a", 90) + `"`, "\xff\xfe", `"\x1b"` + "\n", `"unterminated`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Clean": Clean(s), "Quote": Quote(s), "Show": Show(s)} {
			for _, r := range out {
				if !unicode.IsPrint(r) && r != ' ' {
					t.Fatalf("%s(%q) = %q holds %U", name, s, out, r)
				}
			}
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q is not valid UTF-8", name, s, out)
			}
		}
		c := Clean(s)
		if utf8.RuneCountInString(c) > MaxMessage+3 {
			t.Fatalf("Clean kept %d characters", utf8.RuneCountInString(c))
		}
		if again := Clean(c); again != c {
			t.Fatalf("Clean is not idempotent on %q: %q then %q", s, c, again)
		}
		// A quoted value unquotes to a prefix of the value.
		q := Quote(s)
		lit, err := strconv.QuotedPrefix(q)
		if err != nil {
			t.Fatalf("Quote(%q) = %s does not start with a literal: %v", s, q, err)
		}
		v, _ := strconv.Unquote(lit)
		if !strings.HasPrefix(s, v) || utf8.RuneCountInString(v) > MaxEcho || (v != s) != strings.HasSuffix(q, `"...`) {
			t.Fatalf("Quote(%q) = %s", s, q)
		}
	})
}

func TestReasonLeavesOutThePath(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte("12345"), 0o600)
	_, tooLarge := ReadFile(big, 4)
	_, missing := ReadFile(filepath.Join(dir, "missing"), 4)
	_, folder := ReadFile(dir, 4)
	cases := []struct {
		err  error
		want string
	}{
		{tooLarge, "larger than 4 B, the limit for this file"},
		{missing, "no such file or directory"},
		{folder, "not a regular file (a folder)"},
		{errors.New("other"), "other"},
	}
	for _, c := range cases {
		if got := Reason(c.err); got != c.want {
			t.Errorf("Reason(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
