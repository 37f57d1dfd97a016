// Package eventlog reads event logs: a user's own traffic, dumped from a
// topic or a table, as rows of an id, an event time and an arrival time
// (and any other columns the caller asks for). It streams: memory is one
// read buffer and one row, never the log (with Spec.Sort, its sort's
// budget).
//
// Formats: CSV with a header row (RFC 4180 quoting), JSON lines (one
// object a line; strings or numbers), Parquet (flat columns: strings,
// integers, TIMESTAMP in ms/µs/ns, Spark's INT96), each optionally
// gzip-compressed, which is told by the magic bytes, not the name; a
// gzipped Parquet file is unpacked to a temporary file first (Parquet is
// read from its footer). The format of each file is told by its first
// bytes: "PAR1" is Parquet, '{' JSON lines, anything else CSV.
//
// A log is a file, a folder (its files by name, skipping those whose
// names start with '.' or '_', as Spark does) or a glob (its matches by
// name). Rows must come in arrival order across the files: a row whose
// arrival is before the previous row's is an error naming both. With
// Spec.Sort the reader sorts them instead (rows of equal arrival in
// their order in the files), by an external sort in bounded memory.
//
// Sorter is that external sort, also used by the caller's first pass:
// records held up to a budget, radix-sorted on an 8-byte prefix, spilled
// as sorted runs to temporary files removed from their folder at once,
// and merged.
//
// Times are RFC 3339 (any sub-second precision, cut to the microsecond
// toward the past; offsets converted to UTC; 't', 'z' and a space for
// 'T' taken) or numbers of seconds, milliseconds or microseconds since
// the epoch (a decimal fraction taken). With UnitAuto each time column's
// unit is detected from the first row's value: text that is not a
// number is RFC 3339; a number below 1e11 is seconds, below 1e14
// milliseconds, below 1e17 microseconds; Reader.Units reports what was
// detected so that the caller can say so.
//
// Every problem is an *Error, one line naming the file, the row (a line
// number for CSV and JSON lines, a row index from 0 for Parquet) and
// the column when there is one: a missing column, an unparsable time, an
// empty or null id, a truncated gzip or Parquet file, a row out of
// arrival order, a log with no rows.
package eventlog
