package beam

import (
	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/beam"
)

// Line is what one step did: the elements Deduplicate output, the times
// after the step (Watermark is null before the first advance), the seen
// keys with the time their expiry timer is set for, and, in fixed windows,
// the elements dropped so far for an expired window.
type Line struct {
	Step           int         `json:"step"`
	Watermark      *int64      `json:"watermark"`
	ProcessingTime int64       `json:"processingTime"`
	Emitted        []Element   `json:"emitted"`
	State          []KeyExpiry `json:"state"`
	DroppedLate    *int64      `json:"droppedLate,omitempty"`
}

// KeyExpiry is a seen key, its window's start (fixed windows only) and
// its timer.
type KeyExpiry struct {
	Key    string `json:"key"`
	Window *int64 `json:"window,omitempty"`
	Expiry int64  `json:"expiry"`
}

// Run runs every step of t and returns one line per step.
func Run(t *Trace) ([]Line, error) {
	d, err := beam.NewWindowed(t.Domain, t.Duration, t.Window, t.Lateness)
	if err != nil {
		return nil, err
	}
	lines := make([]Line, 0, len(t.Steps))
	for i, s := range t.Steps {
		l := Line{Step: i, Emitted: []Element{}, State: []KeyExpiry{}}
		switch s.Kind {
		case AddElements:
			for _, e := range s.Elements {
				if d.Process(e.Key, e.Timestamp) == engines.Emitted {
					l.Emitted = append(l.Emitted, e)
				}
			}
		case AdvanceWatermark:
			d.AdvanceWatermark(s.At)
		case AdvanceProcessingTime:
			d.AdvanceProcessingTime(s.By)
		}
		if wm := d.Watermark(); wm != beam.MinTimestamp {
			l.Watermark = &wm
		}
		l.ProcessingTime = d.ProcessingTime()
		for _, k := range d.Keys() {
			e := KeyExpiry{Key: k.Key, Expiry: k.Expiry}
			if t.Window > 0 {
				start := k.Window
				e.Window = &start
			}
			l.State = append(l.State, e)
		}
		if t.Window > 0 {
			dropped := d.DroppedLate()
			l.DroppedLate = &dropped
		}
		lines = append(lines, l)
	}
	return lines, nil
}
