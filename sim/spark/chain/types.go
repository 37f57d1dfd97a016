// Package chain parses the operator chains users write in PySpark
// (events.withWatermark("event_time", "20 minutes").dropDuplicatesWithinWatermark(["event_id"]))
// or in the structured JSON form of the replay format, and plans them the way
// Spark's analyzer and its watermark propagation would: which dedup operator
// sees a watermark, whether the event-time column is among its keys, and the
// errors Spark raises for chains that cannot run.
package chain

// OpKind names an operator of a chain.
type OpKind int

// The operators a chain may hold.
const (
	// WithWatermark is Dataset.withWatermark(column, delay).
	WithWatermark OpKind = iota
	// DropDuplicates is Dataset.dropDuplicates(keys...), planned as Spark's
	// StreamingDeduplicateExec ("dedupe").
	DropDuplicates
	// DropDuplicatesWithinWatermark is Spark 3.5's
	// Dataset.dropDuplicatesWithinWatermark(keys...), planned as
	// StreamingDeduplicateWithinWatermarkExec ("dedupeWithinWatermark").
	DropDuplicatesWithinWatermark
	// TransformWithStateDedup is Spark 4's transformWithState (PySpark
	// groupBy(keys).transformWithState(...)) with the dedup processor people
	// write: a ValueState per key, optionally with a TTL in processing time;
	// the first row of a key without state is emitted and sets it, later
	// rows are dropped while it lives. Written
	// groupBy("id").transformWithState(DedupProcessor(ttl="10 minutes")).
	TransformWithStateDedup
)

// TWSOperatorName is the operator name Spark 4 reports for a PySpark
// transformWithState (TransformWithStateInPySparkExec).
const TWSOperatorName = "transformWithStateInPySparkExec"

// String returns the PySpark method name of k.
func (k OpKind) String() string {
	switch k {
	case WithWatermark:
		return "withWatermark"
	case DropDuplicates:
		return "dropDuplicates"
	case DropDuplicatesWithinWatermark:
		return "dropDuplicatesWithinWatermark"
	case TransformWithStateDedup:
		return "transformWithState"
	}
	return "unknown"
}

// Op is one parsed operator, before planning.
type Op struct {
	Kind OpKind
	// Column is the event-time column of a WithWatermark.
	Column string
	// Delay is the delay text of a WithWatermark as written ("20 minutes").
	Delay string
	// DelayMs is Delay in whole milliseconds, as Spark stores it.
	DelayMs int64
	// Keys are the key columns of a dedup, in the order written. AllColumns
	// is set instead when the dedup names no columns (dropDuplicates()).
	Keys       []string
	AllColumns bool
	// TTL is a TransformWithStateDedup's ValueState TTL as written
	// ("10 minutes"; empty: no TTL), TTLMs the same in milliseconds.
	TTL   string
	TTLMs int64
	// Timer is a TransformWithStateDedup's event-time timer horizon as
	// written ("10 minutes"; empty: none), TimerMs the same in
	// milliseconds: the processor runs in timeMode "EventTime", registers a
	// timer at the first row's event time + Timer when it sets a key's
	// state, and clears the state when the timer fires.
	Timer   string
	TimerMs int64
}

// Chain is a parsed query: its operators in the order they are applied,
// the first one nearest the source.
type Chain struct {
	Ops []Op
	// Text is the query as the user wrote it.
	Text string
}

// ColumnType is what the planner needs to know of a column's type.
type ColumnType int

// Column types.
const (
	// Other is any non-timestamp column (string, number, boolean).
	Other ColumnType = iota
	// Timestamp is a column that holds event times (Spark TimestampType).
	Timestamp
)

// Column is one column of the input schema.
type Column struct {
	Name string
	Type ColumnType
}

// Schema is the input schema a chain is planned against, in column order.
// "All columns" (dropDuplicates()) means these columns in this order.
type Schema []Column

