package engines

// Outcome is what a micro-batch did with one input row: the verdict of the
// late-row filter and the dedup operators, in the order the row met them.
//
// Worked example (delay 10 s, times in seconds): a batch runs with late
// watermark 20 and holds a@25, a@26 and b@15. a@25 passes the filter and
// is new: Emitted. a@26 has the key of a row already in state:
// DroppedDuplicate. b@15 is at or below the watermark: DroppedLate, before
// any operator consults its state.
type Outcome uint8

// Outcomes of a row.
const (
	// Emitted: the row passed every operator and reached the sink.
	Emitted Outcome = iota
	// DroppedLate: an operator dropped it behind the watermark.
	DroppedLate
	// DroppedDuplicate: an operator found its key in state.
	DroppedDuplicate
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case Emitted:
		return "emitted"
	case DroppedLate:
		return "dropped-late"
	case DroppedDuplicate:
		return "dropped-duplicate"
	}
	return "unknown"
}

// WatermarkSet reports whether a watermark in milliseconds has been set.
// Spark's watermark starts at 0 and only moves forward (a batch's new
// watermark replaces the old one only when larger), so 0 means that no
// row has moved it yet: Spark then reports no watermark in its progress,
// plans a second withWatermark without failing, and a lag behind it means
// nothing.
func WatermarkSet(ms int64) bool { return ms != 0 }

// EvictBound returns the largest expiry that Evict(watermark) removes:
// watermark itself, except that NoExpiry keys are never evicted, even by
// the largest watermark.
func EvictBound(watermark int64) int64 { return min(watermark, NoExpiry-1) }
