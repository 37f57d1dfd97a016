package calibrate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"

	"github.com/dedupsim/dedupsim/metrics/progresslog"

	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// Duration is the duration of a batch that the model is fitted to.
type Duration int

const (
	// TriggerExecution is durationMs.triggerExecution, the whole trigger:
	// what decides whether a query keeps up with its trigger interval.
	TriggerExecution Duration = iota
	// AddBatch is durationMs.addBatch, the part of the trigger that runs
	// the batch through the query and the sink, without the offset and
	// commit logs and planning.
	AddBatch
)

// String returns the durationMs key of d.
func (d Duration) String() string {
	if d == AddBatch {
		return "addBatch"
	}
	return "triggerExecution"
}

// Options configure a fit.
type Options struct {
	// Source names the log in errors and in the result.
	Source string
	// Query selects the query to fit, by id or by name, when the log
	// holds several; "" fits the only one. The records of one name are
	// one query whatever their ids (a query restarted from a new
	// checkpoint gets a new id); an unnamed query is known by its id.
	Query string
	// Executors and CoresPerExecutor describe the cluster the log came
	// from (0 means 1): the per-task costs are the cluster's costs times
	// their product.
	Executors, CoresPerExecutor int
	// Duration is the duration fitted (TriggerExecution by default).
	Duration Duration
	// IncludeWarmup keeps the first batch of each run (each runId, batch
	// 0 the first of the first run). By default it is left out: it pays
	// for JIT compilation, class loading and the first loads of the state
	// stores, which the model does not describe.
	IncludeWarmup bool
	// Defaults are the coefficients a term the log cannot identify keeps;
	// nil means DefaultsOf of the provider, else DefaultCosts.
	Defaults *sparkmodel.Costs
	// Provider is the state store provider the log came from ("hdfs" or
	// "rocksdb"), whose defaults DefaultsOf gives; "" detects it from the
	// log (see Result.Provider).
	Provider string
	// DefaultsOf returns a provider's default coefficients, for a fit
	// without Defaults; nil means DefaultCosts for every provider.
	DefaultsOf func(provider string) sparkmodel.Costs
	// DedupeScans says whether a dedupe operator of a watermarked query
	// visits its whole store every batch (its keys hold the watermarked
	// event time), which the log does not say; see ScanRule.
	DedupeScans ScanRule
}

// ScanRule is how Fit decides whether a dedupe operator scans its store.
// dedupeWithinWatermark always scans; no operator of a query without a
// watermark (no eventTime.watermark in its records) ever does, since
// Spark's removeKeysOlderThanWatermark is then a no-op.
type ScanRule int

const (
	// ScanInferred: a dedupe operator of a watermarked query scans when
	// its numRowsReadDuringEviction (Spark 4.x) is above 0 in some batch,
	// or, in a log without that metric, when it removed a row in some
	// batch (only an operator with the event time among its keys can
	// evict). One that removed nothing is then taken as not scanning; say
	// ScanAlways when the log is too short for it to have evicted.
	ScanInferred ScanRule = iota
	// ScanAlways: every dedupe operator of a watermarked query scans.
	ScanAlways
	// ScanNever: no dedupe operator scans.
	ScanNever
)

// String names the rule as calibrate's --dedupe-scans flag does.
func (s ScanRule) String() string {
	switch s {
	case ScanAlways:
		return "always"
	case ScanNever:
		return "never"
	}
	return "inferred"
}

// The state store providers Fit detects from a log's custom metrics.
const (
	ProviderHDFS    = "hdfs"
	ProviderRocksDB = "rocksdb"
)

// MinBatchesPerTerm is how many batches the fit needs per term it
// estimates.
const MinBatchesPerTerm = 2

// MaxBatches bounds the batches of one fit (the same as
// progresslog.MaxRecords); a batch takes about 200 bytes.
const MaxBatches = progresslog.MaxRecords

// minIndependence is how much of a term's column (by norm, after scaling)
// must remain once the terms before it are projected out for the term to
// count as identified: below it, the log cannot tell the term's cost from
// theirs.
const minIndependence = 1e-3

// Error is a problem with a fit: one line, "SOURCE: MESSAGE", or
// "SOURCE: line N: MESSAGE" for a problem with one record.
type Error struct {
	Source string
	Line   int
	Msg    string
}

// Error returns the one-line form of e.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: %s", echo(e.Source), e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", echo(e.Source), e.Msg)
}

