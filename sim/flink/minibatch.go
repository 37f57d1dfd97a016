package flink

import (
	"math"
	"slices"

	"github.com/dedupsim/dedupsim/engines"
	ef "github.com/dedupsim/dedupsim/engines/flink"
)

// A proctime mini-batch query runs as Flink SQL plans it (flink-table-
// runtime and flink-table-planner, read at apache/flink master): a
// ProcTimeMiniBatchAssignerOperator with the allow-latency as its
// interval iv, then the dedup's KeyedMapBundleOperator with a
// CountBundleTrigger of table.exec.mini-batch.size rows.
//
//   - The assigner's watermark starts at 0. Its processing-time timer
//     fires first at Open + iv, then at currentBatch + iv, where
//     currentBatch = now - now % iv; a timer, or a row (before it is
//     forwarded), whose currentBatch is above the last watermark emits
//     currentBatch as the new watermark. So the watermarks are the
//     multiples of iv, each emitted at the first timer or row at or
//     after it.
//   - The bundle operator flushes its bundle (finishBundle) on every
//     watermark, after the row that makes it hold size rows, and at the
//     end of input (the maximum watermark, and finish).
//   - At a flush each key's bundle value goes through the function at
//     the TTL clock of the flush: keep-first's value is the key's first
//     row of the bundle, emitted (+I) unless the key's flag is alive;
//     keep-last's is the last row, +I or +U (with TTL, or when it
//     differs from the stored row), written with the flush's TTL time.
//
// Every row waits for its bundle's flush (Deferred) and gets its verdict
// there: Emitted when the flush emitted a row carrying it, else
// DroppedDuplicate (a copy behind the bundle's first, or before its
// last, or a key already in state). Worked example (iv 1000 ms, opened at
// 0, size 100; arrival in ms): a at 100, a at 300, b at 900: the timer at
// 1000 flushes at TTL time 1000, keep-first emits the first a and b (the
// second a: DroppedDuplicate); a at 1500 waits for the timer at 2000,
// which finds a's flag and drops it.

// processMiniBatch feeds one row to a mini-batch query: the assigner's
// timers up to procMs fire, the row's own watermark check may flush,
// then the row joins the bundle, which the count trigger may flush. The
// row waits for its verdict; the flushed rows are counted by their
// verdicts, so no changelog row is counted here.
func (s *ScenarioOperator) processMiniBatch(key, value []byte, procMs, eventMs int64) (engines.Outcome, int) {
	s.tickMiniBatch(procMs)
	if b := procMs - procMs%s.mbInterval; b > s.mbWm {
		s.mbWm = b
		s.flush(procMs)
	}
	s.op.SetTTLTime(procMs)
	s.seq++
	var v []byte
	if s.compare {
		v = value
	}
	s.pending = append(s.pending, s.seq)
	s.out = s.op.ProcessBytes(key, v, eventMs, s.seq, s.out[:0])
	s.tally()
	if int64(len(s.pending)) >= s.cfg.MiniBatchSize {
		// The CountBundleTrigger flushed, at the row's arrival.
		s.decide()
	}
	s.deferred, s.ahead = true, false
	return engines.DroppedDuplicate, 0
}

// tickMiniBatch fires the mini-batch assigner's timers up to procMs, each
// at its own time: a timer whose batch is above the last watermark emits
// it, which flushes the bundle at the timer's TTL time. Once the bundle
// is empty the timers left up to procMs only raise the watermark, so
// they are skipped to the last of them.
func (s *ScenarioOperator) tickMiniBatch(procMs int64) {
	iv := s.mbInterval
	for s.mbNext <= procMs {
		t := s.mbNext
		b := t - t%iv
		if b > s.mbWm {
			s.mbWm = b
			s.flush(t)
		}
		s.mbNext = b + iv
		if len(s.pending) == 0 && s.mbNext <= procMs {
			b = procMs - procMs%iv
			s.mbWm, s.mbNext = max(s.mbWm, b), b+iv
		}
	}
}

