package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/metrics"
)

// toyQuery describes one query of the toy runs below.
type toyQuery struct {
	name, query string
	// delay is the watermark delay in seconds; 0 means no watermark.
	delay float64
	// pairKeyed keys on event_time too, so re-stamped copies are new keys.
	pairKeyed bool
	// within is dropDuplicatesWithinWatermark: a key lives until the
	// watermark passes its event time + delay. Otherwise a watermarked
	// query without pairKeyed never evicts (event_time not a key).
	within bool
}

// toyConfig is a small, fully deterministic model of a run: enough to give
// the reports numbers and timeseries with the shapes of real runs (state
// growing without a watermark, plateaus with one, a stall, a bad clock),
// without depending on the simulator.
type toyConfig struct {
	name      string
	start     time.Time
	batches   int     // 10 s trigger
	rate      float64 // originals per second
	stall     [2]float64
	badClock  float64 // seconds after start; 0 for none
	badSkew   float64 // seconds the bad row's event time is ahead
	restarted float64 // a restart marker, seconds after start; 0 for none
	// traffic, when above 0, is the number of batches with originals:
	// the batches after them are the drain, where only copies arrive.
	traffic int
	// described makes the summary carry what the runner records of each
	// query (flavour, key horizon, saturation) and of the run (windows);
	// without it the reports must infer them, as for older results.
	described bool
}

// trafficBatches is the number of batches in the traffic window.
func (c toyConfig) trafficBatches() int {
	if c.traffic > 0 {
		return c.traffic
	}
	return c.batches
}

// toyBatch is the rows one batch of the toy input delivers.
type toyBatch struct {
	pt        int64 // processing time, ms
	originals int64
	et        int64 // event time of the originals, ms
	// copies by retry gap: copies[g] arrived gaps[g] after their original,
	// re-stamped with the time they were resent.
	copies []int64
	bad    bool // carries one bad-clock row
	// stragglers are originals that arrive long after their event time:
	// stragglers[k] rows with event time pt - straggleAge()[k].
	stragglers []int64
}

// straggleAge is how old the stragglers of each group are on arrival, in
// ms: a 1m delay loses both groups as late, a 10m delay the older one.
func straggleAge() []int64 { return []int64{240_000, 900_000} }

// toyGaps are the retry gaps of the toy input, in ms: a 1m delay misses
// the two longer ones, a 5m delay the longest.
func toyGaps() []int64 { return []int64{30_000, 180_000, 720_000} }

func (c toyConfig) input() []toyBatch {
	origin := c.start.UnixMilli()
	out := make([]toyBatch, c.batches)
	for i := range out {
		b := &out[i]
		b.pt = origin + int64(i+1)*10_000
		sec := float64(b.pt-origin) / 1000
		stalled := sec > c.stall[0] && sec <= c.stall[1]
		drain := i >= c.trafficBatches()
		if !stalled && !drain {
			b.originals = int64(c.rate * 10)
		}
		b.et = b.pt - 2_000
		gaps := toyGaps()
		b.copies = make([]int64, len(gaps))
		for g, gap := range gaps {
			j := i - int(gap/10_000)
			if j >= 0 && !stalled {
				// 2% of originals are resent after each gap.
				b.copies[g] = out[j].originals / 50
			}
		}
		b.stragglers = []int64{b.originals / 200, b.originals / 500}
		b.bad = c.badClock > 0 && sec > c.badClock && sec <= c.badClock+10
	}
	return out
}

// entry is a group of state keys with one expiry event time.
type entry struct {
	et   int64 // the event time that eviction compares with the watermark
	rows int64
}

