// Package curve computes a dedup query's whole horizon tradeoff in one
// pass over the scenario's stream: for every horizon in whole seconds up
// to a bound (Spark's watermark delay, Flink's state TTL, Kafka Streams'
// window W, Beam's duration d), the counters a simulation at that horizon
// would report (emitted rows, missed duplicates, false drops by cause,
// late and duplicate drops), exactly, and the peak and final state rows
// and bytes at a chosen set of horizons.
//
// # Why one pass is exact
//
// Nothing that decides a batch depends on the delay D when the query is
// one withWatermark followed by one dedup the watermark reaches, without
// restarts, without a spark: block (whose batch times feed back into the
// batching) and with every watermark above the epoch: batch k's eviction
// watermark is E_k - D, where E_k is the largest event time (whole ms) of
// the data batches before it, its late-row watermark is batch k-1's,
// E_{k-1} - D, and a no-data batch runs after a data batch exactly when
// that batch raised the largest event time, whatever D. So every
// comparison the executor makes is a condition on D alone:
//
//   - a row with event time et (us) in batch k is late iff
//     1000 D <= E_{k-1} - ceil(et / 1000);
//   - a key stored with event time et0 is evicted by batch j iff
//     E_j >= ceil(et0 / 1000) + c 1000 D, with c = 2 for
//     dropDuplicatesWithinWatermark (expiresAt = et0 + D) and c = 1 for
//     dropDuplicates with the event time among its keys; so a later copy
//     in batch k finds it iff E_{k-1} < ceil(et0 / 1000) + c 1000 D.
//
// When every key belongs to one logical event (event_id among the keys),
// an event's verdicts depend on its own rows only: its rows are replayed
// over intervals of D, each comparison splitting an interval at its
// threshold, and when its last copy has arrived each interval's counters
// (emitted, missed, late, duplicate drops, a false drop and its cause as
// metrics.Accountant splits them) are added to difference arrays over D.
// State rows after batch j at delay D are the stored keys not evicted by
// E_j, tracked per delay of Options.StateDelays.
//
// Anything else (a chain of dedups, restarts, a spark: block, a key that
// two events can share, a delay that is not whole seconds) is refused by
// Check with the reason, and the caller simulates instead.
//
// # The other engines
//
// Flink, Kafka Streams and Beam take the rows one at a time, each at its
// arrival (sim/runner's row job), and remember a key by a clock of their
// own; with g the clock at a copy minus the clock at which its key was
// stored, the copy is a duplicate at s seconds of horizon iff (rows.go,
// engines.go):
//
//   - Flink, proctime keep-first without mini-batch: the flag is written
//     when a copy is emitted, at its arrival, and read alive while
//     written + TTL > now: s > floor(g / 1000). Keep-last emits every
//     copy at any TTL. The curve has no state: the modelled heap bytes
//     count expired entries incremental cleanup has not reached, and
//     which it reaches depends on the TTL.
//   - Kafka Streams, the window store at stream time (any partitions): a
//     copy at its task's stream time t finds the put of the previous copy,
//     at t0, iff t - t0 <= floor(W / 2): 1000 s >= 2 g. The key is put at
//     every copy, so no copy's verdict depends on another's.
//   - Beam, the global window, processing or event time: the timer is set
//     to the domain's time + d when a copy is output and fires once the
//     time is past it: s >= ceil(g / 1000). In event time the clock is
//     the input watermark, the largest event time before the row.
//
// A keep-first rule stores the key again when it emits, so an event's
// intervals split as Spark's do. None of these rules drops a row as late
// and every event's first copy is emitted, so no event is lost at any
// horizon. Refused, with the reason: Flink rowtime and mini-batch
// queries, Kafka Streams at record time (a put's segment, of max(W/2,
// 60 s), is a rounding of W) and wall-clock time (punctuations), Beam's
// fixed windows, keys that two events can share.
package curve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// Unit is the curve's resolution: every whole second.
const Unit = time.Second

// ErrUnsupported wraps every reason Check refuses a query for.
var ErrUnsupported = errors.New("the query's verdicts do not reduce to thresholds on the delay")