// flush sends the mini-batch watermark to the bundle operator at TTL
// time at: it flushes the bundle, and every row of it gets its verdict.
func (s *ScenarioOperator) flush(at int64) {
	s.op.SetTTLTime(at)
	s.out = s.op.Watermark(s.mbWm, s.out[:0])
	s.tally()
	s.decide()
}

// decide gives every row of the flushed bundle its verdict, in the order
// the rows came: Emitted when the flush (s.out) emitted a row carrying it.
func (s *ScenarioOperator) decide() {
	ids := s.emittedIDs[:0]
	for _, c := range s.out {
		if c.Kind != ef.UpdateBefore {
			ids = append(ids, c.Row.ID)
		}
	}
	slices.Sort(ids)
	j := 0
	for _, row := range s.pending {
		o := engines.DroppedDuplicate
		for j < len(ids) && ids[j] < row {
			j++
		}
		if j < len(ids) && ids[j] == row {
			o = engines.Emitted
		}
		s.verdicts = append(s.verdicts, Verdict{row, o})
	}
	s.emittedIDs, s.pending = ids, s.pending[:0]
}

// A rowtime mini-batch query (RowTimeMiniBatchDeduplicateFunction, keep-
// first and keep-last in every version) runs behind the table's SQL
// watermark assigner (ScenarioOperator) and a RowTimeMiniBatchAssginerOperator
// with the allow-latency as its event-time interval iv (flink-table-
// runtime, operators/wmassigners, read at apache/flink master): it
// forwards rows, keeps the largest watermark received, and forwards it
// only once it reaches the next mini-batch end, first iv - 1, then the
// end (start + iv - 1, start = w - w % iv) of the forwarded watermark's
// mini-batch, or the one after when the watermark is that end; the
// maximum watermark (end of input) is forwarded as it is. Each forwarded
// watermark flushes the bundle at the TTL time of its emission, as the
// size trigger does at a row's arrival; at a flush every buffered row of
// a key, in order, is compared with the kept one (keep-first keeps an
// earlier event time, keep-last the same or a later one): a kept row is
// emitted (+I or +U) and Emitted, the others dropped.

// processRowTimeMiniBatch feeds one row to a rowtime mini-batch query:
// the SQL assigner's ticks up to procMs, the row into the bundle (the
// size trigger may flush), then the assigner's eager emission. The row
// waits for its verdict.
func (s *ScenarioOperator) processRowTimeMiniBatch(key []byte, procMs, eventMs int64) (engines.Outcome, int) {
	s.tick(procMs)
	s.op.SetTTLTime(procMs)
	s.seq++
	s.pending = append(s.pending, s.seq)
	s.out = s.op.ProcessBytes(key, nil, eventMs, s.seq, s.out[:0])
	s.tally()
	if int64(len(s.pending)) >= s.cfg.MiniBatchSize {
		s.decide()
	}
	s.current = max(s.current, eventMs-s.wm.Delay)
	if s.current-s.emittedWm > s.wm.Interval {
		s.emit(s.current)
	}
	s.deferred, s.ahead = true, false
	return engines.DroppedDuplicate, 0
}

// forwardRowTime is the rowtime mini-batch assigner receiving watermark
// w from the SQL assigner at the current TTL time.
func (s *ScenarioOperator) forwardRowTime(w int64) {
	iv := s.mbInterval
	if w != math.MaxInt64 {
		s.mbCur = max(s.mbCur, w)
		if s.mbCur < s.mbNext {
			return
		}
		w = s.mbCur
		end := w - (w+iv)%iv + iv - 1
		if end <= w {
			end += iv
		}
		s.mbNext = end
	}
	s.mbWm = w
	s.out = s.op.Watermark(w, s.out[:0])
	s.tally()
	s.decide()
}
