package metrics

import "fmt"

// ParseRecord parses the fields of one timeseries.csv row (after the
// header) into a BatchRecord: the inverse of BatchRecord.Record. Readers
// that stream a timeseries row by row use it instead of ReadTimeseries,
// which holds every row.
func ParseRecord(fields []string) (BatchRecord, error) {
	if len(fields) != len(TimeseriesHeader) {
		return BatchRecord{}, fmt.Errorf("%d fields, want %d (%v)", len(fields), len(TimeseriesHeader), TimeseriesHeader)
	}
	return parseRecord(fields)
}
