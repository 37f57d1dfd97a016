package compare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// The exit codes of the CLI command that compares (see the package doc).
const (
	// ExitEqual: every batch on both sides, every compared field the
	// same.
	ExitEqual = 0
	// ExitDifferent: at least one difference.
	ExitDifferent = 1
	// ExitBadInput: an input that cannot be read or is not what it
	// should be.
	ExitBadInput = 2
)

// ExitCode returns the exit code for the outcome of CompareFiles:
// ExitBadInput when err is not nil, else ExitEqual or ExitDifferent.
func ExitCode(r *Result, err error) int {
	switch {
	case err != nil:
		return ExitBadInput
	case r.Equal():
		return ExitEqual
	}
	return ExitDifferent
}

// maxEcho is how many characters of a name from the records a message
// echoes.
const maxEcho = 80

// Verdict sums r up in one line:
//
//	equal: 3 queries, 412 batches, every counter matches
//	different: query within, first at batch 17 (stateOperators[0].numRowsRemoved 210 expected, 208 actual); 5 of 412 batches differ
//
// The different form names the first query (in the order of
// Result.Queries) with a difference, its first differing batch and that
// batch's first difference (", and N more" when the batch has more), and
// ends with ", in N of M queries" when more than one query was compared.
func (r *Result) Verdict() string {
	nq := len(r.Queries)
	if r.Equal() {
		return fmt.Sprintf("equal: %s, %s, every counter matches",
			plural(nq, "query", "queries"), plural(r.Counts.Batches, "batch", "batches"))
	}
	var first *QueryResult
	differing := 0
	for i := range r.Queries {
		if r.Queries[i].Counts.Different > 0 {
			differing++
			if first == nil {
				first = &r.Queries[i]
			}
		}
	}
	d := &first.Differences[0]
	more := 0
	for _, o := range first.Differences[1:] {
		if o.BatchID == d.BatchID {
			more++
		}
	}
	detail := describe(d)
	if more > 0 {
		detail += fmt.Sprintf(", and %d more", more)
	}
	verb := "differ"
	if r.Counts.Different == 1 {
		verb = "differs"
	}
	noun := "batches"
	if r.Counts.Batches == 1 {
		noun = "batch"
	}
	s := fmt.Sprintf("different: query %s, first at batch %d (%s); %s of %s %s %s",
		first.Label(), d.BatchID, detail, interval.Count(int64(r.Counts.Different)), interval.Count(int64(r.Counts.Batches)), noun, verb)
	if nq > 1 {
		s += fmt.Sprintf(", in %d of %d queries", differing, nq)
	}
	return s
}

// describe renders a difference for the verdict: "missing in actual",
// or "FIELD EXPECTED expected, ACTUAL actual".
func describe(d *Difference) string {
	if d.Kind != Changed {
		return d.Kind.String()
	}
	field := d.Field
	if field == "stateOperators" {
		field = "number of stateOperators"
	}
	return fmt.Sprintf("%s %s expected, %s actual", field, cell(d.Expected.String(), maxEcho), cell(d.Actual.String(), maxEcho))
}

// plain reports whether s can be echoed as is: printable ASCII without
// spaces, quotes or backslashes.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '\\' {
			return false
		}
	}
	return true
}

// show renders a name from the records in at most n columns (n >= 8):
// as is when it is plain (see plain) and short enough, else quoted with
// every character that is not printable ASCII escaped
// (strconv.QuoteToASCII), and cut with "..." when still too long. Its
// output is ASCII, so its length is its width.
func show(s string, n int) string {
	if plain(s) && len(s) <= n {
		return s
	}
	return quoteCut(s, n)
}

// cell renders a value in at most n columns: as is when it is printable
// ASCII (spaces allowed) and short enough, else as show renders it.
func cell(s string, n int) string {
	ok := len(s) <= n
	for i := 0; ok && i < len(s); i++ {
		ok = s[i] >= ' ' && s[i] < 0x7f
	}
	if ok {
		return s
	}
	return quoteCut(s, n)
}

// quoteCut quotes s as strconv.QuoteToASCII does, cut at a character's
// boundary so that the result, "..." included, takes at most n columns.
func quoteCut(s string, n int) string {
	if q := strconv.QuoteToASCII(s); len(q) <= n {
		return q
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		size := 1
		for size < 4 && i+size < len(s) && !startsRune(s[i+size]) {
			size++
		}
		q := strconv.QuoteToASCII(s[i : i+size])
		q = q[1 : len(q)-1]
		if b.Len()+len(q)+len(`"...`) > n {
			break
		}
		b.WriteString(q)
		i += size
	}
	b.WriteString(`"...`)
	return b.String()
}

// startsRune reports whether c can start a UTF-8 sequence.
func startsRune(c byte) bool { return c&0xC0 != 0x80 }
