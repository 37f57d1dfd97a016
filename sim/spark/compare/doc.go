// Package compare checks dedupsim's prediction of a Spark run against the
// progress records Spark wrote for it.
//
// `simulate export` writes, beside the inputs and the PySpark job that
// drives Spark batch by batch, expected/<query>.jsonl: the
// StreamingQueryProgress records dedupsim predicts, one per executed
// micro-batch (no-data batches included), in Spark's own JSON shape and
// with name set to the query's name. The job's listener writes the actual
// records of every query to one file; a driver log will do as well. Both
// sides are read with metrics/progresslog, so either may be in any form
// it reads (JSON lines, a JSON array, pretty JSON, a driver log).
//
// # Matching
//
// Records are matched by query and batch:
//
//   - A query is known by its name; an unnamed query (name null) by its
//     id. A query restarted from its checkpoint keeps its id and name,
//     gets a new runId and continues the batch ids, so the records of all
//     its runs are one query.
//   - A record without durationMs.addBatch is a trigger that ran no batch
//     (an idle trigger) and is ignored, as is an executed record without a
//     batchId (it cannot be matched); both are counted in Input.
//   - Several records of one batch (the same batchId of the same query),
//     such as the same record in a listener file and a driver log, or a
//     batch run again after a restart, count once: the record with the
//     latest timestamp wins, and of records with the same timestamp (a
//     record seen twice) the last read. Files are read in the order
//     given, a folder's files in name order.
//   - Records of one name but several query ids come from runs with
//     different checkpoints (the job run again from scratch, its listener
//     appending to the same file). Only the id of the latest executed
//     record is compared; the others are counted in Input and left out.
//
// # What is compared
//
// For each batch on both sides: numInputRows; eventTime.watermark, parsed
// (an absent watermark differs from 1970-01-01T00:00:00.000Z: Spark
// leaves it out for a query without a watermark and reports the epoch
// before the first batch has moved it); the number of stateOperators; and
// for each operator, matched by its position in stateOperators,
// operatorName, numRowsTotal, numRowsUpdated, numRowsRemoved,
// numRowsDroppedByWatermark and customMetrics.numDroppedDuplicateRows. A
// field absent on one side and present on the other differs (older Spark
// versions leave out numRowsRemoved and numDroppedDuplicateRows).
// Everything else is ignored: ids, timestamps, durations, rates, eventTime
// min, max and avg, memory, partitions, the other custom metrics, sources
// and sink. A batch on one side only is a difference of its own: missing
// in actual, or extra in actual.
//
// A worked example: the expected record of batch 17 of query "within"
// holds stateOperators[0].numRowsRemoved 210 and the actual 208, every
// other compared field equal, and 4 other batches of 412 differ. The
// verdict reads
//
//	different: query within, first at batch 17 (stateOperators[0].numRowsRemoved 210 expected, 208 actual); 5 of 412 batches differ
//
// # Exit codes
//
// The CLI command built on this package (see ExitCode) exits with
//
//	0  equal: every batch on both sides, every compared field the same
//	1  different: at least one difference
//	2  bad input: a file that cannot be read or holds no Spark progress
//	   (the one-line error of metrics/progresslog, naming the file and
//	   line), or an expected file without an executed batch
package compare
