package runner

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// timeseriesRowBytes is about what one batch's timeseries.csv row takes
// (the committed results average 96 bytes with short query names).
const timeseriesRowBytes = 100

// ReportSizeWarning returns a warning line, before the run, when s's
// timeseries.csv may grow past what the report reads back
// (fileio.MaxTimeseriesBytes): up to one row per trigger and job. RunTo
// still publishes the results if the report then fails; "" when the file
// fits.
func ReportSizeWarning(s *scenario.Scenario) string {
	trig := s.Trigger.Std()
	if trig <= 0 {
		return ""
	}
	rows := int64(s.Duration.Std()/trig) * int64(s.Jobs())
	est := rows * timeseriesRowBytes
	if est <= fileio.MaxTimeseriesBytes {
		return ""
	}
	return fmt.Sprintf("warning: timeseries.csv may hold up to %s rows (one per trigger and query), about %s, over the %s the report reads back: the results are published even if the report fails; --no-report skips it",
		interval.Count(rows), interval.Bytes(est), interval.Bytes(fileio.MaxTimeseriesBytes))
}