// toyRun runs one query over the toy input and returns its summary and
// timeseries.
func toyRun(c toyConfig, in []toyBatch, q toyQuery) (metrics.QuerySummary, []metrics.BatchRecord) {
	s := metrics.QuerySummary{Name: q.name, Query: q.query, Store: "memory", EventsPerSecond: 250000, WallSeconds: 1.5}
	if q.delay > 0 {
		d := q.delay
		s.Delay = &d
	}
	delayMs := int64(q.delay * 1000)
	var state []entry
	var stateRows int64
	// emittedAt[i] says whether batch i's originals were emitted (not
	// late); aheadAt[i] whether batch i's watermark was ahead of its
	// processing time minus the delay (a bad clock's doing).
	emittedAt := make([]bool, len(in))
	aheadAt := make([]bool, len(in))
	lost := func(i int, n int64) {
		if aheadAt[i] {
			s.FalseDropsByCause.BadClock += n
		} else {
			s.FalseDropsByCause.Late += n
		}
	}
	trafficEnd := in[0].pt - 10_000 + int64(c.trafficBatches())*10_000
	var maxET int64
	var cumMissed, cumFalse int64
	recs := make([]metrics.BatchRecord, 0, len(in))
	gaps := toyGaps()
	for i, b := range in {
		rec := metrics.BatchRecord{Query: q.name, Delay: s.Delay, BatchID: int64(i), ProcessingTime: b.pt}
		wm := int64(0)
		if q.delay > 0 && maxET > 0 {
			wm = maxET - delayMs
			rec.Watermark, rec.HasWatermark = wm, true
			aheadAt[i] = wm > b.pt-delayMs
		}
		var copies int64
		for _, n := range b.copies {
			copies += n
		}
		rec.InputRows = b.originals + copies
		if b.bad {
			rec.InputRows++
		}
		rec.NoData = rec.InputRows == 0
		s.InputRows += rec.InputRows
		s.LogicalEvents += b.originals
		s.TrueDuplicates += copies
		// Originals.
		if b.originals > 0 {
			if rec.HasWatermark && b.et < wm {
				rec.DroppedByWatermark += b.originals
				cumFalse += b.originals
				lost(i, b.originals)
			} else {
				emittedAt[i] = true
				rec.EmittedRows += b.originals
				exp := b.et
				if q.within {
					exp += delayMs
				}
				state = append(state, entry{exp, b.originals})
				stateRows += b.originals
			}
		}
		for k, n := range b.stragglers {
			et := b.pt - straggleAge()[k]
			rec.InputRows += n
			s.InputRows += n
			s.LogicalEvents += n
			if rec.HasWatermark && et < wm {
				rec.DroppedByWatermark += n
				cumFalse += n
				lost(i, n)
				continue
			}
			rec.EmittedRows += n
			if q.within {
				et += delayMs
			}
			state = append(state, entry{et, n})
			stateRows += n
		}
		// Copies, re-stamped to this batch's time.
		for g, n := range b.copies {
			if n == 0 {
				continue
			}
			j := i - int(gaps[g]/10_000)
			switch {
			case rec.HasWatermark && b.et < wm:
				rec.DroppedByWatermark += n
			case !emittedAt[j]:
				// The original was lost as late; the copy is its only
				// survivor, so the event is not a false drop after all.
				rec.EmittedRows += n
				cumFalse -= n
				lost(j, -n)
			case q.pairKeyed:
				rec.EmittedRows += n
				cumMissed += n
				state = append(state, entry{b.et, n})
				stateRows += n
			case q.within && rec.HasWatermark && in[j].et+delayMs < wm:
				// The original's key was evicted before this copy came.
				rec.EmittedRows += n
				cumMissed += n
				state = append(state, entry{b.et + delayMs, n})
				stateRows += n
			default:
				rec.DroppedDuplicates += n
			}
		}
		if b.bad {
			rec.EmittedRows++
			s.LogicalEvents++
			state = append(state, entry{b.pt + int64(c.badSkew*1000), 1})
			stateRows++
			maxET = max(maxET, b.pt+int64(c.badSkew*1000))
		}
		if b.originals > 0 || copies > 0 {
			maxET = max(maxET, b.et)
		}
		// Evict with the watermark that the next batch will run with.
		if q.delay > 0 && (q.pairKeyed || q.within) && maxET > 0 {
			next := maxET - delayMs
			k := 0
			for _, e := range state {
				if e.et < next {
					stateRows -= e.rows
					continue
				}
				state[k] = e
				k++
			}
			state = state[:k]
		}
		rec.StateRows = stateRows
		rec.StateBytes = stateRows * 120
		rec.MissedDuplicates = cumMissed
		rec.FalseDrops = cumFalse
		s.EmittedRows += rec.EmittedRows
		s.DroppedByWatermark += rec.DroppedByWatermark
		s.DroppedDuplicates += rec.DroppedDuplicates
		inTraffic := b.pt <= trafficEnd
		if inTraffic {
			s.PeakStateRows = max(s.PeakStateRows, stateRows)
			s.PeakStateBytes = max(s.PeakStateBytes, rec.StateBytes)
		}
		s.Batches++
		if rec.NoData {
			s.NoDataBatches++
		}
		if rec.HasWatermark && inTraffic {
			lag := float64(rec.ProcessingTime-rec.Watermark) / 1000
			if s.MaxWatermarkLagSeconds == nil || lag > *s.MaxWatermarkLagSeconds {
				s.MaxWatermarkLagSeconds = &lag
			}
		}
		recs = append(recs, rec)
	}
	s.MissedDuplicates = cumMissed
	s.FalseDrops = cumFalse
	s.MissedDuplicateRate = rate(s.MissedDuplicates, s.TrueDuplicates)
	s.FalseDropRate = rate(s.FalseDrops, s.LogicalEvents)
	s.FinalStateRows = stateRows
	s.FinalStateBytes = stateRows * 120
	s.BytesPerEntry = []int64{120}
	s.SinkWrites = s.EmittedRows
	if c.described {
		switch {
		case q.within:
			s.Flavour = metrics.FlavourWithin
			h := 2*q.delay + 10
			s.KeyHorizonSeconds = &h
		case q.pairKeyed:
			s.Flavour = metrics.FlavourPairKeyed
			h := q.delay + 10
			s.KeyHorizonSeconds = &h
		case q.delay == 0:
			s.Flavour = metrics.FlavourUnbounded
		default:
			s.Flavour = metrics.FlavourOther
		}
		s.Saturated = s.KeyHorizonSeconds != nil && *s.KeyHorizonSeconds >= float64(c.trafficBatches())*10
	}
	switch {
	case q.delay == 0:
		s.Warnings = []string{"no watermark: the dedup state grows forever"}
	case q.pairKeyed:
		s.Warnings = []string{"event_time is a dedup key: re-stamped retries are different keys"}
	case !q.within:
		s.Warnings = []string{"dropDuplicates with a watermark but without event_time among its keys: state is never evicted"}
	}
	return s, recs
}

