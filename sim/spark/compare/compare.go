package compare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics/progresslog"
)

// Options configure a comparison.
type Options struct {
	// IgnoreExtraQueries leaves out the queries that only the actual
	// records hold (listed in Result.IgnoredQueries) instead of
	// reporting each of their batches as extra in actual: for comparing
	// some of an export's queries with a log that holds them all.
	IgnoreExtraQueries bool
}

// Kind is what a Difference is.
type Kind int

const (
	// Changed is a compared field whose values differ.
	Changed Kind = iota
	// Missing is a batch that the expected records hold and the actual
	// do not: missing in actual.
	Missing
	// Extra is a batch that the actual records hold and the expected do
	// not: extra in actual.
	Extra
)

// String describes k: "changed", "missing in actual" or "extra in
// actual".
func (k Kind) String() string {
	switch k {
	case Missing:
		return "missing in actual"
	case Extra:
		return "extra in actual"
	}
	return "changed"
}

// Value is one side's value of a compared field.
type Value struct {
	// Present is false when the record leaves the field out or holds
	// null.
	Present bool
	// Number is a counter's value or the number of state operators.
	Number int64
	// Text is an operator's name, or a watermark in Spark's format
	// ("2024-05-01T09:49:30.000Z", UTC); "" for a number.
	Text string
}

// String renders v: "absent" when it is absent, else its text or its
// number with thousands separators (1,883,002).
func (v Value) String() string {
	switch {
	case !v.Present:
		return "absent"
	case v.Text != "":
		return v.Text
	}
	return interval.Count(v.Number)
}

// Difference is one difference between the expected and the actual
// records of a batch.
type Difference struct {
	// BatchID is the batch's id.
	BatchID int64
	// Kind is a changed field, or a batch on one side only.
	Kind Kind
	// Field is the field's path in Spark's JSON: "numInputRows",
	// "eventTime.watermark", "stateOperators" (the number of
	// operators), "stateOperators[0].operatorName",
	// "stateOperators[0].numRowsRemoved",
	// "stateOperators[0].customMetrics.numDroppedDuplicateRows"; "" for
	// a Missing or Extra batch.
	Field string
	// Expected and Actual are the field's values; zero for a Missing or
	// Extra batch.
	Expected, Actual Value
}

// Counts counts batches: every batch (query and batchId) that either
// side executed is one of Batches, and either Equal or Different;
// Missing and Extra are the Different ones that one side lacks.
type Counts struct {
	Batches, Equal, Different, Missing, Extra int
}

func (c *Counts) add(o Counts) {
	c.Batches += o.Batches
	c.Equal += o.Equal
	c.Different += o.Different
	c.Missing += o.Missing
	c.Extra += o.Extra
}

// Input describes one side's records of a query: what was read, and
// what of it was left out and why.
type Input struct {
	// Records is the number of the query's progress records read.
	Records int
	// Idle counts the records without durationMs.addBatch: triggers
	// that ran no batch, ignored.
	Idle int
	// NoBatchID counts the executed records without a batchId, ignored.
	NoBatchID int
	// Repeated counts the records of a batch already read, of the query
	// id compared: each batch counts once (see the package doc).
	Repeated int
	// OtherIDs is the number of other query ids found with the query's
	// name, and OtherIDRecords their executed records, left out.
	OtherIDs, OtherIDRecords int
	// QueryID is the query id whose batches were compared.
	QueryID string
	// Batches is the number of batches compared.
	Batches int
}

// QueryResult is the comparison of one query.
type QueryResult struct {
	// Name is the query's name; "" for an unnamed query.
	Name string
	// ID is the id an unnamed query is known by; "" for a named one.
	ID string
	// Counts counts the query's batches.
	Counts Counts
	// Expected and Actual describe each side's records of the query.
	Expected, Actual Input
	// Differences are the query's differences in batch order, and in
	// the order of the package doc within a batch.
	Differences []Difference
}

// Label names the query for a message: its name (quoted when it has
// spaces or other characters that would make it ambiguous), or "id ID"
// for an unnamed query.
func (q *QueryResult) Label() string {
	if q.Name == "" {
		return "id " + show(q.ID, maxEcho)
	}
	return show(q.Name, maxEcho)
}

// Result is the comparison of every query.
type Result struct {
	// Queries are the queries of either side, by name (unnamed queries
	// last, by id).
	Queries []QueryResult
	// Counts totals the batches of every query.
	Counts Counts
	// IgnoredQueries labels (see QueryResult.Label) the queries that
	// only the actual records hold, left out by
	// Options.IgnoreExtraQueries.
	IgnoredQueries []string
}

// Equal reports whether the two sides agree: no batch differs. A
// comparison of no batch at all is equal (CompareFiles refuses expected
// records without an executed batch).
func (r *Result) Equal() bool { return r.Counts.Different == 0 }

