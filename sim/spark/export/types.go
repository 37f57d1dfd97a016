package export

import (
	"fmt"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// Format is the file format of the exported batches.
type Format string

// The formats an export writes its batches in.
const (
	// Parquet writes one Parquet file per batch, one row group, Snappy
	// compressed; timestamps are INT64 TIMESTAMP(MICROS, adjusted to UTC),
	// which Spark reads as TimestampType.
	Parquet Format = "parquet"
	// JSON writes one JSON Lines file per batch, timestamps as ISO-8601
	// strings with microseconds in UTC; job.py reads them with an explicit
	// schema and timestamp format.
	JSON Format = "json"
)

// ParseFormat returns the format named s ("parquet" or "json"), or an
// error that names what it got.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case Parquet, JSON:
		return Format(s), nil
	}
	return "", fmt.Errorf("want parquet or json, got %s", fileio.Quote(s))
}

// ext is the extension of the batch files of f.
func (f Format) ext() string {
	if f == JSON {
		return ".json"
	}
	return ".parquet"
}

// ColumnType is the Spark type of an exported column.
type ColumnType int

// The column types of an export.
const (
	// String is Spark's StringType: Parquet BYTE_ARRAY (STRING).
	String ColumnType = iota
	// Long is LongType: Parquet INT64.
	Long
	// Integer is IntegerType: Parquet INT32.
	Integer
	// Double is DoubleType: Parquet DOUBLE.
	Double
	// Boolean is BooleanType: Parquet BOOLEAN.
	Boolean
	// Timestamp is TimestampType: Parquet INT64 TIMESTAMP(MICROS, UTC).
	Timestamp
)

// Spark returns the type's name in Spark's simple form ("string",
// "timestamp"), as a DDL schema writes it.
func (t ColumnType) Spark() string {
	return [...]string{"string", "long", "integer", "double", "boolean", "timestamp"}[t]
}

// PySpark returns the pyspark.sql.types class of the type.
func (t ColumnType) PySpark() string {
	return [...]string{"StringType", "LongType", "IntegerType", "DoubleType", "BooleanType", "TimestampType"}[t]
}

// Column is one exported column.
type Column struct {
	// Name is the column's name, as the rows and the queries name it.
	Name string `json:"name"`
	// Type is the column's Spark type.
	Type ColumnType `json:"-"`
	// Nullable is set when some row has no value (null) in the column:
	// the Parquet column is then optional.
	Nullable bool `json:"nullable"`
}

// Query is one query of an export: the Spark query job.py starts.
type Query struct {
	// Name is the query's name (Spark's queryName); a lost checkpoint
	// starts NAME~2, NAME~3, ...
	Name string `json:"name"`
	// Text is the query as the scenario or the trace writes it.
	Text string `json:"text"`
	// Apply is the PySpark expression job.py applies to the input
	// DataFrame, named df.
	Apply string `json:"apply"`
	// Verbatim is set when Apply is Text as written (the receiver
	// replaced by df); otherwise Apply is sim/spark/chain's PySpark rendering of
	// the chain (see pythonChain).
	Verbatim bool `json:"verbatim"`
	// Plan is the chain planned against the exported schema.
	Plan chain.Plan `json:"-"`
}

// Fault is a stop of every query and a start again before a batch.
type Fault struct {
	// Before is the index of the batch file the queries start again
	// before.
	Before int64 `json:"before"`
	// Lose is set when the queries start on new, empty checkpoints.
	Lose bool `json:"loseCheckpoint"`
}

// kind names the fault as job.py does.
func (f Fault) kind() string {
	if f.Lose {
		return "lose-checkpoint"
	}
	return "restart"
}

// generationName is the Spark query name of the gen-th checkpoint of
// query name (1 for the first).
func generationName(name string, gen int) string {
	if gen <= 1 {
		return name
	}
	return fmt.Sprintf("%s~%d", name, gen)
}

// nameChars are the characters of a query or column name an export
// accepts besides letters and digits.
const nameChars = "._-@"

// safeName reports whether s is usable as a query name: it names files
// and folders (expected/<name>.jsonl, the checkpoint and input folders of
// job.py, which Hadoop paths and globs must not misread).
func safeName(s string) bool {
	if s == "" || len(s) > 200 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(nameChars, r)) {
			return false
		}
	}
	return true
}

// safeColumn reports whether s is usable as a column name in every format
// and in job.py's schema: letters, digits and "_", not starting with a
// digit.
func safeColumn(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
