package export

import (
	"bufio"
	"fmt"
	"os"
	"reflect"

	"github.com/parquet-go/parquet-go"
)

// writer writes one batch file.
type writer interface {
	// write writes the rows of b to a new file at path.
	write(path string, b batch) error
}

// newWriter returns the writer of format f for the columns cols.
func newWriter(f Format, cols []Column) writer {
	if f == JSON {
		return &jsonWriter{cols: cols}
	}
	return newParquetWriter(cols)
}

// parquetRows is how many rows parquetWriter hands the Parquet writer at
// once.
const parquetRows = 1024

// parquetWriter writes batches as Parquet files: one row group, Snappy
// compressed, data pages of version 1 with PLAIN values (what Spark's own
// writer produces without dictionaries, which every Spark reader takes),
// the columns in schema order. A column no row leaves null is
// required, one some row does is optional.
type parquetWriter struct {
	cols   []Column
	schema *parquet.Schema
	// rows is reused from batch to batch: each Row's values are
	// overwritten in place.
	rows []parquet.Row
	c    cell
	buf  *bufio.Writer
}

func newParquetWriter(cols []Column) *parquetWriter {
	w := &parquetWriter{cols: cols, schema: parquetSchema(cols), buf: bufio.NewWriterSize(nil, 1<<20)}
	w.rows = make([]parquet.Row, parquetRows)
	for i := range w.rows {
		w.rows[i] = make(parquet.Row, len(cols))
	}
	return w
}

// parquetSchema builds the Parquet schema of cols, in their order: the
// library orders the fields of a struct as declared (a map-based Group
// would sort them by name), so the schema is made from a struct type
// built at run time.
func parquetSchema(cols []Column) *parquet.Schema {
	fields := make([]reflect.StructField, len(cols))
	for i, c := range cols {
		var t reflect.Type
		tag := c.Name
		switch c.Type {
		case String:
			t = reflect.TypeFor[string]()
			tag += ",plain" // the library's default is DELTA_LENGTH_BYTE_ARRAY
		case Long:
			t = reflect.TypeFor[int64]()
		case Integer:
			t = reflect.TypeFor[int32]()
		case Double:
			t = reflect.TypeFor[float64]()
		case Boolean:
			t = reflect.TypeFor[bool]()
		case Timestamp:
			t = reflect.TypeFor[int64]()
			tag += ",timestamp(microsecond:utc)"
		}
		if c.Nullable {
			t = reflect.PointerTo(t)
			tag += ",optional"
		}
		fields[i] = reflect.StructField{Name: fmt.Sprintf("C%d", i), Type: t, Tag: reflect.StructTag(`parquet:"` + tag + `"`)}
	}
	return parquet.SchemaOf(reflect.New(reflect.StructOf(fields)).Elem().Interface())
}

func (w *parquetWriter) write(path string, b batch) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	buf := w.buf
	buf.Reset(f)
	// Data page v1, the version Spark's own writer uses, which every
	// Spark reader takes.
	pw := parquet.NewGenericWriter[any](buf, w.schema, parquet.Compression(&parquet.Snappy), parquet.DataPageVersion(1))
	n := b.Len()
	for start := 0; start < n; start += parquetRows {
		k := min(parquetRows, n-start)
		for j := range k {
			w.fill(w.rows[j], b, start+j)
		}
		if _, err := pw.WriteRows(w.rows[:k]); err != nil {
			return err
		}
	}
	if err := pw.Close(); err != nil {
		return err
	}
	return buf.Flush()
}

// fill sets row to the values of row i of b.
func (w *parquetWriter) fill(row parquet.Row, b batch, i int) {
	c := &w.c
	for k, col := range w.cols {
		b.cell(i, k, c)
		var v parquet.Value
		switch {
		case c.null:
			row[k] = parquet.NullValue().Level(0, 0, k)
			continue
		case col.Type == String:
			v = parquet.ByteArrayValue(c.s)
		case col.Type == Integer:
			v = parquet.Int32Value(int32(c.i))
		case col.Type == Double:
			v = parquet.DoubleValue(c.f)
		case col.Type == Boolean:
			v = parquet.BooleanValue(c.i != 0)
		default: // Long, Timestamp
			v = parquet.Int64Value(c.i)
		}
		def := 0
		if col.Nullable {
			def = 1
		}
		row[k] = v.Level(0, def, k)
	}
}
