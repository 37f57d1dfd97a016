package export

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	"github.com/dedupsim/dedupsim/engines/interval"
)

//go:embed job.py.tmpl
var jobTemplate string

// jobTmpl renders job.py; py renders a Go string as a Python string
// literal (a JSON string is one).
var jobTmpl = template.Must(template.New("job.py").Funcs(template.FuncMap{"py": pyString}).Parse(jobTemplate))

// pyString returns s as a Python string literal.
func pyString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// The state store providers of Spark that stand for dedupsim's stores.
const (
	hdfsProvider    = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
	rocksDBProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
)

// wholeFile is the split size job.py sets, so that one task reads each
// batch file whole: 1 TiB.
const wholeFile = "1099511627776"

// confEntry is one Spark setting of job.py, with why it is set.
type confEntry struct{ Key, Value, Comment string }

// option is one read option of job.py.
type option struct{ Key, Value string }

// jobQuery is one query as job.py lists it.
type jobQuery struct {
	Query
	// TextLines are the lines of the query as written, for a comment.
	TextLines []string
}

// jobFault is one fault as job.py lists it.
type jobFault struct {
	Before int64
	Kind   string
}

// sparkConf returns the settings job.py starts Spark with.
func sparkConf(sp *spec, f Format) []confEntry {
	provider, store := sp.provider, "the HDFS-backed store, as the scenario's store: memory"
	switch {
	case hasTWS(sp):
		store = "RocksDB: transformWithState runs on no other state store"
	case sp.kind == "trace":
		store = "Spark's default, the HDFS-backed store"
	case provider == rocksDBProvider && sp.store == "pebble":
		store = "RocksDB, as the scenario's store: pebble"
	case provider == rocksDBProvider:
		store = "RocksDB, as the scenario's spark.provider"
	case sp.store == "pebble":
		store = "the HDFS-backed store, as the scenario's spark.provider"
	}
	if provider == "" {
		provider = hdfsProvider
	}
	out := []confEntry{
		{"spark.sql.streaming.noDataMicroBatches.enabled", boolString(sp.noData), "no-data batches, as the " + sp.kind + " sets them"},
		{"spark.sql.streaming.stateStore.providerClass", provider, store + "; the compared counters do not depend on it"},
		{"spark.sql.files.maxPartitionBytes", wholeFile, "with openCostInBytes: one task reads each batch file whole, in order"},
		{"spark.sql.files.openCostInBytes", wholeFile, "so the rows reach the first dedup operator in file order (the first copy of a key is kept)"},
		{"spark.sql.shuffle.partitions", strconv.FormatInt(sp.partitions, 10), "state stores per operator; a chain's later operators read their rows in the order of the earlier operator's partitions"},
		{"spark.ui.showConsoleProgress", "false", "no console progress bars over the job's own output"},
	}
	if hasTWS(sp) {
		out = append(out, confEntry{"spark.sql.streaming.fileSource.log.compactInterval", "1000000000",
			"the file source's log never compacts: job.py writes a transformWithState batch's entry in it (see run_tws)"})
	}
	if f == Parquet {
		out = append(out, confEntry{"spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED", "the timestamps are proleptic Gregorian, as dedupsim computes them"})
	}
	return out
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// readOptions returns the options job.py reads the batch files with.
// One file per trigger: even a file fed before Spark is idle is a batch of
// its own.
func readOptions(f Format) []option {
	opts := []option{{"maxFilesPerTrigger", "1"}}
	if f == JSON {
		opts = append(opts, option{"timestampFormat", sparkTimeFormat}, option{"mode", "FAILFAST"})
	}
	return opts
}

// jobPy renders job.py.
func jobPy(sp *spec, sum *Summary) ([]byte, error) {
	data := struct {
		Source, Format, AppName string
		Columns                 []Column
		ReadOptions             []option
		Batches                 int64
		Faults                  []jobFault
		Conf                    []confEntry
		Queries                 []jobQuery
		// TWSQueries name the transformWithState queries; BatchTimesMs
		// is the export's (Summary.BatchTimesMs).
		TWSQueries   []string
		BatchTimesMs []int64
	}{
		Source: sp.source, Format: string(sum.Format), AppName: sp.app,
		Columns: sp.cols, ReadOptions: readOptions(sum.Format), Batches: sum.Batches,
		Conf: sparkConf(sp, sum.Format),
	}
	for _, f := range sum.Faults {
		data.Faults = append(data.Faults, jobFault{Before: f.Before, Kind: f.kind()})
	}
	for _, q := range sp.queries {
		data.Queries = append(data.Queries, jobQuery{Query: q, TextLines: commentLines(q.Text)})
		if _, ok := twsNode(&q); ok {
			data.TWSQueries = append(data.TWSQueries, q.Name)
		}
	}
	if len(data.TWSQueries) > 0 {
		data.BatchTimesMs = sum.BatchTimesMs
	}
	var b bytes.Buffer
	if err := jobTmpl.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// commentLines splits text into lines fit for a Python comment: control
// characters (a carriage return, a NUL) escaped as \xNN, no trailing white
// space.
func commentLines(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		var b strings.Builder
		for _, r := range strings.TrimRight(l, " \t\r") {
			if r < 0x20 && r != '\t' || r == 0x7f {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

//go:embed readme.md.tmpl
var readmeTemplate string

// readmeTmpl renders the export's README.md.
var readmeTmpl = template.Must(template.New("README.md").Funcs(template.FuncMap{
	"join":    strings.Join,
	"oneLine": func(s string) string { return strings.Join(strings.Fields(s), " ") },
}).Parse(readmeTemplate))

// readmeMD renders README.md.
func readmeMD(sp *spec, sum *Summary) ([]byte, error) {
	formatName := "Parquet"
	if sum.Format == JSON {
		formatName = "JSON Lines"
	}
	data := struct {
		Source, Kind, FormatName, Format, TimeFormat, Rows string
		Batches, Partitions                                int64
		HasTimestamp, TWS                                  bool
		Columns                                            []SummaryColumn
		Faults                                             []Fault
		Queries                                            []QuerySummary
	}{
		Source: sp.source, Kind: sp.kind, FormatName: formatName, Format: string(sum.Format),
		TimeFormat: sparkTimeFormat, Rows: interval.Count(sum.Rows), Batches: sum.Batches, Partitions: sp.partitions,
		Columns: sum.Columns, Faults: sum.Faults, Queries: sum.Queries, TWS: hasTWS(sp),
	}
	for _, c := range sp.cols {
		data.HasTimestamp = data.HasTimestamp || c.Type == Timestamp
	}
	var b bytes.Buffer
	if err := readmeTmpl.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
