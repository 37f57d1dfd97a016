package kstreams

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines/kstreams"
	"github.com/dedupsim/dedupsim/sim/enginetrace"
)

func ms(v int64) string { return enginetrace.FormatMillis(v) }

// Explain returns, in plain words, what the Kafka Streams dedup of the query t
// keeps and loses: one line each, warnings starting "warning:".
func (t *Trace) Explain() []string {
	if t.Mode == KeepLast {
		form, op := "toTable", "stream.toTable(Materialized.as(store))"
		ts := "its own timestamp (an older copy moves the row back in time)"
		if t.Reduce {
			form, op = "reduce", "groupByKey().reduce((old, new) -> new)"
			ts = "max(its timestamp, the row's timestamp)"
		}
		return []string{
			fmt.Sprintf("kafka-streams keep-last (%s): %s, record cache off", form, op),
			"  every record overwrites its key's row and is forwarded downstream with " + ts,
			"  state: one row per key ever seen; nothing expires",
			"warning: downstream of toStream() every copy appears; only a reader of the table (or of a compacted topic) sees one row per key",
			"warning: state grows with the number of distinct keys, forever",
		}
	}
	if t.Time == kstreams.WallClock {
		return t.explainWallClock()
	}
	w, left := t.Window, t.Window/2
	seg := kstreams.DefaultSegmentInterval(w)
	lines := []string{
		fmt.Sprintf("kafka-streams keep-first: the window-store processor, window W = %s (retention and window size), %s time", ms(w), t.Time),
		fmt.Sprintf("  store: persistent window store, segments of %s = max(W/2, 1m); rows visible while ts >= observed stream time - %s + 1ms", ms(seg), ms(w)),
	}
	if t.Time == kstreams.StreamTime {
		lines = append(lines,
			fmt.Sprintf("  each record: fetch(id, st - %s, st + %s) at the task's stream time st (the largest timestamp seen), then put (id, st), a duplicate too", ms(left), ms(w-left)),
			fmt.Sprintf("  horizon: a copy is dropped only within %s of stream time after the previous copy (W/2: stored times never exceed st, so the right half never matches); each duplicate refreshes it", ms(left)),
			"  time: stream time moves only with records; a quiet task expires nothing, whatever the wall clock",
			"  late records: judged at stream time (their lateness does not matter), forwarded with their own timestamp",
			fmt.Sprintf("warning: the %s window deduplicates for %s; to catch copies up to D apart, set W = 2 D", ms(w), ms(left)),
		)
	} else {
		lines = append(lines,
			fmt.Sprintf("  each record: fetch(id, ts - %s, ts + %s) around its own timestamp ts, then put (id, ts), a duplicate too", ms(left), ms(w-left)),
			fmt.Sprintf("  horizon: a copy is dropped when a stored copy of the id lies within %s of its timestamp, either side; each duplicate adds a row", ms(left)),
			fmt.Sprintf("warning: a record more than %s older than stream time finds nothing and is forwarded; its put is dropped (dropped-records-total), so a late first copy is never remembered", ms(w)),
		)
	}
	if n := t.tasks(); n > 1 {
		lines = append(lines,
			fmt.Sprintf("  tasks: %d, one per partition of the topic keyed by the event id, input or repartition (toPositive(murmur2(key bytes)) %% %d, the default partitioner); each has its own window store and stream time", n, n),
			"warning: each task's stream time moves only with its own partition's records: a partition that gets none for a while expires nothing, while the others move on",
		)
	}
	lines = append(lines,
		fmt.Sprintf("  physical state: segments are deleted whole on put, so rows stay on disk up to %s after they stop being visible (W + one segment of stream time in all)", ms(seg)),
		"warning: copies of an id must reach the same task: key (repartition) the stream by the event id first",
	)
	return lines
}

// explainWallClock explains the wall-clock fix: a key-value store purged
// by a wall-clock punctuation.
func (t *Trace) explainWallClock() []string {
	w, p := t.Window, t.Punctuate
	return []string{
		fmt.Sprintf("kafka-streams keep-first, wall-clock: a key-value store of first-seen wall-clock times, purged every %s of wall clock (punctuate, PunctuationType.WALL_CLOCK_TIME) of the keys %s old or older (window W)", ms(p), ms(w)),
		"  each record: drop it when its id is in the store, else put (id, context.currentSystemTimeMs()) and forward it; a duplicate does not refresh the entry",
		fmt.Sprintf("  horizon: a key is remembered from W to W + P = %s to %s of wall clock after its first copy: only a punctuation forgets it (the lookup ignores age)", ms(w), ms(w+p)),
		fmt.Sprintf("  punctuation: first %s after the task starts, then every %s on that grid; a punctuation delayed past several grid points fires once, the missed ones are skipped", ms(p), ms(p)),
		"  time: wall clock (in a scenario, each row's arrival; the task starts at the first row's): keys expire on a quiet task too, whatever the records' timestamps; event time plays no part",
		"  state: one entry per key seen in the last W to W + P of wall clock; each punctuation scans the whole store",
		"warning: a replay or a backlog read faster than real time spans little wall clock: copies hours apart in event time are still deduplicated, and the store holds every key read in the last W of wall clock",
		"warning: copies of an id must reach the same task: key (repartition) the stream by the event id first",
	}
}