// toyQueries returns the three queries of the single-run fixture.
func toyQueries(delay float64) []toyQuery {
	dl := formatDelay(&delay)
	return []toyQuery{
		{name: "pair-keyed", query: `withWatermark("event_time", "` + dl + `").dropDuplicates(["event_id", "event_time"])`, delay: delay, pairKeyed: true},
		{name: "within-watermark", query: `withWatermark("event_time", "` + dl + `").dropDuplicatesWithinWatermark(["event_id"])`, delay: delay, within: true},
		{name: "unbounded", query: `dropDuplicates(["event_id"])`},
	}
}

// scenarioJSON renders a resolved scenario the way summary.json embeds it.
func scenarioJSON(t testing.TB, c toyConfig, seed uint64, qs []toyQuery, sweep []string) json.RawMessage {
	t.Helper()
	type query struct {
		Name  string `json:"name"`
		Query string `json:"query"`
	}
	sc := map[string]any{
		"name":               c.name,
		"seed":               seed,
		"start":              c.start.Format(time.RFC3339),
		"duration":           formatSpan(float64(c.trafficBatches()) * 10),
		"trigger":            "10s",
		"noDataMicroBatches": true,
		"workload": map[string]any{
			"rate":         "100/s",
			"ids":          "uuid",
			"customers":    10000,
			"arrivalDelay": map[string]any{"dist": "constant", "value": 2},
			"retries": map[string]any{
				"probability": 0.06,
				"copies":      map[string]any{"dist": "constant", "value": 1},
				"delay":       map[string]any{"dist": "empirical", "file": "gaps.csv"},
				"timestamp":   "restamp",
				"jitter":      "0s",
				"metadata":    []string{"attempt", "ingest_time"},
			},
		},
		"store": "memory",
		"sink":  map[string]any{"kind": "append", "failureProbability": 0},
	}
	var qq []query
	for _, q := range qs {
		qq = append(qq, query{q.name, q.query})
	}
	sc["queries"] = qq
	if sweep != nil {
		sc["sweep"] = map[string]any{"delay": sweep}
	}
	raw, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// singleRun is a 2-hour run of three queries with a stall from 00:50 to
// 01:00, a bad clock at 01:20 and a restart at 01:40, then a drain of 20
// minutes in which only copies arrive. Its summary records what the
// runner does (flavours, horizons, windows).
func singleRun(t testing.TB) (*metrics.Summary, []metrics.BatchRecord) {
	t.Helper()
	c := toyConfig{
		name: "mobile-retries", start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		batches: 840, traffic: 720, rate: 100, stall: [2]float64{3000, 3600},
		badClock: 4800, badSkew: 1500, restarted: 6000, described: true,
	}
	qs := toyQueries(1200)
	s := &metrics.Summary{Format: metrics.ResultsFormat, Seed: 42, Scenario: scenarioJSON(t, c, 42, qs, nil),
		Windows: metrics.NewWindows(7200, 7200)}
	until := c.stall[1]
	s.Markers = []metrics.Marker{
		{Kind: "stall", At: c.stall[0], Until: &until, Label: "no traffic"},
		{Kind: "bad-clock", At: c.badClock + 10, Label: "row 25m in the future"},
		{Kind: "restart", At: c.restarted, Label: "restart from checkpoint"},
	}
	in := c.input()
	var ts []metrics.BatchRecord
	for _, q := range qs {
		qs, recs := toyRun(c, in, q)
		qs.Restarts = 1
		s.Queries = append(s.Queries, qs)
		ts = append(ts, recs...)
	}
	return s, ts
}

// sweepRun is a 1-hour sweep of three queries over five delays, without
// faults or a drain. Its summary lacks what older results lack (flavours,
// horizons, windows): the reports infer them.
func sweepRun(t testing.TB) (*metrics.Summary, []metrics.BatchRecord) {
	t.Helper()
	c := toyConfig{
		name: "horizon-tradeoff", start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		batches: 360, rate: 50, stall: [2]float64{-1, -1},
	}
	delays := []float64{60, 300, 600, 1200, 2400}
	base := []toyQuery{
		{name: "pair-keyed", query: `withWatermark("event_time", "10 minutes").dropDuplicates(["event_id", "event_time"])`, pairKeyed: true},
		{name: "within-watermark", query: `withWatermark("event_time", "10 minutes").dropDuplicatesWithinWatermark(["event_id"])`, within: true},
		{name: "global", query: `withWatermark("event_time", "10 minutes").dropDuplicates(["event_id"])`},
	}
	var sweep []string
	for _, d := range delays {
		sweep = append(sweep, formatDelay(&d))
	}
	s := &metrics.Summary{Format: metrics.ResultsFormat, Seed: 7, Scenario: scenarioJSON(t, c, 7, base, sweep)}
	in := c.input()
	var ts []metrics.BatchRecord
	for _, q := range base {
		for _, d := range delays {
			q.delay = d
			qs, recs := toyRun(c, in, q)
			s.Queries = append(s.Queries, qs)
			ts = append(ts, recs...)
		}
	}
	return s, ts
}

// writeResults writes s and ts into a new results folder and returns it.
func writeResults(t testing.TB, s *metrics.Summary, ts []metrics.BatchRecord) string {
	t.Helper()
	dir := t.TempDir()
	data, err := metrics.MarshalSummary(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := metrics.WriteTimeseries(&buf, ts); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "timeseries.csv"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
