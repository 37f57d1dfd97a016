package reports

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// Findings returns what the numbers of a results folder say, one sentence
// per finding, in the summary's query order: for each query, which
// duplicates it let through, which events it lost, what its state and its
// watermark did; in a sweep, the same summarised across the delays of each
// query. ts (timeseries.csv) lets findings place losses relative to the
// run's markers; without it they rest on the totals alone.
//
// A finding states a cause only when the numbers and the scenario show it
// (every re-stamped copy emitted by a query keyed on event_time, a final
// state holding a key for every emitted row in a query without a
// watermark, losses counted after a bad clock that put the watermark ahead
// of processing time) and hedges a likely one ("most likely"); it never
// guesses beyond that. Queries that share a finding word for word (two
// queries losing the same events to one bad clock) share one sentence.
func Findings(s *metrics.Summary, ts []metrics.BatchRecord) []string {
	res := newResults(s, ts)
	var out []string
	noDups := len(res.runs) > 0
	for _, r := range res.runs {
		noDups = noDups && r.sum.TrueDuplicates == 0
	}
	if noDups {
		out = append(out, "The input held no duplicate copies, so this run does not test what the queries catch; only their losses and state are measured.")
	}
	// Collect each query's findings first: several queries often share
	// one (three queries that all lost the same events to one bad clock),
	// and then one sentence names them all, where the first would stand.
	type item struct {
		name string
		f    finding
	}
	var items []item
	for _, name := range res.queryNames() {
		var swept []*run
		for _, r := range res.runsOf(name) {
			if r.sum.Delay != nil {
				swept = append(swept, r)
			}
		}
		if len(swept) >= 2 {
			for _, f := range res.sweepFindings(swept) {
				items = append(items, item{name, plain(f)})
			}
			continue
		}
		for _, r := range res.runsOf(name) {
			for _, f := range res.runFindings(r) {
				items = append(items, item{name, f})
			}
		}
	}
	sharers := map[string][]string{} // template -> names, in order
	for _, it := range items {
		if it.f.many != "" {
			sharers[it.f.one] = append(sharers[it.f.one], it.name)
		}
	}
	done := map[string]bool{}
	for _, it := range items {
		names := sharers[it.f.one]
		switch {
		case it.f.many == "" || len(names) == 1:
			out = append(out, strings.ReplaceAll(it.f.one, subject, it.name))
		case !done[it.f.one]:
			done[it.f.one] = true
			out = append(out, strings.ReplaceAll(it.f.many, subject, joinNames(names)))
		}
	}
	return out
}

// subject stands for the query's name in a finding's template.
const subject = "\x00Q"

// finding is one sentence, as a template in which subject stands for the
// query. many, when set, is the same finding for several queries at once
// (subject then stands for their names joined); findings whose one
// template is equal are merged into one sentence.
type finding struct{ one, many string }

// plain is a finding that is never merged.
func plain(s string) finding { return finding{one: s} }

// named is a finding about one query only, already with its name.
func named(name, s string) finding { return finding{one: strings.ReplaceAll(s, subject, name)} }

