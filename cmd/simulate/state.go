package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/statereader"
)

func newStateCmd(stdout io.Writer) *cobra.Command {
	var (
		query  string
		limit  int
		format string
	)
	cmd := &cobra.Command{
		Use:   "state DIR",
		Short: "Print the dedup state a checkpoint holds: keys, expiries, counts",
		Long: `state reads a checkpoint the way Spark's state data source
(spark.read.format("statestore")) reads a query's: for every dedup operator of
the query, the number of keys in its state, the batch that state belongs to and
the first keys in key order, decoded into their columns (event times in RFC 3339
with microseconds), with expiresAt where the operator has one
(dropDuplicatesWithinWatermark always; dropDuplicates when the watermarked event
time is one of its keys), and each key's shuffle partition: the store it lives
in when the run had a spark: block (state/<op>/<partition>/, checked against
Spark's hash of the key), else where Spark's hash puts it among the default 200
partitions. The query's watermark comes from its commit log.

DIR is a run checkpoint (the folder of simulate run --checkpoint, with one
query checkpoint per query) or a single query checkpoint (a folder with a
metadata file, its batch log and state/). The state shown is that of the
last committed batch.

--limit -1 lists every key. The state is read twice then: once to check every
key (its encoding, and its partition against Spark's hash), before anything is
printed, and once more as the keys are printed, so that memory stays flat
however many keys the state holds (a memory store's state is loaded whole
either way).

state never modifies the folder. A folder that is not a checkpoint, a file that
does not belong in it, or a corrupted state file is rejected with one line
naming the file, and nothing is printed.`,
		Example: `  simulate run experiments/quickstart.yaml --checkpoint /tmp/ck --out /tmp/quickstart
  simulate state /tmp/ck
  simulate state /tmp/ck --query within-watermark --limit 5
  simulate state /tmp/ck/within-watermark/query.0 --format json`,
		Args: oneArg("one run checkpoint folder (simulate run --checkpoint DIR)", "simulate state /tmp/ck"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" {
				return fmt.Errorf("--format %q: want table or json", format)
			}
			var st *statereader.State
			err := interruptible(cmd.Context(), func() (err error) {
				st, err = statereader.Read(args[0], statereader.Options{Query: query, Limit: limit})
				return err
			})
			if err != nil {
				return err
			}
			// Print only once every key was read and checked: a failure
			// of the checks prints nothing. With --limit -1 the rows are
			// read again as they are printed, a few at a time.
			bw := bufio.NewWriterSize(stdout, 64<<10)
			err = interruptible(cmd.Context(), func() error {
				if format == "json" {
					return writeStateJSON(cmd.Context(), bw, st)
				}
				return writeStateTable(cmd.Context(), bw, st)
			})
			if err != nil {
				return err
			}
			return bw.Flush()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&query, "query", "", "in a run checkpoint, read only this query (its folder name; default: every query)")
	fl.IntVar(&limit, "limit", statereader.DefaultLimit, "keys listed per operator, the first in key order; -1 lists every key, reading them as they are printed")
	fl.StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

// writeStateJSON writes st as json.MarshalIndent(st, "", "  ") lays it
// out, with a newline, without holding every row: st is marshalled with
// each operator's rows left out ("rows": null, which is nowhere else in
// the text: in a JSON string a quote is escaped), and each operator's
// rows are written in their place one at a time, indented as
// MarshalIndent indents them. It stops at the first row once ctx is done.
func writeStateJSON(ctx context.Context, w *bufio.Writer, st *statereader.State) error {
	bare := *st
	bare.Queries = slices.Clone(st.Queries)
	var ops []*statereader.Operator
	for i := range bare.Queries {
		q := &bare.Queries[i]
		q.Operators = slices.Clone(q.Operators)
		for j := range q.Operators {
			ops = append(ops, &st.Queries[i].Operators[j])
			q.Operators[j].Rows = nil
		}
	}
	data, err := json.MarshalIndent(&bare, "", "  ")
	if err != nil {
		return err
	}
	const rowsKey, null = `"rows": `, "null"
	for _, o := range ops {
		at := bytes.Index(data, []byte(rowsKey+null))
		if at < 0 {
			return fmt.Errorf("state json: operator %d of %s: its rows are not in the text", o.ID, st.Dir)
		}
		w.Write(data[:at+len(rowsKey)])
		indent := string(data[bytes.LastIndexByte(data[:at], '\n')+1 : at])
		inner := indent + "  "
		n := 0
		err := o.EachRow(func(r statereader.Row) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			row, err := json.MarshalIndent(r, inner, "  ")
			if err != nil {
				return err
			}
			if n == 0 {
				w.WriteString("[\n")
			} else {
				w.WriteString(",\n")
			}
			n++
			w.WriteString(inner)
			_, err = w.Write(row)
			return err
		})
		if err != nil {
			return err
		}
		if n == 0 {
			w.WriteString("[]")
		} else {
			w.WriteString("\n" + indent + "]")
		}
		data = data[at+len(rowsKey)+len(null):]
	}
	w.Write(data)
	return w.WriteByte('\n')
}

