package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/metrics/human"
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
metadata file, offsets/, commits/ and state/). The state shown is that of the
last committed batch.

state never modifies the folder. A folder that is not a checkpoint, a file that
does not belong in it, or a corrupted state file is rejected with one line
naming the file.`,
		Example: `  simulate run experiments/quickstart.yaml --checkpoint /tmp/ck --out /tmp/quickstart
  simulate state /tmp/ck
  simulate state /tmp/ck --query within-watermark --limit 5
  simulate state /tmp/ck/within-watermark/query.0 --format json`,
		Args: cobra.ExactArgs(1),
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
			// Print only once everything was read: a failure prints nothing.
			var buf bytes.Buffer
			if format == "json" {
				data, err := json.MarshalIndent(st, "", "  ")
				if err != nil {
					return err
				}
				buf.Write(data)
				buf.WriteByte('\n')
			} else if err := writeStateTable(&buf, st); err != nil {
				return err
			}
			_, err = stdout.Write(buf.Bytes())
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&query, "query", "", "in a run checkpoint, read only this query (its folder name; default: every query)")
	fl.IntVar(&limit, "limit", statereader.DefaultLimit, "keys listed per operator, the first in key order; -1 lists every key")
	fl.StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

// writeStateTable renders st for the terminal: a few lines per query and
// per operator, and a table of each operator's first keys.
func writeStateTable(w io.Writer, st *statereader.State) error {
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
		for _, o := range q.Operators {
			batch := "before the first batch"
			if o.BatchID != nil {
				batch = fmt.Sprintf("at batch %d", *o.BatchID)
			}
			fmt.Fprintf(w, "  operator %d %s on [%s]: %s rows %s", o.ID, o.Name, strings.Join(o.KeyColumns, ", "), human.Count(o.NumRows), batch)
			if len(o.Rows) > 0 && int64(len(o.Rows)) < o.NumRows {
				fmt.Fprintf(w, ", the first %s by key", human.Count(int64(len(o.Rows))))
			}
			fmt.Fprintln(w)
			if o.Note != "" {
				fmt.Fprintf(w, "  note: %s\n", o.Note)
			}
			if len(o.Rows) == 0 {
				continue
			}
			if err := rowsTable(w, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// rowsTable writes an operator's listed keys as a table: one column per
// key column, expiresAt, and the key's partition.
func rowsTable(w io.Writer, o statereader.Operator) error {
	header := append([]string(nil), o.KeyColumns...)
	if o.HasExpiresAt {
		header = append(header, "expiresAt")
	}
	header = append(header, "partition")
	t := tablewriter.NewTable(w,
		// Keep column names as written (auto-format upper-cases them).
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(header)
	for _, r := range o.Rows {
		row := make([]string, 0, len(header))
		for _, c := range r.Key {
			row = append(row, fmt.Sprint(c.Value))
		}
		if o.HasExpiresAt {
			row = append(row, r.ExpiresAt)
		}
		row = append(row, strconv.Itoa(r.Partition))
		if err := t.Append(row); err != nil {
			return fmt.Errorf("state table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("state table: %w", err)
	}
	return nil
}