// Compare compares the expected records with the actual ones (see the
// package doc for the rules). Neither slice is modified or kept.
func Compare(expected, actual []progresslog.Progress, opts Options) Result {
	e, a := newSide(0), newSide(0)
	for i := range expected {
		_ = e.add(&expected[i]) // no limit: no error
	}
	for i := range actual {
		_ = a.add(&actual[i])
	}
	return compareSides(e, a, opts)
}

// The counters compared for each state operator, in order.
const (
	cTotal = iota
	cUpdated
	cRemoved
	cDroppedByWatermark
	cDroppedDuplicates
	numCounters
)

// counterFields are the paths of the counters in an operator.
var counterFields = [numCounters]string{
	cTotal:              "numRowsTotal",
	cUpdated:            "numRowsUpdated",
	cRemoved:            "numRowsRemoved",
	cDroppedByWatermark: "numRowsDroppedByWatermark",
	cDroppedDuplicates:  "customMetrics.numDroppedDuplicateRows",
}

// droppedDuplicates is the custom metric of Spark's dedup operators that
// counts the rows dropped as duplicates.
const droppedDuplicates = "numDroppedDuplicateRows"

// operator is what is compared of a state operator.
type operator struct {
	name     string
	counters [numCounters]progresslog.Int
}

// batch is what is compared of an executed batch, and when it was
// written, for the record that wins among several of one batch.
type batch struct {
	at        stamp
	inputRows progresslog.Int
	watermark progresslog.Time
	ops       []operator
}

// stamp orders the records of one side: by timestamp, then by the order
// they were read in.
type stamp struct {
	t   time.Time
	seq int
}

func (s stamp) after(o stamp) bool {
	if !s.t.Equal(o.t) {
		return s.t.After(o.t)
	}
	return s.seq > o.seq
}

// queryKey identifies a query: its name, or its id when it has none.
type queryKey struct {
	name, id string
}

// idRecords are the executed batches of one query id.
type idRecords struct {
	batches  map[int64]*batch
	latest   stamp
	records  int
	repeated int
}

// sideQuery gathers one side's records of a query.
type sideQuery struct {
	in  Input
	ids map[string]*idRecords
}

// side gathers the records of one side.
type side struct {
	queries map[queryKey]*sideQuery
	// seq counts the executed records with a batchId.
	seq     int
	batches int
	// limit bounds the batches held; 0 means no bound.
	limit int
}

func newSide(limit int) *side {
	return &side{queries: map[queryKey]*sideQuery{}, limit: limit}
}

// errLimit is returned by add when a new batch would pass the limit.
type errLimit struct{}

func (errLimit) Error() string { return "too many batches" }

// add takes one record. It fails only when the record is a new batch
// past the side's limit.
func (s *side) add(p *progresslog.Progress) error {
	k := queryKey{name: p.Name}
	if p.Name == "" {
		k.id = p.ID
	}
	q := s.queries[k]
	if q == nil {
		q = &sideQuery{ids: map[string]*idRecords{}}
		s.queries[k] = q
	}
	q.in.Records++
	if !p.DurationMs.AddBatch.OK {
		q.in.Idle++
		return nil
	}
	if !p.BatchID.OK {
		q.in.NoBatchID++
		return nil
	}
	s.seq++
	at := stamp{t: p.Timestamp.Time, seq: s.seq}
	r := q.ids[p.ID]
	if r == nil {
		r = &idRecords{batches: map[int64]*batch{}}
		q.ids[p.ID] = r
	}
	b := r.batches[p.BatchID.Value]
	if b != nil {
		r.repeated++
		r.records++
		if at.after(r.latest) {
			r.latest = at
		}
		if !at.after(b.at) {
			return nil
		}
	} else {
		if s.limit > 0 && s.batches >= s.limit {
			return errLimit{}
		}
		s.batches++
		b = &batch{}
		r.batches[p.BatchID.Value] = b
		r.records++
		if at.after(r.latest) {
			r.latest = at
		}
	}
	b.at = at
	b.inputRows = p.NumInputRows
	b.watermark = p.EventTime.Watermark
	b.ops = b.ops[:0]
	for i := range p.StateOperators {
		o := &p.StateOperators[i]
		op := operator{name: o.OperatorName}
		op.counters[cTotal] = o.NumRowsTotal
		op.counters[cUpdated] = o.NumRowsUpdated
		op.counters[cRemoved] = o.NumRowsRemoved
		op.counters[cDroppedByWatermark] = o.NumRowsDroppedByWatermark
		if v, ok := o.CustomMetrics[droppedDuplicates]; ok {
			op.counters[cDroppedDuplicates] = progresslog.Int{Value: v, OK: true}
		}
		b.ops = append(b.ops, op)
	}
	return nil
}