// writeStateTable renders st for the terminal: a few lines per query and
// per operator, and a table of each operator's listed keys. It stops at
// the first row once ctx is done.
func writeStateTable(ctx context.Context, w io.Writer, st *statereader.State) error {
	for i, q := range st.Queries {
		if i > 0 {
			fmt.Fprintln(w)
		}
		name := q.Name
		if name == "" {
			name = q.Dir
		}
		fmt.Fprintf(w, "query %s", name)
		if q.Name != "" && q.Dir != "" {
			fmt.Fprintf(w, " (%s)", q.Dir)
		}
		fmt.Fprintln(w)
		if q.Note != "" {
			fmt.Fprintf(w, "  %s\n", q.Note)
			continue
		}
		fmt.Fprintf(w, "  %s\n", q.Query)
		last := "none"
		if q.LastCommittedBatch != nil {
			last = strconv.FormatInt(*q.LastCommittedBatch, 10)
		}
		fmt.Fprintf(w, "  store %s, last committed batch %s", q.Store, last)
		if q.Partitions > 0 {
			fmt.Fprintf(w, ", state in %d partitions", q.Partitions)
		}
		if q.WatermarkMs != nil {
			fmt.Fprintf(w, ", watermark %s", q.Watermark)
		}
		fmt.Fprintln(w)
		for j := range q.Operators {
			o := &q.Operators[j]
			batch := "before the first batch"
			if o.BatchID != nil {
				batch = fmt.Sprintf("at batch %d", *o.BatchID)
			}
			fmt.Fprintf(w, "  operator %d %s on [%s]: %s rows %s", o.ID, o.Name, strings.Join(o.KeyColumns, ", "), interval.Count(o.NumRows), batch)
			if n := o.Listed(); n > 0 && n < o.NumRows {
				fmt.Fprintf(w, ", the first %s by key", interval.Count(n))
			}
			fmt.Fprintln(w)
			if o.Note != "" {
				fmt.Fprintf(w, "  note: %s\n", o.Note)
			}
			if o.Listed() == 0 {
				continue
			}
			if err := rowsTable(ctx, w, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// rowsTable writes an operator's listed keys as a table: one column per
// key column, expiresAt, and the key's partition. It draws the table
// tablewriter draws (WithHeaderAutoFormat and both auto-wraps off: a
// header centred, cells left-aligned, a space either side, light box
// lines) without holding the rows: a first pass over them measures the
// columns, a second writes each row as it comes. The cells are ASCII
// (UUIDs, numbers, RFC 3339 times); a width is measured as tablewriter
// measures it all the same.
func rowsTable(ctx context.Context, w io.Writer, o *statereader.Operator) error {
	header := append([]string(nil), o.KeyColumns...)
	if o.HasExpiresAt {
		header = append(header, "expiresAt")
	}
	header = append(header, "partition")
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = cellWidth(h)
	}
	cells := make([]string, len(header))
	fill := func(r statereader.Row) []string {
		cells = cells[:0]
		for _, c := range r.Key {
			switch v := c.Value.(type) {
			case string:
				cells = append(cells, v)
			case int64:
				cells = append(cells, strconv.FormatInt(v, 10))
			default:
				cells = append(cells, fmt.Sprint(v))
			}
		}
		if o.HasExpiresAt {
			cells = append(cells, r.ExpiresAt)
		}
		return append(cells, strconv.Itoa(r.Partition))
	}
	err := o.EachRow(func(r statereader.Row) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, c := range fill(r) {
			if i < len(widths) {
				widths[i] = max(widths[i], cellWidth(c))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var line []byte
	rule := func(left, mid, right string) {
		line = append(line[:0], left...)
		for i, wd := range widths {
			if i > 0 {
				line = append(line, mid...)
			}
			for range wd + 2 {
				line = append(line, "─"...)
			}
		}
		line = append(append(line, right...), '\n')
		w.Write(line)
	}
	row := func(cells []string, centre bool) error {
		line = append(line[:0], "│"...)
		for i, wd := range widths {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := wd - cellWidth(c)
			left := 0
			if centre {
				left = pad / 2
			}
			line = append(line, ' ')
			line = appendSpaces(line, left)
			line = append(line, c...)
			line = appendSpaces(line, pad-left)
			line = append(line, " │"...)
		}
		line = append(line, '\n')
		_, err := w.Write(line)
		return err
	}
	rule("┌", "┬", "┐")
	row(header, true)
	rule("├", "┼", "┤")
	err = o.EachRow(func(r statereader.Row) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return row(fill(r), false)
	})
	if err != nil {
		return err
	}
	rule("└", "┴", "┘")
	return nil
}

// cellWidth returns the width of s on a terminal, as tablewriter counts it.
func cellWidth(s string) int {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return twwidth.Width(s)
		}
	}
	return len(s)
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}
