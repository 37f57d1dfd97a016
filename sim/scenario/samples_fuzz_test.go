package scenario

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/dedupsim/dedupsim/generators/randvar"
)

// FuzzParseSamples checks the empirical CSV parser on any file: it never
// panics (an unbalanced quote once did); what it accepts is sorted and
// every value is valid; what it rejects is one printable line naming the
// file, echoing at most maxSampleEcho characters of the file. Interesting
// inputs live in testdata/fuzz/FuzzParseSamples. Run it with
//
//	go test ./sim/scenario -run '^$' -fuzz FuzzParseSamples -fuzztime 60s
func FuzzParseSamples(f *testing.F) {
	for _, s := range []string{"1s\n2s\n", "# c\n\n30s,x\n", "\"1s\n2s\n", "a\"b\n", "1\n2\n3\n", "-1s\n", "1e400\n", "\"1s\"\"\"\n", "\xff\x1b[2J\n"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, counts bool) {
		const name = "d.csv"
		out, err := parseSamples(bytes.NewReader(data), name, counts)
		if err == nil {
			if len(out) == 0 || !slices.IsSorted(out) {
				t.Fatalf("samples %v", out)
			}
			for _, v := range out {
				if msg := randvar.SampleProblem(v, counts); msg != "" {
					t.Fatalf("accepted %g: must be %s", v, msg)
				}
			}
			return
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, name+": ") || strings.Contains(msg, "\n") {
			t.Fatalf("message %q", msg)
		}
		for _, r := range msg {
			if !unicode.IsPrint(r) {
				t.Fatalf("message holds %U: %q", r, msg)
			}
		}
		// The echo is the quoted excerpt after "got ", if any.
		if _, echo, ok := strings.Cut(msg, `, got "`); ok && len(echo) > 4*maxSampleEcho+8 {
			t.Fatalf("message echoes %d bytes: %q", len(echo), msg)
		}
	})
}