// maxEcho is how many characters of a name from the log or the caller a
// message or a YAML comment echoes.
const maxEcho = 80

// echo renders a name for a message or a YAML comment: as is when it is
// at most maxEcho printable characters, else in double quotes with
// control characters, invalid UTF-8 and quotes escaped (strconv.Quote),
// cut to maxEcho characters and followed by "..." when longer.
func echo(s string) string {
	plain := s != "" && utf8.RuneCountInString(s) <= maxEcho
	for _, r := range s {
		if r == utf8.RuneError || r == '"' || (r != ' ' && !unicode.IsPrint(r)) {
			plain = false
		}
	}
	if plain {
		return s
	}
	i, k := 0, 0
	for ; k < maxEcho && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i >= len(s) {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:i]) + "..."
}

// batch is one executed micro-batch as the fit sees it: its duration and
// the model's counts, summed over the state operators, with the keys each
// operator's eviction would visit kept apart until the fit knows which
// operators scan.
type batch struct {
	duration float64
	rows     float64 // each operator's input rows, summed
	newKeys  float64
	removed  float64
	parts    float64
	// visited is, per operator (by position), numRowsTotal +
	// numRowsRemoved (numRowsTotal when the log has no numRowsRemoved).
	visited []float64
	// watermark is true when the record has eventTime.watermark.
	watermark bool
}

// query collects the batches of one query: the records of one name, or
// of one id for an unnamed query (a query restarted from a new checkpoint
// gets a new id and keeps its name).
type query struct {
	name                      string
	ids                       []string
	operators                 []string
	batches                   []batch
	records                   int
	idle, warmup, repeated    int
	noRemoved, noPartitions   bool // some batch does not report them
	noOperators, anyOperators bool
	seen                      map[string]bool
	runs                      map[string]bool
	// opNames is each operator position's name, as first seen;
	// opRemoved whether it ever removed a row.
	opNames   []string
	opRemoved []bool
	// opEvictReads is whether an operator's numRowsReadDuringEviction
	// (Spark 4.x) was ever above 0; opEvictMetric whether it reported it.
	opEvictReads, opEvictMetric []bool
	// inputRowsUsed: some operator's input had to be taken as the
	// batch's numInputRows (no numDroppedDuplicateRows).
	inputRowsUsed bool
	// anyDuration: some batch's duration is not 0.
	anyDuration bool
	// rocksdb, hdfs: the custom metrics of the providers seen.
	rocksdb, hdfs bool
}

// collector sorts records into queries and turns them into batches.
type collector struct {
	opts    Options
	queries []*query
	byKey   map[string]*query
	batches int
}

// Fit fits the cost model to records, the progress records of one log.
//
// It keeps the query's executed batches: a record without
// durationMs.addBatch is a trigger that ran no batch and is left out, a
// no-data batch (numInputRows 0, run to evict) is kept, the first batch
// of each run is left out unless opts.IncludeWarmup, and a record seen
// before (same runId, batchId and timestamp, as when logs overlap) is
// counted once.
//
// Terms that the log cannot identify keep their default: a term whose
// count is absent from the log (older Spark versions leave out
// numRowsRemoved and numShufflePartitions), always 0, never varies (the
// number of partitions is fixed by the checkpoint), or moves in step with
// the terms before it (every row a new key) — precisely, less than 0.1%
// of its column remains once the columns before it in Term order are
// projected out. Their default cost is taken out of the durations, and
// the identified terms are fitted to the rest by non-negative least
// squares (Lawson-Hanson) on cluster-level costs, then converted to
// per-task costs with the slots.
//
// The fit is weighted: batch durations vary by a share of themselves, so
// a first fit gives each batch its expected duration and a second weighs
// each batch by its inverse (feasible weighted least squares). The
// standard errors come from the second.
//
// A fit needs MinBatchesPerTerm batches per identified term, the overhead
// included; fewer is an error.
func Fit(records []progresslog.Progress, opts Options) (Result, error) {
	c, err := newCollector(opts)
	if err != nil {
		return Result{}, err
	}
	for i := range records {
		if err := c.add(&records[i]); err != nil {
			return Result{}, err
		}
	}
	return c.fit()
}