// batchesOf settles which query id of q is compared (the one with the
// latest executed record), fills in q.in and returns that id's batches;
// nil when q has no executed batch.
func (q *sideQuery) batchesOf() map[int64]*batch {
	var keep *idRecords
	for id, r := range q.ids {
		if keep == nil || r.latest.after(keep.latest) {
			keep, q.in.QueryID = r, id
		}
	}
	if keep == nil {
		return nil
	}
	for _, r := range q.ids {
		if r != keep {
			q.in.OtherIDs++
			q.in.OtherIDRecords += r.records
		}
	}
	q.in.Repeated = keep.repeated
	q.in.Batches = len(keep.batches)
	return keep.batches
}

// compareSides compares the gathered records of two sides.
func compareSides(e, a *side, opts Options) Result {
	var res Result
	keys := make([]queryKey, 0, len(e.queries)+len(a.queries))
	for k := range e.queries {
		keys = append(keys, k)
	}
	for k := range a.queries {
		if _, ok := e.queries[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y queryKey) int {
		if (x.name == "") != (y.name == "") {
			if x.name == "" {
				return 1
			}
			return -1
		}
		if c := strings.Compare(x.name, y.name); c != 0 {
			return c
		}
		return strings.Compare(x.id, y.id)
	})
	for _, k := range keys {
		eq, aq := e.queries[k], a.queries[k]
		if eq == nil && opts.IgnoreExtraQueries {
			q := QueryResult{Name: k.name, ID: k.id}
			res.IgnoredQueries = append(res.IgnoredQueries, q.Label())
			continue
		}
		q := compareQuery(k, eq, aq)
		res.Counts.add(q.Counts)
		res.Queries = append(res.Queries, q)
	}
	return res
}

// compareQuery compares one query's batches; either side may be nil.
func compareQuery(k queryKey, eq, aq *sideQuery) QueryResult {
	q := QueryResult{Name: k.name, ID: k.id}
	var eb, ab map[int64]*batch
	if eq != nil {
		eb = eq.batchesOf()
		q.Expected = eq.in
	}
	if aq != nil {
		ab = aq.batchesOf()
		q.Actual = aq.in
	}
	ids := make([]int64, 0, len(eb)+len(ab))
	for id := range eb {
		ids = append(ids, id)
	}
	for id := range ab {
		if _, ok := eb[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		x, y := eb[id], ab[id]
		q.Counts.Batches++
		switch {
		case y == nil:
			q.Counts.Missing++
			q.Counts.Different++
			q.Differences = append(q.Differences, Difference{BatchID: id, Kind: Missing})
		case x == nil:
			q.Counts.Extra++
			q.Counts.Different++
			q.Differences = append(q.Differences, Difference{BatchID: id, Kind: Extra})
		default:
			n := len(q.Differences)
			q.Differences = diffBatch(q.Differences, id, x, y)
			if len(q.Differences) > n {
				q.Counts.Different++
			} else {
				q.Counts.Equal++
			}
		}
	}
	return q
}

// diffBatch appends the differences between the expected batch x and
// the actual batch y to out.
func diffBatch(out []Difference, id int64, x, y *batch) []Difference {
	add := func(field string, ev, av Value) {
		out = append(out, Difference{BatchID: id, Kind: Changed, Field: field, Expected: ev, Actual: av})
	}
	if x.inputRows != y.inputRows {
		add("numInputRows", intValue(x.inputRows), intValue(y.inputRows))
	}
	if x.watermark.OK != y.watermark.OK || (x.watermark.OK && !x.watermark.Time.Equal(y.watermark.Time)) {
		add("eventTime.watermark", timeValue(x.watermark), timeValue(y.watermark))
	}
	if len(x.ops) != len(y.ops) {
		add("stateOperators", Value{Present: true, Number: int64(len(x.ops))}, Value{Present: true, Number: int64(len(y.ops))})
	}
	for i := range min(len(x.ops), len(y.ops)) {
		xo, yo := &x.ops[i], &y.ops[i]
		prefix := "stateOperators[" + strconv.Itoa(i) + "]."
		if xo.name != yo.name {
			add(prefix+"operatorName", textValue(xo.name), textValue(yo.name))
		}
		for c := range numCounters {
			if xo.counters[c] != yo.counters[c] {
				add(prefix+counterFields[c], intValue(xo.counters[c]), intValue(yo.counters[c]))
			}
		}
	}
	return out
}

func intValue(v progresslog.Int) Value { return Value{Present: v.OK, Number: v.Value} }

func textValue(s string) Value { return Value{Present: s != "", Text: s} }

// timeValue renders a watermark as Spark writes it: UTC, milliseconds
// (more digits only when it has them).
func timeValue(t progresslog.Time) Value {
	if !t.OK {
		return Value{}
	}
	u := t.Time.UTC()
	layout := "2006-01-02T15:04:05.000Z"
	if u.Nanosecond()%int(time.Millisecond) != 0 {
		layout = time.RFC3339Nano
	}
	return Value{Present: true, Text: u.Format(layout)}
}

// plural renders "1 batch" or "2 batches", the count with separators.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%s %s", interval.Count(int64(n)), many)
}
