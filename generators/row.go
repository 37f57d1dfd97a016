package generators

// IDKind is the form of the event_id column.
type IDKind uint8

// Event id forms.
const (
	// UUIDIDs are 36-character random UUID strings (version 4 layout).
	UUIDIDs IDKind = iota
	// IntIDs are 64-bit integers.
	IntIDs
)

// Truth is the ground truth of a row. Engines never read it; metrics
// compare it with what the engines did.
type Truth struct {
	// Event is the logical event the row is a copy of, numbered densely
	// from 0 in the order events are created.
	Event uint64
	// Copy is 0 for the first row of an event and n for its n-th resend.
	Copy uint32
	// Copies is the number of rows the event has in all (1 + resends).
	Copies uint32
	// BadClock is set when the row's event time came from a bad clock.
	BadClock bool
	// Heartbeat is set on synthetic heartbeat rows.
	Heartbeat bool
}

// Row is one generated input row. It is a plain value with no pointers so
// that batches of rows cost the garbage collector nothing to scan.
type Row struct {
	// EventID holds the UUID text when the ids are UUIDs.
	EventID [36]byte
	// EventNum is the event id when the ids are integers.
	EventNum int64
	// CustomerID is the customer_id column.
	CustomerID int64
	// EventTime is the event_time column, microseconds since the epoch.
	EventTime int64
	// IngestTime is the ingest_time column, microseconds since the epoch:
	// the copy's own arrival time when ingest_time is among the retry
	// metadata columns, else the first copy's arrival time.
	IngestTime int64
	// Arrival is when the row arrives at the stream (processing time,
	// microseconds since the epoch); it decides the row's micro-batch.
	Arrival int64
	// Attempt is 0 for the original, n for the n-th resend (unless attempt
	// is not among the retry metadata columns, then always 0).
	Attempt int64
	// Payload is the payload column, the same for every copy of an event.
	Payload int64
	// Truth is the row's ground truth.
	Truth Truth
}

// Batch is the rows of one micro-batch. It implements the executor's view
// of a batch (microbatch.Rows) for generated rows.
type Batch struct {
	Rows []Row
	IDs  IDKind
}

// Len returns the number of rows.
func (b *Batch) Len() int { return len(b.Rows) }

// EventTime returns the value of timestamp column col of row i in
// microseconds.
func (b *Batch) EventTime(i, col int) int64 {
	if col == ColIngestTime {
		return b.Rows[i].IngestTime
	}
	return b.Rows[i].EventTime
}

// AppendKey appends the values of cols of row i to dst, encoded as the
// row schema lays keys out (see KeyLayout): every column has a fixed
// width, 36 bytes for a UUID event_id and 8 big-endian bytes for
// anything else, so the concatenation is an exact, injective encoding.
func (b *Batch) AppendKey(dst []byte, i int, cols []int) []byte {
	return appendKey(dst, &b.Rows[i], b.IDs, cols)
}