// joinNames lists names as "a, b and c".
func joinNames(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// runFindings is what one run of one query shows.
func (res *results) runFindings(r *run) []finding {
	q := r.sum
	var out []finding
	if f, ok := res.duplicateFinding(r); ok {
		out = append(out, f)
	}
	out = append(out, res.lossFindings(r)...)
	if f, ok := res.stateFinding(r); ok {
		out = append(out, f)
	}
	if f, ok := res.lagFinding(r); ok {
		out = append(out, f)
	}
	if q.SinkDuplicates > 0 {
		out = append(out, named(q.Name, fmt.Sprintf("%s's sink wrote %s rows more than once after failed batches were retried, duplicates that no dedup operator can see.",
			subject, metrics.FormatCount(q.SinkDuplicates))))
	}
	return out
}

// duplicateFinding says which duplicate copies the query let through.
func (res *results) duplicateFinding(r *run) (finding, bool) {
	q := r.sum
	t, m := q.TrueDuplicates, q.MissedDuplicates
	n := func(s string) (finding, bool) { return named(q.Name, s), true }
	switch {
	case t == 0:
		return finding{}, false
	case m == 0 && q.FalseDrops == 0:
		c := metrics.FormatCount(t)
		return finding{
			one:  subject + " caught all " + c + " duplicate copies and lost no events.",
			many: subject + " each caught all " + c + " duplicate copies and lost no events.",
		}, true
	case m == 0:
		c := metrics.FormatCount(t)
		return finding{
			one:  subject + " caught all " + c + " duplicate copies.",
			many: subject + " each caught all " + c + " duplicate copies.",
		}, true
	case m == t:
		s := fmt.Sprintf("%s emitted all %s duplicate copies as new events (missed 100%% of duplicates)", subject, metrics.FormatCount(t))
		if why := res.keyCause(q.Query); why != "" {
			return n(s + ": " + why + ".")
		}
		return n(s + ".")
	}
	s := fmt.Sprintf("%s let %s of %s duplicate copies through (%s)", subject, metrics.FormatCount(m), metrics.FormatCount(t), metrics.FormatPercent(rate(m, t)))
	if mk, after, ok := res.afterMarker(r, "lose-checkpoint", func(b metrics.BatchRecord) int64 { return b.MissedDuplicates }); ok && 2*after >= m {
		return n(s + fmt.Sprintf(", %s after the checkpoint was lost at %s: a new checkpoint forgets every key.", share(after, m), formatOffset(mk.At)))
	}
	if why := res.keyCause(q.Query); why != "" {
		return n(s + ": " + why + ".")
	}
	if q.Delay != nil {
		return n(s + ": most likely copies that arrived after their key had been evicted, that is, retry gaps longer than a key lives in state.")
	}
	return n(s + ".")
}

// share words part of a total: "all of them" or "1,234 of them".
func share(part, total int64) string {
	if part >= total {
		return "all of them"
	}
	return metrics.FormatCount(part) + " of them"
}

// keyColumns returns the key columns of the chain's dedup operator, with
// all set for dropDuplicates() (every column is a key). ok is false when
// the query text does not show them (a JSON chain, say).
func keyColumns(query string) (cols []string, all, ok bool) {
	// Compiled per call: the package keeps no globals, and findings are
	// written a handful of times per report.
	re := regexp.MustCompile(`dropDuplicates(?:WithinWatermark)?\s*\(\s*(\[[^\]]*\])?\s*\)`)
	m := re.FindStringSubmatch(query)
	if m == nil {
		return nil, false, false
	}
	if m[1] == "" {
		return nil, true, true
	}
	for _, f := range strings.Split(strings.Trim(m[1], "[]"), ",") {
		if c := strings.Trim(strings.TrimSpace(f), `"'`); c != "" {
			cols = append(cols, c)
		}
	}
	return cols, len(cols) == 0, true
}

// keyCause explains from the query's keys and the workload's retry model
// why copies of one event are different keys, or returns "" when they
// are not (or the query text does not tell).
func (res *results) keyCause(query string) string {
	cols, all, ok := keyColumns(query)
	if !ok {
		return ""
	}
	retries := res.sc.Workload.Retries
	var varying []string
	switch retries.Timestamp {
	case "restamp", "jitter":
		varying = append(varying, "event_time")
	}
	varying = append(varying, retries.Metadata...)
	if all {
		if len(varying) == 0 {
			return ""
		}
		return "it keys on every column, and retried copies differ in " + strings.Join(varying, " and ") + ", so every copy is a different key"
	}
	for _, c := range cols {
		if !slices.Contains(varying, c) {
			continue
		}
		switch {
		case c == "event_time" && retries.Timestamp == "restamp":
			return "its keys include event_time, so a copy re-stamped when it was resent is a different key"
		case c == "event_time":
			return "its keys include event_time and the workload jitters retried copies' timestamps, so a moved copy is a different key"
		default:
			return "its keys include " + c + ", which differs between retried copies, so every copy is a different key"
		}
	}
	return ""
}

// lossFindings says which real events the query lost, and why when the
// numbers show it.
func (res *results) lossFindings(r *run) []finding {
	q := r.sum
	var out []finding
	if late := q.FalseDropsByCause.Late; late > 0 {
		head := fmt.Sprintf(" lost %s events as late (%s of all events)", metrics.FormatCount(late), metrics.FormatPercent(rate(late, q.LogicalEvents)))
		mk, after, ok := res.afterMarker(r, "bad-clock", func(b metrics.BatchRecord) int64 { return b.FalseDrops })
		switch {
		case ok && 2*after >= late:
			tail := fmt.Sprintf(", %s after the bad clock at %s", share(after, late), formatOffset(mk.At))
			if ahead := res.watermarkAhead(r, mk.At); ahead > 0 {
				tail += fmt.Sprintf(" moved the watermark up to %s ahead of processing time", formatSpan(ahead))
			}
			out = append(out, finding{one: subject + head + tail + ".", many: subject + " each" + head + tail + "."})
		case q.Delay != nil:
			out = append(out, named(q.Name, subject+head+fmt.Sprintf(": every copy of those events arrived with an event time more than the %s delay behind the newest event time already seen.", formatDelay(q.Delay))))
		default:
			out = append(out, named(q.Name, subject+head+"."))
		}
	}
	if c := q.FalseDropsByCause.Collision; c > 0 {
		out = append(out, named(q.Name, fmt.Sprintf("%s lost %s events (%s) to key collisions: their copies were dropped as duplicates of a different event with the same key, so its key is too coarse to tell events apart.",
			subject, metrics.FormatCount(c), metrics.FormatPercent(rate(c, q.LogicalEvents)))))
	}
	return out
}

// stateFinding says what the query's state did.
func (res *results) stateFinding(r *run) (finding, bool) {
	q := r.sum
	n := func(s string) (finding, bool) { return named(q.Name, s), true }
	switch {
	case q.Delay == nil && keptAll(q) && q.FinalStateRows == q.LogicalEvents:
		c := metrics.FormatCount(q.LogicalEvents)
		return finding{
			one:  subject + " kept every one of its " + c + " keys (final state = logical events): without a watermark nothing is ever evicted.",
			many: subject + " each kept every one of their " + c + " keys (final state = logical events): without a watermark nothing is ever evicted.",
		}, true
	case q.Delay == nil && keptAll(q):
		return n(fmt.Sprintf("%s never evicted a key: its final state of %s (%s) holds a key for every row it emitted; without a watermark nothing is ever evicted.",
			subject, rows(q.FinalStateRows), metrics.FormatBytes(q.FinalStateBytes)))
	case keptAll(q):
		s := fmt.Sprintf("%s never evicted a key although it has a %s watermark: its final state of %s (%s) holds a key for every row it emitted",
			subject, formatDelay(q.Delay), rows(q.FinalStateRows), metrics.FormatBytes(q.FinalStateBytes))
		if len(q.Warnings) > 0 {
			return n(s + "; explain warns: " + strings.TrimSuffix(q.Warnings[0], ".") + ".")
		}
		return n(s + ".")
	case q.PeakStateRows > 0 && q.PeakStateRows == q.FinalStateRows:
		return n(fmt.Sprintf("%s's state peaked at the end of the run, at %s (%s, %s of the run's %s events).",
			subject, rows(q.PeakStateRows), metrics.FormatBytes(q.PeakStateBytes),
			metrics.FormatPercent(rate(q.PeakStateRows, q.LogicalEvents)), metrics.FormatCount(q.LogicalEvents)))
	case q.PeakStateRows > 0:
		return n(fmt.Sprintf("%s's state peaked at %s (%s, %s of the run's %s events) and ended at %s.",
			subject, rows(q.PeakStateRows), metrics.FormatBytes(q.PeakStateBytes),
			metrics.FormatPercent(rate(q.PeakStateRows, q.LogicalEvents)), metrics.FormatCount(q.LogicalEvents), rows(q.FinalStateRows)))
	}
	return finding{}, false
}

// rows words a count of state rows, "1 row" or "1,234 rows".
func rows(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return metrics.FormatCount(n) + " rows"
}

// keptAll reports whether the query's state still holds a key for every
// row it emitted, which means it never evicted one: a dedup operator
// emits a row exactly when its key is new and stores that key, so state
// rows equal emitted rows until something is evicted (or a lost
// checkpoint drops them all). A state that merely stops growing is no
// such proof: eviction can balance new keys.
func keptAll(q *metrics.QuerySummary) bool {
	return q.EmittedRows > 0 && q.FinalStateRows >= q.EmittedRows
}

// lagFinding reports a watermark that lagged processing time well beyond
// the query's delay, and a stall when the worst lag fell inside one.
func (res *results) lagFinding(r *run) (finding, bool) {
	q := r.sum
	if q.Delay == nil || q.MaxWatermarkLagSeconds == nil {
		return finding{}, false
	}
	lag, delay := *q.MaxWatermarkLagSeconds, *q.Delay
	trigger := 10.0
	if d, err := interval.Parse(res.sc.Trigger); err == nil && d > 0 {
		trigger = d.Seconds()
	}
	// The watermark trails processing time by the delay plus arrival
	// delays and a trigger or two in the normal course; only flag more.
	if lag-delay <= max(0.25*delay, 3*trigger) {
		return finding{}, false
	}
	body := fmt.Sprintf(" processing time by up to %s, %s more than ", formatSpan(lag), formatSpan(lag-delay))
	one := subject + "'s watermark lagged" + body + "its " + formatDelay(q.Delay) + " delay"
	many := "The watermarks of " + subject + " lagged" + body + "their " + formatDelay(q.Delay) + " delay"
	// Find when: the first batch with the largest lag.
	at, found := 0.0, false
	best := int64(-1 << 62)
	for _, b := range r.batches {
		if !hasWatermark(b) {
			continue
		}
		if l := b.ProcessingTime - b.Watermark; l > best {
			best, at, found = l, res.offsetSeconds(b.ProcessingTime), true
		}
	}
	tail := "."
	if found {
		tail = fmt.Sprintf(", at %s.", formatOffset(at))
		for _, m := range res.sum.Markers {
			if m.Kind == "stall" && m.Until != nil && at >= m.At && at <= *m.Until+2*trigger {
				tail = fmt.Sprintf(", during the stall from %s to %s: with no newer event time arriving, the watermark, and with it eviction, stood still.",
					formatOffset(m.At), formatOffset(*m.Until))
				break
			}
		}
	}
	return finding{one: one + tail, many: many + tail}, true
}

// afterMarker finds the first marker of kind and how much of a cumulative
// timeseries counter grew from it to the end of the run. ok is false
// without such a marker or batches.
func (res *results) afterMarker(r *run, kind string, counter func(metrics.BatchRecord) int64) (mk metrics.Marker, after int64, ok bool) {
	i := slices.IndexFunc(res.sum.Markers, func(m metrics.Marker) bool { return m.Kind == kind })
	if i < 0 || len(r.batches) == 0 {
		return mk, 0, false
	}
	mk = res.sum.Markers[i]
	var before int64
	for _, b := range r.batches {
		if res.offsetSeconds(b.ProcessingTime) >= mk.At {
			break
		}
		before = counter(b)
	}
	return mk, counter(r.batches[len(r.batches)-1]) - before, true
}

// watermarkAhead returns how far, in seconds, the watermark ran ahead of
// processing time at most, from the moment at (seconds after the start)
// on; 0 when it never did.
func (res *results) watermarkAhead(r *run, at float64) float64 {
	var ahead int64
	for _, b := range r.batches {
		if hasWatermark(b) && res.offsetSeconds(b.ProcessingTime) >= at {
			ahead = max(ahead, b.Watermark-b.ProcessingTime)
		}
	}
	return float64(ahead) / 1000
}

// sweepFindings summarises one query across the delays of a sweep; runs
// all have a delay.
func (res *results) sweepFindings(runs []*run) []string {
	runs = slices.Clone(runs)
	slices.SortStableFunc(runs, func(a, b *run) int { return compareDelay(a.sum.Delay, b.sum.Delay) })
	first, last := runs[0].sum, runs[len(runs)-1].sum
	name := first.Name
	d := func(r *run) string { return formatDelay(r.sum.Delay) }
	missRate := func(q *metrics.QuerySummary) float64 { return rate(q.MissedDuplicates, q.TrueDuplicates) }
	fdRate := func(q *metrics.QuerySummary) float64 { return rate(q.FalseDrops, q.LogicalEvents) }
	out := []string{fmt.Sprintf("Across delays from %s to %s, %s's missed-duplicate rate %s, its false-drop rate %s, and its peak state %s.",
		d(runs[0]), d(runs[len(runs)-1]), name,
		change(metrics.FormatPercent(missRate(first)), metrics.FormatPercent(missRate(last))),
		change(metrics.FormatPercent(fdRate(first)), metrics.FormatPercent(fdRate(last))),
		change(metrics.FormatCount(first.PeakStateRows)+" rows", metrics.FormatCount(last.PeakStateRows)+" rows"))}

	// The smallest delay from which on every run is clean, by a test.
	from := func(ok func(q *metrics.QuerySummary) bool) int {
		k := len(runs)
		for k > 0 && ok(runs[k-1].sum) {
			k--
		}
		return k
	}
	allMissed := !slices.ContainsFunc(runs, func(r *run) bool {
		return r.sum.TrueDuplicates == 0 || r.sum.MissedDuplicates != r.sum.TrueDuplicates
	})
	clean := from(func(q *metrics.QuerySummary) bool { return q.MissedDuplicates == 0 && q.FalseDrops == 0 })
	caught := from(func(q *metrics.QuerySummary) bool { return q.MissedDuplicates == 0 })
	switch {
	case first.TrueDuplicates == 0:
	case allMissed:
		s := name + " missed every duplicate at every delay, so no watermark delay helps"
		if why := res.keyCause(first.Query); why != "" {
			s += ": " + why
		}
		out = append(out, s+".")
	case clean < len(runs):
		s := fmt.Sprintf("%s neither missed a duplicate nor lost an event from a %s delay on", name, d(runs[clean]))
		if clean > 0 {
			p := runs[clean-1].sum
			var parts []string
			if p.MissedDuplicates > 0 {
				parts = append(parts, "missed "+metrics.FormatCount(p.MissedDuplicates)+" duplicates")
			}
			if p.FalseDrops > 0 {
				parts = append(parts, "lost "+metrics.FormatCount(p.FalseDrops)+" events")
			}
			s += fmt.Sprintf(" (at %s it still %s)", d(runs[clean-1]), strings.Join(parts, " and "))
		}
		out = append(out, s+".")
	case caught < len(runs):
		out = append(out, fmt.Sprintf("%s caught every duplicate from a %s delay on, but lost events at each of those delays (%s at %s).",
			name, d(runs[caught]), metrics.FormatCount(last.FalseDrops), d(runs[len(runs)-1])))
	default:
		best := slices.MinFunc(runs, func(a, b *run) int {
			switch ra, rb := missRate(a.sum), missRate(b.sum); {
			case ra < rb:
				return -1
			case ra > rb:
				return 1
			}
			return 0
		})
		out = append(out, fmt.Sprintf("%s let duplicates through at every delay of the sweep; fewest at %s (%s).",
			name, d(best), metrics.FormatPercent(missRate(best.sum))))
	}

	// A longer delay keeps keys longer over the same input, so it can
	// neither let more duplicates through nor hold less state; say so
	// when the numbers disagree.
	for i := 1; i < len(runs); i++ {
		a, b := runs[i-1].sum, runs[i].sum
		if b.MissedDuplicates > a.MissedDuplicates {
			out = append(out, fmt.Sprintf("Unexpected: %s let more duplicates through at %s (%s) than at %s (%s), which a longer delay should not do; check this run.",
				name, d(runs[i]), metrics.FormatCount(b.MissedDuplicates), d(runs[i-1]), metrics.FormatCount(a.MissedDuplicates)))
			break
		}
	}
	for i := 1; i < len(runs); i++ {
		a, b := runs[i-1].sum, runs[i].sum
		if b.PeakStateRows < a.PeakStateRows {
			out = append(out, fmt.Sprintf("Unexpected: %s's peak state fell from %s rows at %s to %s at %s, which a longer delay should not do; check this run.",
				name, metrics.FormatCount(a.PeakStateRows), d(runs[i-1]), metrics.FormatCount(b.PeakStateRows), d(runs[i])))
			break
		}
	}

	// A query that kept every key at every delay ignores its watermark.
	if !slices.ContainsFunc(runs, func(r *run) bool { return !keptAll(r.sum) }) {
		s := fmt.Sprintf("%s never evicted a key at any delay: its final state holds a key for every row it emitted (%s rows at %s)", name, metrics.FormatCount(last.FinalStateRows), d(runs[len(runs)-1]))
		if len(first.Warnings) > 0 {
			s += "; explain warns: " + strings.TrimSuffix(first.Warnings[0], ".")
		}
		out = append(out, s+".")
	}
	return out
}

// change words the move of a number across a sweep: "stayed at 100%" or
// "went from 63.8% to 0%".
func change(from, to string) string {
	if from == to {
		return "stayed at " + from
	}
	return "went from " + from + " to " + to
}