// shape is what the pass needs of a supported query.
type shape struct {
	// wmCol is the watermark's event-time column, keyCols the dedup's
	// keys; c is 2 for dropDuplicatesWithinWatermark, 1 for
	// dropDuplicates with the event time among its keys.
	wmCol   int
	keyCols []int
	c       int64
	// entryBytes is the modelled bytes of one state entry.
	entryBytes int64
	// oneKey is set when every copy of an event has the same key: the
	// keys are among the columns a resend never changes.
	oneKey bool
}

// Check reports whether query q of sc reduces to thresholds on its
// delay, and why not (an error wrapping ErrUnsupported).
func Check(sc *scenario.Scenario, q scenario.Query) error {
	if !q.IsSpark() {
		_, err := checkRows(sc, q)
		return err
	}
	_, err := check(sc, q)
	return err
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

func check(sc *scenario.Scenario, q scenario.Query) (shape, error) {
	if !q.IsSpark() {
		return shape{}, unsupported("a %s query (only Spark's dedups are computed in one pass)", q.Engine)
	}
	if sc.Spark != nil {
		return shape{}, unsupported("a spark: block (its batch durations feed back into the batching)")
	}
	for _, f := range sc.Faults {
		if f.IsRestart() {
			return shape{}, unsupported("a %s fault (a restart changes the late filter and state)", f.Kind)
		}
	}
	if sc.Trigger.Std() <= 0 {
		return shape{}, unsupported("no trigger")
	}
	c, err := chain.Parse(q.Query)
	if err != nil {
		return shape{}, err
	}
	p, err := chain.PlanFor(c, scenario.Schema())
	if err != nil {
		return shape{}, err
	}
	if len(p.Nodes) != 2 || p.Nodes[0].Op.Kind != chain.WithWatermark || !p.Nodes[1].IsDedup() || p.Redefinition != nil {
		return shape{}, unsupported("not one withWatermark followed by one dedup")
	}
	d := p.Nodes[1]
	s := shape{wmCol: p.Nodes[0].EventTimeColumn, keyCols: d.KeyColumns}
	switch {
	case !d.WatermarkReaches || d.EventTimeColumn != s.wmCol:
		return shape{}, unsupported("the watermark does not reach the dedup on its own column")
	case d.Op.Kind == chain.DropDuplicatesWithinWatermark:
		s.c = 2
	case d.EventTimeInKeys:
		s.c = 1
	default:
		return shape{}, unsupported("dropDuplicates without the event time among its keys never evicts")
	}
	if !slices.Contains(d.KeyColumns, generators.ColEventID) {
		return shape{}, unsupported("event_id is not among the keys, so two events can share a key")
	}
	s.entryBytes = metrics.EntryBytes(d.KeyColumns, sc.Workload.IDs.Kind())
	s.oneKey = !slices.ContainsFunc(d.KeyColumns, func(c int) bool {
		return c != generators.ColEventID && c != generators.ColCustomerID && c != generators.ColPayload
	})
	return s, nil
}

// Options configure Compute.
type Options struct {
	// MaxDelay bounds the delays of the curve [the scenario's duration];
	// whole seconds.
	MaxDelay time.Duration
	// StateDelays are the delays (whole seconds, at most MaxDelay) whose
	// peak and final state the pass tracks.
	StateDelays []time.Duration
	// Progress, if set, receives the simulated seconds as the pass goes.
	Progress func(sec float64)
}

// counters are one delay's D-dependent totals.
type counters struct {
	emitted, missed, late, dup, fdLate, fdBadClock, fdCollide int64
}

// State is one state delay's peak and final state.
type State struct {
	PeakRows, FinalRows int64
}

// Curve is a query's tradeoff at every whole-second delay from 0 to Max.
type Curve struct {
	// Query is the query's name.
	Query string
	// Min and Max are the smallest and the largest delay (horizon) of
	// the curve: Min is 0 for Spark, 1 s for the other engines.
	Min, Max time.Duration
	// InputRows, LogicalEvents and TrueDuplicates do not depend on the
	// delay; nor do Batches and NoDataBatches.
	InputRows, LogicalEvents, TrueDuplicates int64
	Batches, NoDataBatches                   int64
	// BytesPerEntry is the modelled size of one state entry.
	BytesPerEntry int64
	// at[s] holds the counters at s seconds.
	at []counters
	// state holds the tracked delays' state.
	state map[time.Duration]State
}

// Has reports whether the curve holds delay d.
func (c *Curve) Has(d time.Duration) bool {
	return d >= c.Min && d <= c.Max && d%Unit == 0
}

// HasState reports whether the curve tracked d's state.
func (c *Curve) HasState(d time.Duration) bool {
	_, ok := c.state[d]
	return ok
}

// Point is the curve at one delay, in the form of a simulation's summary.
type Point struct {
	Delay   time.Duration
	Summary metrics.QuerySummary
	// HasState is true when the summary's state fields were tracked.
	HasState bool
}

// At returns the curve at delay d; ok is false when d is not on it.
func (c *Curve) At(d time.Duration) (Point, bool) {
	if !c.Has(d) {
		return Point{}, false
	}
	k := c.at[d/Unit]
	secs := d.Seconds()
	s := metrics.QuerySummary{
		Name: c.Query, Delay: &secs,
		InputRows: c.InputRows, LogicalEvents: c.LogicalEvents, TrueDuplicates: c.TrueDuplicates,
		EmittedRows: k.emitted, MissedDuplicates: k.missed,
		FalseDrops:         k.fdLate + k.fdBadClock + k.fdCollide,
		FalseDropsByCause:  metrics.FalseDropCauses{Late: k.fdLate, BadClock: k.fdBadClock, Collision: k.fdCollide},
		DroppedByWatermark: k.late, DroppedDuplicates: k.dup,
		Batches: c.Batches, NoDataBatches: c.NoDataBatches,
		BytesPerEntry: []int64{c.BytesPerEntry},
	}
	if s.TrueDuplicates > 0 {
		s.MissedDuplicateRate = float64(s.MissedDuplicates) / float64(s.TrueDuplicates)
	}
	if s.LogicalEvents > 0 {
		s.FalseDropRate = float64(s.FalseDrops) / float64(s.LogicalEvents)
	}
	st, has := c.state[d]
	if has {
		s.PeakStateRows, s.FinalStateRows = st.PeakRows, st.FinalRows
		s.PeakStateBytes, s.FinalStateBytes = st.PeakRows*c.BytesPerEntry, st.FinalRows*c.BytesPerEntry
	}
	return Point{Delay: d, Summary: s, HasState: has}, true
}

// Compute runs the pass of query name of sc (refused as Check refuses).
func Compute(ctx context.Context, sc *scenario.Scenario, name string, opts Options) (*Curve, error) {
	qi := slices.IndexFunc(sc.Queries, func(q scenario.Query) bool { return q.Name == name })
	if qi < 0 {
		return nil, fmt.Errorf("no query %q in %s", name, sc.File)
	}
	maxD := opts.MaxDelay
	if maxD <= 0 {
		maxD = sc.Duration.Std()
	}
	maxD = maxD / Unit * Unit
	if q := sc.Queries[qi]; !q.IsSpark() {
		return computeRows(ctx, sc, q, maxD, opts)
	}
	sh, err := check(sc, sc.Queries[qi])
	if err != nil {
		return nil, err
	}
	// Every watermark must be above the epoch for the batching not to
	// depend on the delay: the event times start near sc.Start.
	if sc.Start.UnixMilli()-maxD.Milliseconds() <= 0 {
		return nil, unsupported("delays up to %s reach back before the epoch from the scenario's start", maxD)
	}
	// The scenario's rows: generated, or its event log's.
	src, err := generators.NewSource(sc.Generator())
	if err != nil {
		return nil, err
	}
	p := newPass(sc, sh, maxD, opts)
	if err := p.run(ctx, src); err != nil {
		return nil, err
	}
	if err := generators.SourceErr(src); err != nil {
		return nil, err
	}
	out := &Curve{Query: name, Max: maxD, InputRows: p.inputRows, LogicalEvents: p.logical, TrueDuplicates: p.trueDups,
		Batches: p.batches, NoDataBatches: p.noData, BytesPerEntry: sh.entryBytes,
		state: map[time.Duration]State{}}
	out.at = p.totals()
	for i, d := range p.stateDelays {
		out.state[d] = State{PeakRows: p.peaks[i], FinalRows: p.stateRows(i)}
	}
	return out, nil
}
