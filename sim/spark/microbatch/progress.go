package microbatch

import "github.com/dedupsim/dedupsim/metrics"

// EventTime returns the eventTime part of p's progress record: the
// watermark the batch ran with, for a query with a watermark; nil
// otherwise.
func (p *Progress) EventTime() *metrics.EventTimeStats {
	if !p.HasWatermark {
		return nil
	}
	return &metrics.EventTimeStats{Watermark: metrics.FormatMillis(p.Watermark)}
}

// StateOperators returns p's operators as a progress record lists them:
// Spark lists state operators from the sink back to the source, so the
// chain's last dedup comes first. A chain without a dedup operator has
// none (nil, which progress records print as null).
func (p *Progress) StateOperators() []metrics.StateOperator {
	var out []metrics.StateOperator
	for k := len(p.Operators) - 1; k >= 0; k-- {
		o := p.Operators[k]
		custom := map[string]int64{"numDroppedDuplicateRows": o.NumDroppedDuplicateRows}
		if o.Timer {
			// numExpiredTimers is counted by the JVM's processTimers only;
			// a PySpark processor's timers fire in the Python worker
			// (stateful_processor_util.py), so Spark reports 0 (pyspark
			// 4.3.0, own-tws-timer-fires-at-watermark).
			custom = map[string]int64{"numValueStateVars": 1, "numRegisteredTimers": o.NumRowsUpdated,
				"numExpiredTimers": 0, "numDeletedTimers": o.NumRowsRemoved}
		} else if o.TWS {
			ttlVars := int64(0)
			if o.TTL {
				ttlVars = 1
			}
			custom = map[string]int64{"numValueStateVars": 1, "numValueStateWithTTLVars": ttlVars,
				"numValuesRemovedDueToTTLExpiry": o.NumRowsRemoved}
		}
		out = append(out, metrics.StateOperator{
			OperatorName:              o.Name,
			NumRowsTotal:              o.NumRowsTotal,
			NumRowsUpdated:            o.NumRowsUpdated,
			NumRowsRemoved:            o.NumRowsRemoved,
			NumRowsDroppedByWatermark: o.NumRowsDroppedByWatermark,
			CustomMetrics:             custom,
		})
	}
	return out
}

// ProgressLine returns p as a line of progress/<query>.jsonl, with the
// batch's processing time (ms since the epoch).
func (p *Progress) ProgressLine(processingMs int64) metrics.ProgressLine {
	return metrics.ProgressLine{
		BatchID: p.BatchID, Timestamp: metrics.FormatMillis(processingMs), NoData: p.NoData,
		NumInputRows: p.NumInputRows, EventTime: p.EventTime(), StateOperators: p.StateOperators(),
		Sink: metrics.SinkProgress{NumOutputRows: p.NumOutputRows},
	}
}
