package enginetrace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// Flags is the part of a command's flag set an engine's explain binds
// its flags to (*pflag.FlagSet has these methods).
type Flags interface {
	StringVar(p *string, name, value, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
	StringArrayVar(p *[]string, name string, value []string, usage string)
}

// ExplainFunc explains one query of an engine to w; nothing is written on
// an error.
type ExplainFunc func(w io.Writer, query string) error

// WriteExplain writes explain's lines to w, one a line: the rules first,
// then the lines starting "warning:", each group in its order.
func WriteExplain(w io.Writer, lines []string) error {
	var rules, warnings []string
	for _, l := range lines {
		if strings.HasPrefix(l, "warning:") {
			warnings = append(warnings, l)
		} else {
			rules = append(rules, l)
		}
	}
	_, err := io.WriteString(w, strings.Join(append(rules, warnings...), "\n")+"\n")
	return err
}

// EncodeLines encodes every line with enc, in order.
func EncodeLines[L any](enc *json.Encoder, lines []L) error {
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return err
		}
	}
	return nil
}

// Publish runs write with a JSON encoder (HTML escaping off unless write
// turns it on) and copies what it encoded to w only once write returned
// nil: a failure or a cancelled ctx writes nothing. The output is held in
// memory up to spoolMemory bytes and spooled to a temporary file beyond,
// so memory does not grow with the trace. Errors from write name the
// trace (name) once; a cancelled ctx returns ctx.Err().
func Publish(ctx context.Context, name string, w io.Writer, write func(enc *json.Encoder) error) error {
	sp := &spool{}
	defer sp.remove()
	bw := bufio.NewWriter(sp)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := write(enc); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %w", fileio.ShowPath(name), err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("replay output: %w", err)
	}
	var r io.Reader = &sp.mem
	if sp.f != nil {
		if _, err := sp.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("replay output: %w", err)
		}
		r = sp.f
	}
	_, err := io.Copy(w, ctxReader{ctx, r})
	return err
}

// spoolMemory is how much output Publish holds in memory before it moves
// it to a temporary file.
const spoolMemory = 1 << 20

// spool holds what it is written in memory, then, past spoolMemory bytes,
// in a temporary file.
type spool struct {
	mem bytes.Buffer
	f   *os.File
}

func (s *spool) Write(p []byte) (int, error) {
	if s.f == nil && s.mem.Len()+len(p) <= spoolMemory {
		return s.mem.Write(p)
	}
	if s.f == nil {
		f, err := os.CreateTemp("", "dedupsim-replay-out-")
		if err != nil {
			return 0, err
		}
		s.f = f
		if _, err := s.mem.WriteTo(f); err != nil {
			return 0, err
		}
	}
	return s.f.Write(p)
}

func (s *spool) remove() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
	}
}

// ctxReader reads r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Replayer returns an engine's replay (the registry's Engine.Replay) for an
// engine whose run returns all its lines: it parses the trace with load,
// runs it with run and encodes each line.
func Replayer[T, L any](load func([]byte) (T, error), run func(T) ([]L, error)) func(context.Context, []byte, *json.Encoder) error {
	return func(_ context.Context, data []byte, enc *json.Encoder) error {
		t, err := load(data)
		if err != nil {
			return err
		}
		lines, err := run(t)
		if err != nil {
			return err
		}
		return EncodeLines(enc, lines)
	}
}

// Explain parses query with load and writes the lines explain returns for
// it (WriteExplain): an engine's explain, for an engine whose queries are
// JSON objects.
func Explain[T any](w io.Writer, query string, load func([]byte) (T, error), explain func(T) []string) error {
	t, err := load([]byte(query))
	if err != nil {
		return err
	}
	return WriteExplain(w, explain(t))
}

// QueryExplainer returns an engine's explainer (the registry's
// Engine.Explainer) for an engine whose queries are JSON objects and that
// binds no flags: it parses the query with load and writes what explain
// returns for it.
func QueryExplainer[T any](load func([]byte) (T, error), explain func(T) []string) func(Flags) ExplainFunc {
	return func(Flags) ExplainFunc {
		return func(w io.Writer, query string) error { return Explain(w, query, load, explain) }
	}
}