// FitReader reads a progress log (see progresslog.Reader) and fits the
// model to it, as Fit does, holding only the batches.
func FitReader(r io.Reader, opts Options) (Result, error) {
	c, err := newCollector(opts)
	if err != nil {
		return Result{}, err
	}
	rd := progresslog.NewReader(r, opts.Source)
	for {
		p, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Result{}, err
		}
		if err := c.add(&p); err != nil {
			return Result{}, err
		}
	}
	return c.fit()
}

func newCollector(opts Options) (*collector, error) {
	var bad []string
	if opts.Executors < 0 {
		bad = append(bad, fmt.Sprintf("executors %d, want 1 or more (0 means 1)", opts.Executors))
	}
	if opts.CoresPerExecutor < 0 {
		bad = append(bad, fmt.Sprintf("cores per executor %d, want 1 or more (0 means 1)", opts.CoresPerExecutor))
	}
	if opts.Duration != TriggerExecution && opts.Duration != AddBatch {
		bad = append(bad, fmt.Sprintf("duration %d, want TriggerExecution or AddBatch", opts.Duration))
	}
	if opts.DedupeScans < ScanInferred || opts.DedupeScans > ScanNever {
		bad = append(bad, fmt.Sprintf("dedupe scans %d, want ScanInferred, ScanAlways or ScanNever", opts.DedupeScans))
	}
	if opts.Provider != "" && opts.Provider != ProviderHDFS && opts.Provider != ProviderRocksDB {
		bad = append(bad, fmt.Sprintf("provider %s, want %s or %s (or empty: detected from the log)", echo(opts.Provider), ProviderHDFS, ProviderRocksDB))
	}
	if d := opts.Defaults; d != nil {
		for t := range sparkmodel.NumTerms {
			if v := d.Get(t); v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				bad = append(bad, fmt.Sprintf("default %s %v, want a cost (0 or more)", t, v))
			}
		}
	}
	if len(bad) > 0 {
		return nil, &Error{Source: opts.Source, Msg: "options: " + strings.Join(bad, "; ")}
	}
	if opts.Executors == 0 {
		opts.Executors = 1
	}
	if opts.CoresPerExecutor == 0 {
		opts.CoresPerExecutor = 1
	}
	return &collector{opts: opts, byKey: map[string]*query{}}, nil
}