// Node is one planned operator.
type Node struct {
	Op Op
	// Operator is the Spark physical operator short name of a dedup node:
	// "dedupe" or "dedupeWithinWatermark"; empty for a WithWatermark node.
	Operator string

	// For a WithWatermark node: the index in the schema of its column.
	// For a dedup node: the schema index of the event-time column that
	// carries watermark metadata at this point of the chain, or -1.
	EventTimeColumn int
	// DelayMs is the delay of the watermark that reaches this node (for a
	// WithWatermark node, its own delay).
	DelayMs int64

	// KeyColumns are the schema indexes of a dedup node's keys, resolved as
	// Spark's Dataset.groupColsFromDropDuplicates resolves them: each
	// distinct key name (AllColumns: every column's name) expanded to every
	// column it matches case-insensitively, in schema order. A column can
	// appear twice (dropDuplicates(["id", "ID"]) on a frame with only id
	// keys on [id, id]), as in Spark's state key row; equality of keys is
	// unaffected. Spark orders more than four distinct names as a Scala
	// hash set does; dedupsim keeps the order written, which no counter
	// depends on.
	KeyColumns []int
	// KeyNames are the resolved key column names, as in the schema.
	KeyNames []string

	// WatermarkReaches is true for a dedup node with a withWatermark earlier
	// in the chain: it filters late rows and may ask for no-data batches.
	WatermarkReaches bool
	// EventTimeInKeys is true for a dedup node whose keys include the
	// event-time column carrying the watermark: StreamingDeduplicateExec
	// then evicts keys whose event time is at or below the watermark.
	EventTimeInKeys bool
}

// IsDedup reports whether n is a dedup operator.
func (n Node) IsDedup() bool { return n.Op.Kind != WithWatermark }

// Evicts reports whether n ever removes keys from its state: a
// dedupeWithinWatermark always (it requires a watermark), a dedupe only when
// the watermarked event-time column is one of its keys.
func (n Node) Evicts() bool {
	switch n.Op.Kind {
	case DropDuplicatesWithinWatermark:
		return n.WatermarkReaches
	case DropDuplicates:
		return n.WatermarkReaches && n.EventTimeInKeys
	case TransformWithStateDedup:
		return n.Op.TTLMs > 0 || n.Op.TimerMs > 0 && n.WatermarkReaches
	}
	return false
}

// Plan is a chain resolved against a schema, ready for the executor.
type Plan struct {
	Chain  Chain
	Schema Schema
	// Nodes are the chain's operators in chain order.
	Nodes []Node
	// HasWatermark is true when the chain holds a withWatermark: the query
	// then has an event-time watermark (reported even when it reaches no
	// dedup operator).
	HasWatermark bool
	// Warnings are the pitfalls of this plan, in plain words.
	Warnings []Warning
	// Redefinition is set (by PlanDeferred only) for a chain with a second
	// withWatermark, which Spark fails while it runs.
	Redefinition *Redefinition
}

// Dedups returns the indexes in Nodes of the dedup operators, in chain order.
func (p Plan) Dedups() []int {
	var out []int
	for i, n := range p.Nodes {
		if n.IsDedup() {
			out = append(out, i)
		}
	}
	return out
}

// WarningCode identifies a pitfall.
type WarningCode string

// The pitfalls of docs/semantics.md that explain and plan warn about.
const (
	// NoWatermark: a dedup with no withWatermark before it keeps every key forever.
	NoWatermark WarningCode = "no-watermark"
	// WatermarkAfterDedup: a withWatermark after a dedup never reaches it.
	WatermarkAfterDedup WarningCode = "watermark-after-dedup"
	// EventTimeNotInKeys: dropDuplicates with a watermark but without the
	// event-time column among its keys dedups globally and never evicts,
	// yet still drops late rows.
	EventTimeNotInKeys WarningCode = "event-time-not-in-keys"
	// EventTimeInKeys: dropDuplicates keyed on the event time treats copies
	// with re-stamped timestamps as different keys.
	EventTimeInKeys WarningCode = "event-time-in-keys"
	// CaseVariantKeys: a key name matches several columns that differ only
	// in case, and Spark keys on all of them.
	CaseVariantKeys WarningCode = "case-variant-keys"
)

// Warning is one pitfall found in a plan.
type Warning struct {
	Code WarningCode
	// Node is the index in Plan.Nodes of the operator concerned.
	Node int
	// Message says in plain words what will happen and what to do.
	Message string
}
