package beam

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines/beam"
	"github.com/dedupsim/dedupsim/sim/enginetrace"
)

func ms(v int64) string { return enginetrace.FormatMillis(v) }

// Explain returns, in plain words, what the Beam Deduplicate of the query t
// keeps and loses: one line each, warnings starting "warning:".
func (t *Trace) Explain() []string {
	window := "the global window"
	if t.Window > 0 {
		window = fmt.Sprintf("fixed windows of %s, allowed lateness %s", ms(t.Window), ms(t.Lateness))
	}
	lines := []string{
		fmt.Sprintf("beam Deduplicate.keyedValues(): keep-first per key and window, %s time, d = %s, %s (as the Java DirectRunner runs it)", t.Domain, ms(t.Duration), window),
		"  the first copy is output and sets one timer; later copies are dropped and do not move it (no refresh); the timer clears the key",
	}
	if t.Domain == beam.ProcessingTime {
		lines = append(lines,
			fmt.Sprintf("  horizon: %s of processing time from the first copy's arrival; the timer fires once processing time is past it", ms(t.Duration)),
			"warning: processing time, not event time: a backlog replayed after an outage arrives fast and is deduplicated; a retry that comes back later than d is output again, whatever its timestamp",
		)
		if t.Duration == beam.DefaultDuration {
			lines = append(lines, "  (10 minutes of processing time is Beam's default)")
		}
	} else {
		lines = append(lines,
			fmt.Sprintf("  horizon: the timer is the input watermark + %s when the first copy is processed (the Java runner's setRelative), not its timestamp + %s; it fires once the watermark is past it", ms(t.Duration), ms(t.Duration)),
			"warning: element timestamps do not enter (Python's DeduplicatePerKey uses them); copies processed before the first watermark advance are all forgotten at that advance",
		)
	}
	if t.Window > 0 {
		gc := "the window's end - 1ms"
		if t.Lateness > 0 {
			gc = fmt.Sprintf("the window's end - 1ms + %s (the allowed lateness)", ms(t.Lateness))
		}
		lines = append(lines,
			fmt.Sprintf("  windows: copies in different windows are never duplicates; a window's state is cleared once the watermark passes %s, and later copies of it are dropped as late (DroppedDueToLateness on the DirectRunner)", gc),
			"warning: copies of one event on either side of a window boundary are both output; a first copy whose window is already gone is dropped as late and its event lost",
		)
		if t.Domain == beam.EventTime {
			lines = append(lines, "  the event-time timer is capped at "+gc)
		}
	} else {
		lines = append(lines, "  global window: nothing is ever late, so a copy after the timer fired is output again")
	}
	lines = append(lines, "warning: the copy at the boundary is runner-dependent (Beam's own test accepts 1 or 2 outputs); this model is the Java DirectRunner's")
	return lines
}