func (c *collector) errorf(line int, format string, args ...any) error {
	return &Error{Source: c.opts.Source, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// add takes one record.
func (c *collector) add(p *progresslog.Progress) error {
	if c.opts.Query != "" && p.ID != c.opts.Query && p.Name != c.opts.Query {
		return nil
	}
	key := p.Name
	if key == "" {
		key = "id " + p.ID
	}
	q := c.byKey[key]
	if q == nil {
		q = &query{name: p.Name, seen: map[string]bool{}, runs: map[string]bool{}}
		c.byKey[key] = q
		c.queries = append(c.queries, q)
	}
	if !slices.Contains(q.ids, p.ID) {
		q.ids = append(q.ids, p.ID)
	}
	q.records++
	if !p.DurationMs.AddBatch.OK {
		q.idle++
		return nil
	}
	seen := fmt.Sprintf("%s/%d/%t/%s", p.RunID, p.BatchID.Value, p.BatchID.OK, p.Timestamp.Raw)
	if q.seen[seen] {
		q.repeated++
		return nil
	}
	q.seen[seen] = true
	if !q.runs[p.RunID] {
		q.runs[p.RunID] = true
		if !c.opts.IncludeWarmup {
			q.warmup++
			return nil
		}
	}
	b, err := c.batch(p, q)
	if err != nil {
		return err
	}
	if c.batches >= MaxBatches {
		return c.errorf(p.Line, "more than %d batches, the limit of one fit", MaxBatches)
	}
	c.batches++
	q.batches = append(q.batches, b)
	return nil
}

// count returns a counter of a record that the model needs.
func (c *collector) count(p *progresslog.Progress, v progresslog.Int, path string) (float64, error) {
	if !v.OK {
		return 0, c.errorf(p.Line, "%s is absent; the cost model needs it", path)
	}
	if v.Value < 0 {
		return 0, c.errorf(p.Line, "%s is %d, want a count (0 or more)", path, v.Value)
	}
	return float64(v.Value), nil
}

// batch turns an executed batch's record into the model's counts.
func (c *collector) batch(p *progresslog.Progress, q *query) (batch, error) {
	var b batch
	var err error
	dur, path := p.DurationMs.TriggerExecution, "durationMs.triggerExecution"
	if c.opts.Duration == AddBatch {
		dur, path = p.DurationMs.AddBatch, "durationMs.addBatch"
	}
	if b.duration, err = c.count(p, dur, path); err != nil {
		return b, err
	}
	inputRows, err := c.count(p, p.NumInputRows, "numInputRows")
	if err != nil {
		return b, err
	}
	if b.duration > 0 {
		q.anyDuration = true
	}
	b.watermark = p.EventTime.Watermark.OK
	if len(p.StateOperators) == 0 {
		q.noOperators = true
	}
	b.visited = make([]float64, len(p.StateOperators))
	for i, op := range p.StateOperators {
		q.anyOperators = true
		name := op.OperatorName
		if name == "" {
			name = "(unnamed)"
		}
		if !slices.Contains(q.operators, name) {
			q.operators = append(q.operators, name)
		}
		if i == len(q.opNames) {
			q.opNames = append(q.opNames, name)
			q.opRemoved = append(q.opRemoved, false)
			q.opEvictReads = append(q.opEvictReads, false)
			q.opEvictMetric = append(q.opEvictMetric, false)
		}
		if v, ok := op.CustomMetrics["numRowsReadDuringEviction"]; ok {
			q.opEvictMetric[i] = true
			q.opEvictReads[i] = q.opEvictReads[i] || v > 0
		}
		for m := range op.CustomMetrics {
			switch {
			case strings.HasPrefix(m, "rocksdb"):
				q.rocksdb = true
			case strings.HasPrefix(m, "loadedMapCache"), m == "stateOnCurrentVersionSizeBytes":
				q.hdfs = true
			}
		}
		at := fmt.Sprintf("stateOperators[%d].", i)
		updated, err := c.count(p, op.NumRowsUpdated, at+"numRowsUpdated")
		if err != nil {
			return b, err
		}
		total, err := c.count(p, op.NumRowsTotal, at+"numRowsTotal")
		if err != nil {
			return b, err
		}
		// A dedup operator's input rows are each late, new or a
		// duplicate; Spark reports no other per-operator input count.
		dups, hasDups := op.CustomMetrics["numDroppedDuplicateRows"]
		if hasDups && op.NumRowsDroppedByWatermark.OK {
			late, err := c.count(p, op.NumRowsDroppedByWatermark, at+"numRowsDroppedByWatermark")
			if err != nil {
				return b, err
			}
			if dups < 0 {
				return b, c.errorf(p.Line, "%scustomMetrics.numDroppedDuplicateRows is %d, want a count (0 or more)", at, dups)
			}
			b.rows += late + updated + float64(dups)
		} else {
			q.inputRowsUsed = true
			b.rows += inputRows
		}
		b.newKeys += updated
		visited := total
		if op.NumRowsRemoved.OK {
			removed, err := c.count(p, op.NumRowsRemoved, at+"numRowsRemoved")
			if err != nil {
				return b, err
			}
			b.removed += removed
			visited += removed
			if removed > 0 && i < len(q.opRemoved) {
				q.opRemoved[i] = true
			}
		} else {
			q.noRemoved = true
		}
		b.visited[i] = visited
		if op.NumShufflePartitions.OK {
			parts, err := c.count(p, op.NumShufflePartitions, at+"numShufflePartitions")
			if err != nil {
				return b, err
			}
			b.parts += parts
		} else {
			q.noPartitions = true
		}
	}
	return b, nil
}

// scans decides, per operator position, whether the operator visits its
// store every batch, and says why (see ScanRule).
func (c *collector) scans(q *query, watermarked bool) []OperatorScan {
	out := make([]OperatorScan, len(q.opNames))
	for i, name := range q.opNames {
		o := OperatorScan{Operator: name}
		switch {
		case !watermarked:
			o.Why = "no watermark in the log: Spark never evicts"
		case name == "dedupeWithinWatermark":
			o.Scans, o.Why = true, "dedupeWithinWatermark: evicts by expiry every batch"
		case c.opts.DedupeScans == ScanAlways:
			o.Scans, o.Why = true, "told: dedupe operators scan"
		case c.opts.DedupeScans == ScanNever:
			o.Why = "told: dedupe operators do not scan"
		case q.opEvictReads[i]:
			o.Scans, o.Why = true, "read rows during eviction in the log (numRowsReadDuringEviction)"
		case q.opEvictMetric[i]:
			o.Why = "read no row during eviction in the log (numRowsReadDuringEviction 0 in every batch)"
		case q.opRemoved[i]:
			o.Scans, o.Why = true, "removed rows in the log: the event time is among its keys"
		default:
			o.Why = "removed no row in the log: taken as without the event time among its keys (say so if it has it)"
		}
		out[i] = o
	}
	return out
}

// provider returns the state store provider of the fit and where it comes
// from: the options', else the log's custom metrics, else hdfs.
func (c *collector) provider(q *query) (string, string) {
	detected := ""
	switch {
	case q.rocksdb:
		detected = ProviderRocksDB
	case q.hdfs:
		detected = ProviderHDFS
	}
	switch {
	case c.opts.Provider != "" && detected != "" && detected != c.opts.Provider:
		return c.opts.Provider, "as given, although the log's custom metrics are " + detected + "'s"
	case c.opts.Provider != "":
		return c.opts.Provider, "as given"
	case detected == ProviderRocksDB:
		return detected, "from the log's rocksdb* custom metrics"
	case detected == ProviderHDFS:
		return detected, "from the log's loadedMapCache* custom metrics"
	}
	return ProviderHDFS, "no provider's custom metrics in the log: Spark's default"
}

// pick returns the query to fit.
func (c *collector) pick() (*query, error) {
	switch {
	case len(c.queries) == 1:
		return c.queries[0], nil
	case len(c.queries) == 0 && c.opts.Query != "":
		return nil, c.errorf(0, "no progress record of query %s (by id or name)", echo(c.opts.Query))
	case len(c.queries) == 0:
		return nil, c.errorf(0, "no progress record")
	}
	names := make([]string, 0, len(c.queries))
	for _, q := range c.queries {
		names = append(names, q.describe())
	}
	return nil, c.errorf(0, "the log holds %d queries: %s; choose one by id or name", len(c.queries), strings.Join(names, ", "))
}

// describe names q in messages: its name, else its id (see echo).
func (q *query) describe() string {
	if q.name != "" {
		return echo(q.name)
	}
	return echo(q.ids[0])
}

// fit fits the model to the collected batches.
func (c *collector) fit() (Result, error) {
	q, err := c.pick()
	if err != nil {
		return Result{}, err
	}
	o := c.opts
	slots := o.Executors * o.CoresPerExecutor
	res := Result{
		Source: o.Source, QueryName: q.name, QueryIDs: q.ids, Operators: q.operators,
		Duration: o.Duration, Executors: o.Executors, CoresPerExecutor: o.CoresPerExecutor, Slots: slots,
		Records: q.records, Batches: len(q.batches), Idle: q.idle, Warmup: q.warmup, Repeated: q.repeated,
	}
	if q.noOperators && !q.anyOperators {
		return Result{}, c.errorf(0, "query %s has no state operators: the cost model describes stateful (dedup) queries", q.describe())
	}
	n := len(q.batches)
	if n > 0 && !q.anyDuration {
		return Result{}, c.errorf(0, "every one of query %s's %d batches lasted 0 ms (durationMs.%s): nothing to fit", q.describe(), n, o.Duration)
	}
	watermarked := false
	for _, b := range q.batches {
		watermarked = watermarked || b.watermark
	}
	res.Scans = c.scans(q, watermarked)
	res.InputRowsFromBatch = q.inputRowsUsed
	res.Provider, res.ProviderFrom = c.provider(q)
	defaults := sparkmodel.DefaultCosts(sparkmodel.HDFS)
	switch {
	case o.Defaults != nil:
		defaults = *o.Defaults
	case o.DefaultsOf != nil:
		defaults = o.DefaultsOf(res.Provider)
	}
	// The design matrix, in cluster-level units: per batch, the count of
	// each term; a coefficient is then milliseconds per count for the
	// whole cluster.
	x := mat.NewDense(max(n, 1), int(sparkmodel.NumTerms), nil)
	y := mat.NewVecDense(max(n, 1), nil)
	for i, b := range q.batches {
		visited := 0.0
		for k, v := range b.visited {
			if b.watermark && k < len(res.Scans) && res.Scans[k].Scans {
				visited += v
			}
		}
		x.SetRow(i, []float64{1, b.rows, b.newKeys, visited, b.removed, b.parts})
		y.SetVec(i, b.duration)
	}
	// scale converts a cluster-level coefficient to the per-task one.
	scale := [sparkmodel.NumTerms]float64{1, 1e6 * float64(slots), 1e6 * float64(slots), 1e6 * float64(slots), 1e6 * float64(slots), float64(slots)}

	coefs := make([]Coefficient, sparkmodel.NumTerms)
	var free []sparkmodel.Term
	for t := range sparkmodel.NumTerms {
		coefs[t] = Coefficient{Term: t, Value: defaults.Get(t)}
		reason := ""
		switch {
		case n == 0:
			reason = "no batch"
		case t == sparkmodel.RemoveKey && q.noRemoved:
			reason = "absent from the log (numRowsRemoved)"
		case t == sparkmodel.PartitionCommit && q.noPartitions:
			reason = "absent from the log (numShufflePartitions)"
		case t == sparkmodel.ScanKey && !slices.ContainsFunc(res.Scans, func(s OperatorScan) bool { return s.Scans }):
			reason = "no operator scans its store (see scans)"
		default:
			reason = independence(x, free, t)
		}
		// A term that never varies is part of the batch's constant
		// cost, which the log cannot split: the overhead takes it whole
		// rather than have a default taken out of it (which could ask for
		// a negative overhead).
		if reason == "never varies" && len(free) > 0 && free[0] == sparkmodel.BatchOverhead {
			coefs[t].Value, coefs[t].Reason, coefs[t].InOverhead = 0, reason, true
			res.Merged = append(res.Merged, t)
			continue
		}
		if reason != "" {
			coefs[t].Reason = reason
			continue
		}
		coefs[t].Identified = true
		free = append(free, t)
	}
	if need := MinBatchesPerTerm * len(free); n < need || n == 0 {
		of := fmt.Sprintf("of query %s's %d records: %d idle triggers, %d warm-up, %d repeated", q.describe(), q.records, q.idle, q.warmup, q.repeated)
		if n == 0 {
			return Result{}, c.errorf(0, "no batch to fit (%s)", of)
		}
		return Result{}, c.errorf(0, "too few batches to fit: %d usable (%s); %d terms to fit need at least %d", n, of, len(free), need)
	}

	// Take the defaults' share out of the durations, fit the rest.
	target := mat.VecDenseCopyOf(y)
	for t := range sparkmodel.NumTerms {
		if !coefs[t].Identified {
			var col mat.VecDense
			col.ScaleVec(coefs[t].Value/scale[t], x.ColView(int(t)))
			target.SubVec(target, &col)
		}
	}
	// Batch durations vary by a share of themselves (a long batch's
	// stragglers and pauses are longer), so a first fit gives each batch
	// its expected duration, and the second weighs each batch by its
	// inverse: relative errors count the same, long batches do not drown
	// short ones, and the standard errors hold.
	weights := make([]float64, n)
	for i := range weights {
		weights[i] = 1
	}
	var mean float64
	for i := 0; i < n; i++ {
		mean += y.AtVec(i)
	}
	mean /= float64(n)
	var fitted []float64
	for pass := 0; pass < 2; pass++ {
		values, positive, se, err := solve(x, target, free, weights)
		if err != nil {
			return Result{}, c.errorf(0, "fitting: %v", err)
		}
		for k, t := range free {
			coefs[t].Value = values[k] * scale[t]
			coefs[t].AtZero = !positive[k]
			coefs[t].StdErr = se[k] * scale[t]
		}
		fitted = predict(x, coefs, scale)
		for i, f := range fitted {
			weights[i] = 1 / max(f, 0.01*mean, 1)
		}
	}
	res.Coefficients = coefs

	// The model's residuals, every term at its value.
	resid := make([]float64, n)
	var ssRes, ssTot float64
	for i := 0; i < n; i++ {
		r := y.AtVec(i) - fitted[i]
		resid[i] = math.Abs(r)
		ssRes += r * r
		d := y.AtVec(i) - mean
		ssTot += d * d
	}
	switch {
	case ssTot > 0:
		res.R2 = 1 - ssRes/ssTot
	case ssRes == 0:
		res.R2 = 1
	}
	slices.Sort(resid)
	res.Residuals = Percentiles{P50: rank(resid, 0.50), P90: rank(resid, 0.90), P99: rank(resid, 0.99)}
	return res, nil
}

// solve fits the free terms' columns of x to target by non-negative least
// squares, each row weighted, and returns the cluster-level coefficients,
// which of them are positive (not held at zero) and their standard errors.
func solve(x *mat.Dense, target *mat.VecDense, free []sparkmodel.Term, weights []float64) ([]float64, []bool, []float64, error) {
	n := len(weights)
	a := mat.NewDense(n, len(free), nil)
	b := mat.NewVecDense(n, nil)
	for i := 0; i < n; i++ {
		b.SetVec(i, target.AtVec(i)*weights[i])
		for k, t := range free {
			a.Set(i, k, x.At(i, int(t))*weights[i])
		}
	}
	// Columns of unit norm: the counts span ten orders of magnitude.
	norms := make([]float64, len(free))
	for k := range free {
		norms[k] = mat.Norm(a.ColView(k), 2)
		for i := 0; i < n; i++ {
			a.Set(i, k, a.At(i, k)/norms[k])
		}
	}
	sol, positive, err := nnls(a, b)
	if err != nil {
		return nil, nil, nil, err
	}
	se := stdErrors(a, b, sol, positive)
	values := make([]float64, len(free))
	for k := range free {
		values[k] = sol.AtVec(k) / norms[k]
		se[k] /= norms[k]
	}
	return values, positive, se, nil
}

// predict returns the model's duration of each batch (each row of x),
// every term at its coefficient's value.
func predict(x *mat.Dense, coefs []Coefficient, scale [sparkmodel.NumTerms]float64) []float64 {
	n, _ := x.Dims()
	out := make([]float64, n)
	for i := range out {
		for t := range sparkmodel.NumTerms {
			out[i] += coefs[t].Value / scale[t] * x.At(i, int(t))
		}
	}
	return out
}

// independence returns "" when term t's column of x is independent
// enough of the columns of the terms in free (see minIndependence), else
// why it is not.
func independence(x *mat.Dense, free []sparkmodel.Term, t sparkmodel.Term) string {
	n, _ := x.Dims()
	col := mat.VecDenseCopyOf(x.ColView(int(t)))
	norm := mat.Norm(col, 2)
	if norm == 0 {
		return "always 0 in the log"
	}
	col.ScaleVec(1/norm, col)
	if len(free) == 0 {
		return ""
	}
	a := mat.NewDense(n, len(free), nil)
	norms := make([]float64, len(free))
	for k, f := range free {
		c := x.ColView(int(f))
		norms[k] = mat.Norm(c, 2)
		for i := 0; i < n; i++ {
			a.Set(i, k, c.AtVec(i)/norms[k])
		}
	}
	var beta, proj, rest mat.VecDense
	if err := beta.SolveVec(a, col); err != nil {
		return "cannot be told from the terms before it"
	}
	proj.MulVec(a, &beta)
	rest.SubVec(col, &proj)
	if mat.Norm(&rest, 2) >= minIndependence {
		return ""
	}
	var with []string
	for k, f := range free {
		if f != sparkmodel.BatchOverhead && math.Abs(beta.AtVec(k)) > minIndependence {
			with = append(with, f.String())
		}
	}
	if len(with) == 0 {
		return "never varies"
	}
	return "moves with " + strings.Join(with, " and ")
}

// stdErrors returns the standard errors of the free (non-zero) entries of
// the solution of a x = b, from the unconstrained least squares over them:
// sqrt(diag((AᵀA)⁻¹) × s²), s² the residual variance; 0 for the others.
func stdErrors(a *mat.Dense, b, x *mat.VecDense, free []bool) []float64 {
	n, k := a.Dims()
	out := make([]float64, k)
	var cols []int
	for j := 0; j < k; j++ {
		if free[j] {
			cols = append(cols, j)
		}
	}
	if len(cols) == 0 || n <= len(cols) {
		return out
	}
	var r mat.VecDense
	r.MulVec(a, x)
	r.SubVec(b, &r)
	s2 := mat.Dot(&r, &r) / float64(n-len(cols))
	sub := mat.NewDense(n, len(cols), nil)
	for i, c := range cols {
		sub.SetCol(i, mat.Col(nil, c, a))
	}
	var ata mat.SymDense
	ata.SymOuterK(1, sub.T())
	var chol mat.Cholesky
	if !chol.Factorize(&ata) {
		return out
	}
	var inv mat.SymDense
	if err := chol.InverseTo(&inv); err != nil {
		return out
	}
	for i, c := range cols {
		out[c] = math.Sqrt(inv.At(i, i) * s2)
	}
	return out
}

// rank returns the p-quantile of sorted by nearest rank.
func rank(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
