package reports

import (
	"cmp"
	"fmt"
	"math"
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
	return newResults(s, ts).findings()
}

// findings is Findings of the results as read.
func (res *results) findings() []string {
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
	switch len(names) {
	case 0:
		return ""
	case 1:
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
	if f, ok := res.saturationFinding(r); ok {
		out = append(out, f)
	}
	out = append(out, res.sparkFindings(r)...)
	if q.SinkDuplicates > 0 {
		out = append(out, named(q.Name, fmt.Sprintf("%s's sink wrote %s rows more than once after failed batches were retried, duplicates that no dedup operator can see.",
			subject, interval.Count(q.SinkDuplicates))))
	}
	return out
}

// duplicateFinding says which duplicate copies the query let through.
func (res *results) duplicateFinding(r *run) (finding, bool) {
	q := r.sum
	t, m := q.TrueDuplicates, q.MissedDuplicates
	n := func(s string) (finding, bool) { return named(q.Name, s), true }
	// Copies dropped as duplicates: at most the true duplicates (a
	// collision also drops originals as duplicates).
	caught := min(q.DroppedDuplicates, t)
	switch {
	case t == 0:
		return finding{}, false
	case m == 0 && caught == t && q.FalseDrops == 0:
		c := interval.Count(t)
		return finding{
			one:  subject + " caught all " + c + " duplicate copies and lost no events.",
			many: subject + " each caught all " + c + " duplicate copies and lost no events.",
		}, true
	case m == 0 && caught == t:
		c := interval.Count(t)
		return finding{
			one:  subject + " caught all " + c + " duplicate copies.",
			many: subject + " each caught all " + c + " duplicate copies.",
		}, true
	case m == 0 && 2*caught >= t:
		// Most were caught as duplicates; the others were dropped as late
		// (or stood in for an original that was).
		body := fmt.Sprintf(" let none of %s duplicate copies through: %s were caught as duplicates, the other %s dropped as late or emitted in place of a late original.",
			interval.Count(t), interval.Count(caught), interval.Count(t-caught))
		return finding{one: subject + body, many: subject + " each" + body}, true
	case m == 0:
		// Not "caught": most copies never reached the dedup's state.
		body := fmt.Sprintf(" let none of %s duplicate copies through, but only %s (%s) were caught as duplicates: the other %s were dropped as late or emitted in place of a late original.",
			interval.Count(t), interval.Count(caught), interval.Percent(rate(caught, t)), interval.Count(t-caught))
		return finding{one: subject + body, many: subject + " each" + body}, true
	case m == t:
		s := fmt.Sprintf("%s emitted all %s duplicate copies as new events (missed 100%% of duplicates)", subject, interval.Count(t))
		if why := res.keyCause(q.Query); why != "" {
			return n(s + ": " + why + ".")
		}
		return n(s + ".")
	}
	s := fmt.Sprintf("%s let %s of %s duplicate copies through (%s)", subject, interval.Count(m), interval.Count(t), interval.Percent(rate(m, t)))
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
	return interval.Count(part) + " of them"
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

// lossFindings says which real events the query lost and why: one
// finding naming every cause, the dominant first, and the bad clock that
// moved the watermark when it is one.
func (res *results) lossFindings(r *run) []finding {
	q := r.sum
	if q.FalseDrops == 0 {
		return nil
	}
	c := q.FalseDropsByCause
	type part struct {
		n    int64
		text string
	}
	var parts []part
	var shared bool // the sentence can be shared with other queries
	if c.BadClock > 0 {
		parts = append(parts, part{c.BadClock, res.badClockCause(r)})
		shared = true
	}
	if c.Late > 0 {
		why := "as late"
		if q.Delay != nil {
			why = fmt.Sprintf("as late (every copy arrived with an event time more than the %s delay behind the newest event time already seen)", formatDelay(q.Delay))
		}
		parts = append(parts, part{c.Late, why})
	}
	if c.Collision > 0 {
		parts = append(parts, part{c.Collision, "to key collisions (their copies were dropped as duplicates of a different event with the same key: the key is too coarse to tell events apart)"})
		shared = false
	}
	slices.SortStableFunc(parts, func(a, b part) int { return cmp.Compare(b.n, a.n) })
	head := fmt.Sprintf(" lost %s events (%s of all events)", interval.Count(q.FalseDrops), interval.Percent(rate(q.FalseDrops, q.LogicalEvents)))
	var body string
	if len(parts) == 1 {
		body = head + ", all " + parts[0].text + "."
	} else {
		var rest []string
		for _, p := range parts[1:] {
			rest = append(rest, interval.Count(p.n)+" "+p.text)
		}
		body = head + fmt.Sprintf(", most (%s) %s; %s.", interval.Count(parts[0].n), parts[0].text, strings.Join(rest, "; "))
	}
	if shared && len(parts) == 1 {
		return []finding{{one: subject + body, many: subject + " each" + body}}
	}
	return []finding{named(q.Name, subject+body)}
}

// badClockCause words the bad-clock cause of r's losses: the bad-clock
// marker that moved the watermark ahead (the last one before the first
// batch of the traffic window whose watermark was ahead of processing time
// minus the delay), and how far ahead it got.
func (res *results) badClockCause(r *run) string {
	const generic = "to a bad clock (a row stamped in the future moved the watermark ahead of processing time minus the delay, and rows behind it were dropped as late)"
	if r.sum.Delay == nil {
		if isSpark(r.sum) {
			return generic
		}
		// Another engine's watermark (a Flink rowtime query's): its batches
		// carry none, so name the first bad clock of the traffic window.
		for _, m := range res.sum.Markers {
			if m.Kind == "bad-clock" && m.At <= res.lastTrafficBatch() {
				s := "to the bad clock at " + formatOffset(m.At)
				if m.Label != "" {
					s += " (" + m.Label + ")"
				}
				return s + ", which moved the engine's watermark ahead of the rows' event times: rows behind it were dropped as late"
			}
		}
		return generic
	}
	delayMs := int64(math.Round(*r.sum.Delay * 1000))
	first := -1.0
	for _, b := range res.traffic(r) {
		if hasWatermark(b) && b.Watermark > b.ProcessingTime-delayMs {
			first = res.offsetSeconds(b.ProcessingTime)
			break
		}
	}
	var mk *metrics.Marker
	for i := range res.sum.Markers {
		if m := &res.sum.Markers[i]; m.Kind == "bad-clock" && first >= 0 && m.At <= first {
			mk = m
		}
	}
	if mk == nil {
		return generic
	}
	more := 0
	for _, m := range res.sum.Markers {
		if m.Kind == "bad-clock" && m.At > mk.At && m.At <= res.lastTrafficBatch() {
			more++
		}
	}
	s := "to the bad clock at " + formatOffset(mk.At)
	if mk.Label != "" {
		s += " (" + mk.Label + ")"
	}
	if more > 0 {
		// Later bad clocks may have pushed the watermark further: name
		// the first, and count the others.
		s = fmt.Sprintf("to bad clocks, the first at %s (%s) and %d more marked after it", formatOffset(mk.At), mk.Label, more)
	}
	if ahead := res.watermarkAhead(r, mk.At); ahead > 0 {
		return s + fmt.Sprintf(", which moved the watermark up to %s ahead of processing time: rows behind it were dropped as late", formatSpan(ahead))
	}
	return s + ", which moved the watermark ahead of processing time minus the delay: rows behind it were dropped as late"
}

// causeWords names the causes of a query's false drops, the dominant
// first: "late", "bad clock and late"; "" without false drops.
func causeWords(q *metrics.QuerySummary) string {
	c := q.FalseDropsByCause
	type cause struct {
		n    int64
		name string
	}
	cs := []cause{{c.BadClock, "bad clock"}, {c.Late, "late"}, {c.Collision, "key collisions"}}
	slices.SortStableFunc(cs, func(a, b cause) int { return cmp.Compare(b.n, a.n) })
	var names []string
	for _, x := range cs {
		if x.n > 0 {
			names = append(names, x.name)
		}
	}
	return joinNames(names)
}

// stateFinding says what the query's state did during the traffic
// window (its peak), or that it never evicted a key.
func (res *results) stateFinding(r *run) (finding, bool) {
	q := r.sum
	n := func(s string) (finding, bool) { return named(q.Name, s), true }
	switch {
	case q.Delay == nil && keptAll(q) && q.FinalStateRows == q.LogicalEvents:
		c := interval.Count(q.LogicalEvents)
		return finding{
			one:  subject + " kept every one of its " + c + " keys (final state = logical events): without a watermark nothing is ever evicted.",
			many: subject + " each kept every one of their " + c + " keys (final state = logical events): without a watermark nothing is ever evicted.",
		}, true
	case q.Delay == nil && keptAll(q):
		return n(fmt.Sprintf("%s never evicted a key: its final state of %s (%s) holds a key for every row it emitted; without a watermark nothing is ever evicted.",
			subject, rows(q.FinalStateRows), interval.Bytes(q.FinalStateBytes)))
	case keptAll(q):
		s := fmt.Sprintf("%s never evicted a key although it has a %s watermark: its final state of %s (%s) holds a key for every row it emitted",
			subject, formatDelay(q.Delay), rows(q.FinalStateRows), interval.Bytes(q.FinalStateBytes))
		if len(q.Warnings) > 0 {
			return n(s + "; explain warns: " + strings.TrimSuffix(q.Warnings[0], ".") + ".")
		}
		return n(s + ".")
	case q.PeakStateRows > 0:
		size := interval.Bytes(q.PeakStateBytes) + ", "
		if !bytesModelled(q) {
			size = ""
		}
		s := fmt.Sprintf("%s's state peaked at %s (%s%s of the run's %s events) during the traffic window",
			subject, rows(q.PeakStateRows), size,
			interval.Percent(rate(q.PeakStateRows, q.LogicalEvents)), interval.Count(q.LogicalEvents))
		if res.stillGrowing(r) {
			s += ", and was still growing when the traffic ended"
		}
		return n(s + ".")
	}
	return finding{}, false
}

// stillGrowing reports whether r's state peaked at the end of the traffic
// window and was growing then (by more than 2% over its last 2%, or three
// triggers): it had not reached a steady state when the traffic ended.
func (res *results) stillGrowing(r *run) bool {
	tb := res.traffic(r)
	if len(tb) < 2 || tb[len(tb)-1].StateRows != r.sum.PeakStateRows {
		return false
	}
	end := res.offsetSeconds(tb[len(tb)-1].ProcessingTime)
	from := end - max(0.02*res.durationSeconds(), 3*res.triggerSeconds())
	for _, b := range tb {
		if res.offsetSeconds(b.ProcessingTime) >= from {
			return float64(tb[len(tb)-1].StateRows) > 1.02*float64(b.StateRows)
		}
	}
	return false
}

// saturationFinding says that a run's key horizon reaches its traffic
// window, and what run length would resolve it.
func (res *results) saturationFinding(r *run) (finding, bool) {
	q := r.sum
	h, ok := res.horizonOf(q)
	if !ok || !res.saturated(q) {
		return finding{}, false
	}
	return named(q.Name, fmt.Sprintf("%s is saturated: its key horizon, %s, reaches the %s traffic window, so it kept every key it stored for the whole run "+
		"and its peak state and missed duplicates say nothing of a longer run; a run of %s (three horizons) would resolve it.",
		subject, horizonWords(q, h, res.triggerSeconds()), formatSpan(res.durationSeconds()), formatSpan(resolvingDuration(h)))), true
}

// horizonWords words a query's key horizon: "2 x 20m + 10s = 40m10s".
func horizonWords(q *metrics.QuerySummary, h, trigger float64) string {
	if q.Delay == nil {
		return formatSpan(h)
	}
	switch flavourOf(q) {
	case metrics.FlavourWithin:
		return fmt.Sprintf("about 2 × %s delay + %s trigger = %s", formatDelay(q.Delay), formatSpan(trigger), formatSpan(h))
	case metrics.FlavourPairKeyed:
		return fmt.Sprintf("about %s delay + %s trigger = %s", formatDelay(q.Delay), formatSpan(trigger), formatSpan(h))
	}
	return "about " + formatSpan(h)
}

// rows words a count of state rows, "1 row" or "1,234 rows".
func rows(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return interval.Count(n) + " rows"
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
	for _, b := range res.traffic(r) {
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
			if m.Kind == downtimeKind && m.Until != nil && at >= m.At && at <= *m.Until+2*trigger {
				tail = fmt.Sprintf(", after the query was down from %s to %s: no batch ran, so the watermark, and with it eviction, waited for the first one after.",
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
// to the end of the traffic window; 0 when it never did.
func (res *results) watermarkAhead(r *run, at float64) float64 {
	var ahead int64
	for _, b := range res.traffic(r) {
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
	fd := change(interval.Percent(fdRate(first)), interval.Percent(fdRate(last)))
	if c := sweepCauses(runs); c != "" {
		fd += " (cause: " + c + ")"
	}
	out := []string{fmt.Sprintf("Across delays from %s to %s, %s's missed-duplicate rate %s, its false-drop rate %s, and its peak state %s.",
		d(runs[0]), d(runs[len(runs)-1]), name,
		change(interval.Percent(missRate(first)), interval.Percent(missRate(last))), fd,
		change(interval.Count(first.PeakStateRows)+" rows", interval.Count(last.PeakStateRows)+" rows"))}

	// The saturated delays: their runs hold every key of the run.
	var sat []string
	for _, r := range runs {
		if res.saturated(r.sum) {
			sat = append(sat, d(r))
		}
	}
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
	satFrom := func(k int) string {
		// A clean stretch that rests on saturated runs says so.
		var in []string
		for _, r := range runs[k:] {
			if res.saturated(r.sum) {
				in = append(in, d(r))
			}
		}
		if len(in) == 0 {
			return ""
		}
		return fmt.Sprintf("; but at %s it is saturated (its key horizon reaches the %s run, so it holds every key of the run), and only the shorter delays show what a longer run would",
			joinNames(in), formatSpan(res.durationSeconds()))
	}
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
				parts = append(parts, "missed "+interval.Count(p.MissedDuplicates)+" duplicates")
			}
			if p.FalseDrops > 0 {
				parts = append(parts, "lost "+interval.Count(p.FalseDrops)+" events (cause: "+causeWords(p)+")")
			}
			s += fmt.Sprintf(" (at %s it still %s)", d(runs[clean-1]), strings.Join(parts, " and "))
		}
		out = append(out, s+satFrom(clean)+".")
	case caught < len(runs):
		out = append(out, fmt.Sprintf("%s caught every duplicate from a %s delay on, but lost events at each of those delays (%s at %s, cause: %s)%s.",
			name, d(runs[caught]), interval.Count(last.FalseDrops), d(runs[len(runs)-1]), causeWords(last), satFrom(caught)))
	default:
		best := slices.MinFunc(runs, func(a, b *run) int { return cmp.Compare(missRate(a.sum), missRate(b.sum)) })
		out = append(out, fmt.Sprintf("%s let duplicates through at every delay of the sweep; fewest at %s (%s).",
			name, d(best), interval.Percent(missRate(best.sum))))
	}
	if len(sat) > 0 && clean == len(runs) && caught == len(runs) {
		out = append(out, fmt.Sprintf("%s is saturated at %s: its key horizon reaches the %s run, so those runs hold every key of the run and show neither the state of a longer run nor the copies that come back after the horizon.",
			name, joinNames(sat), formatSpan(res.durationSeconds())))
	}

	// More duplicates through at a longer delay: the documented behaviour
	// when copies are new keys (a longer delay drops fewer of them behind
	// the watermark, so more reach the dedup and are emitted), and when
	// rows were dropped late at the shorter delay (a copy that was late
	// there may reach the dedup after its key expired). Only with neither
	// is it unexpected.
	for i := 1; i < len(runs); i++ {
		a, b := runs[i-1].sum, runs[i].sum
		if b.MissedDuplicates <= a.MissedDuplicates {
			continue
		}
		switch why := res.keyCause(b.Query); {
		case why != "":
			out = append(out, fmt.Sprintf("%s let more duplicates through at %s (%s) than at %s (%s), as expected: %s, and a longer delay drops fewer of them behind the watermark (%s rows dropped as late at %s, %s at %s), so more are emitted.",
				name, d(runs[i]), interval.Count(b.MissedDuplicates), d(runs[i-1]), interval.Count(a.MissedDuplicates), why,
				interval.Count(a.DroppedByWatermark), d(runs[i-1]), interval.Count(b.DroppedByWatermark), d(runs[i])))
		case a.DroppedByWatermark > 0:
			out = append(out, fmt.Sprintf("%s let more duplicates through at %s (%s) than at %s (%s): the shorter delay dropped %s rows behind the watermark, copies among them that the longer delay let reach the dedup after their key had expired.",
				name, d(runs[i]), interval.Count(b.MissedDuplicates), d(runs[i-1]), interval.Count(a.MissedDuplicates), interval.Count(a.DroppedByWatermark)))
		default:
			out = append(out, fmt.Sprintf("Unexpected: %s let more duplicates through at %s (%s) than at %s (%s), with no row dropped as late and copies that share their key, which a longer delay should not do; check this run.",
				name, d(runs[i]), interval.Count(b.MissedDuplicates), d(runs[i-1]), interval.Count(a.MissedDuplicates)))
		}
		break
	}
	// Less peak state at a longer delay: a key lives longer and fewer rows
	// are dropped as late, so state can only shrink by the keys of copies
	// the shorter delay re-admitted (at most its missed duplicates).
	for i := 1; i < len(runs); i++ {
		a, b := runs[i-1].sum, runs[i].sum
		if b.PeakStateRows < a.PeakStateRows-a.MissedDuplicates {
			out = append(out, fmt.Sprintf("Unexpected: %s's peak state fell from %s rows at %s to %s at %s, more than the %s copies the shorter delay re-admitted, which a longer delay should not do; check this run.",
				name, interval.Count(a.PeakStateRows), d(runs[i-1]), interval.Count(b.PeakStateRows), d(runs[i]), interval.Count(a.MissedDuplicates)))
			break
		}
	}

	// A query that kept every key at every delay ignores its watermark.
	if !slices.ContainsFunc(runs, func(r *run) bool { return !keptAll(r.sum) }) {
		s := fmt.Sprintf("%s never evicted a key at any delay: its final state holds a key for every row it emitted (%s rows at %s)", name, interval.Count(last.FinalStateRows), d(runs[len(runs)-1]))
		if len(first.Warnings) > 0 {
			s += "; explain warns: " + strings.TrimSuffix(first.Warnings[0], ".")
		}
		out = append(out, s+".")
	}
	return out
}

// sweepCauses names the causes of the false drops of a sweep's runs, the
// dominant over all of them first; "" without false drops.
func sweepCauses(runs []*run) string {
	var all metrics.QuerySummary
	for _, r := range runs {
		c := r.sum.FalseDropsByCause
		all.FalseDrops += r.sum.FalseDrops
		all.FalseDropsByCause.Late += c.Late
		all.FalseDropsByCause.BadClock += c.BadClock
		all.FalseDropsByCause.Collision += c.Collision
	}
	return causeWords(&all)
}

// The targets a sweep's recommendation checks each delay against:
// simulate plan's defaults.
const (
	recommendMissed    = 0.001
	recommendFalseDrop = 0.0001
)

// recommendations says, for each query swept over several delays, the
// smallest swept delay meeting simulate plan's default targets (missed
// duplicates at most 0.1%, false drops at most 0.01%), or that none does;
// nil for a run without a sweep.
func (res *results) recommendations() []string {
	var out []string
	for _, name := range res.queryNames() {
		var runs []*run
		for _, r := range res.runsOf(name) {
			if r.sum.Delay != nil {
				runs = append(runs, r)
			}
		}
		if len(runs) < 2 {
			continue
		}
		slices.SortStableFunc(runs, func(a, b *run) int { return compareDelay(a.sum.Delay, b.sum.Delay) })
		meets := func(q *metrics.QuerySummary) bool {
			return rate(q.MissedDuplicates, q.TrueDuplicates) <= recommendMissed && rate(q.FalseDrops, q.LogicalEvents) <= recommendFalseDrop
		}
		targets := fmt.Sprintf("missed duplicates at most %s and false drops at most %s", percentLabel(recommendMissed), percentLabel(recommendFalseDrop))
		k := slices.IndexFunc(runs, func(r *run) bool { return meets(r.sum) })
		if k < 0 {
			best := slices.MinFunc(runs, func(a, b *run) int {
				return cmp.Compare(rate(a.sum.MissedDuplicates, a.sum.TrueDuplicates)+rate(a.sum.FalseDrops, a.sum.LogicalEvents),
					rate(b.sum.MissedDuplicates, b.sum.TrueDuplicates)+rate(b.sum.FalseDrops, b.sum.LogicalEvents))
			})
			s := fmt.Sprintf("%s: no swept delay meets %s; the closest is %s (missed %s, lost %s)",
				name, targets, formatDelay(best.sum.Delay), interval.Percent(rate(best.sum.MissedDuplicates, best.sum.TrueDuplicates)),
				interval.Percent(rate(best.sum.FalseDrops, best.sum.LogicalEvents)))
			if why := res.keyCause(best.sum.Query); why != "" && best.sum.MissedDuplicates > 0 {
				s += ", and no delay can help: " + why + "."
			} else if !isSpark(best.sum) {
				s += "; a longer horizon than the sweep's may (`simulate plan` searches Spark's delays only)."
			} else {
				s += "; a delay longer than the sweep's may: `simulate plan` searches for it, across seeds."
			}
			out = append(out, s)
			continue
		}
		r := runs[k]
		bytes := ", " + interval.Bytes(r.sum.PeakStateBytes)
		if !bytesModelled(r.sum) {
			bytes = "" // the engine's model gives no state bytes
		}
		s := fmt.Sprintf("%s: of the swept delays, %s is the smallest meeting %s (missed %s, lost %s, peak state %s rows%s)",
			name, formatDelay(r.sum.Delay), targets, interval.Percent(rate(r.sum.MissedDuplicates, r.sum.TrueDuplicates)),
			interval.Percent(rate(r.sum.FalseDrops, r.sum.LogicalEvents)), interval.Count(r.sum.PeakStateRows), bytes)
		if k > 0 {
			s += "; " + formatDelay(runs[k-1].sum.Delay) + " does not"
		}
		if res.saturated(r.sum) {
			s += "; but that run is saturated (its key horizon reaches the run's length): lengthen the scenario before relying on it"
		}
		if !isSpark(r.sum) {
			out = append(out, s+". The answer is one seed's and as fine as the sweep (`simulate plan` searches Spark's delays only).")
			continue
		}
		out = append(out, s+". The answer is one seed's and as fine as the sweep: `simulate plan` finds the delay to the second, across seeds.")
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

// isSpark reports whether q ran on Spark (whose summary leaves the engine
// out).
func isSpark(q *metrics.QuerySummary) bool { return q.Engine == "" || q.Engine == "spark" }
