// Package export turns a scenario or a replay trace into what a real Spark
// needs to run it, and what dedupsim predicts Spark will report: the round
// trip of docs/spark-round-trip.md.
//
// An export folder holds:
//
//	batches/batch-000000000.parquet   one file per micro-batch, in batch order
//	job.py                            the PySpark job that feeds them to Spark
//	expected/<query>.jsonl            the progress records dedupsim predicts
//	README.md                         the commands, the Spark versions, what is compared
//	export.json                       what was exported (source, schema, queries, faults)
//	.dedupsim-export                  the marker: dedupsim may replace this folder
//
// # Batches
//
// For a scenario, batch k holds the rows of the k-th trigger that has
// rows, exactly as `simulate run` forms them: triggers at start +
// n*trigger, each taking the rows that arrived since the previous one, in
// arrival order. A trigger without rows gets no file: Spark's file source
// runs no batch when its folder has no new file, and the no-data batches
// Spark decides on follow from the prediction. For a trace, each addData
// step is one file, an empty addData an empty file (a Parquet file with no
// rows, an empty JSON file): Spark's file source runs a batch for any new
// file (FileStreamSource advances its offset when a listing finds one),
// with numInputRows 0, as the trace format's MemoryStream does.
//
// File names are batch-NNNNNNNNN with nine digits, so that name order is
// batch order up to 10^9 batches (an export refuses more).
//
// # Faults and restarts
//
// A scenario's restart fault, and a trace's restart step, become a stop
// and a start of the query on the same checkpoint before the first batch
// whose trigger comes at or after it (faults fire at the first trigger at
// or after their time, before its batch). A lose-checkpoint fault becomes
// a start on a new, empty checkpoint and a new, empty input folder (the
// stream goes on where it was: no row is read twice); Spark then knows it
// as a new query (a new id, batch ids from 0), which job.py names
// NAME~2, NAME~3, ... and the prediction likewise. Faults before the first
// batch or after the last change nothing Spark reports and are left out;
// several at one point count as one (a lost checkpoint if any is). Sink
// failures are not exported: a retried batch reports the same counters,
// and the noop sink job.py writes to never fails. Bad clocks and
// heartbeats are rows, exported as such.
//
// # The prediction
//
// job.py copies one batch file into the query's input folder and calls
// processAllAvailable, which returns once Spark has run that data batch
// and whatever no-data batch it decides on. The prediction runs the
// executor (microbatch.Query) the same way, as sim/spark/replay does for a trace: for
// each batch, one data batch of its rows, then a no-data batch when
// no-data batches are enabled and Spark would ask for one; a restart
// recovers from a real checkpoint and runs no no-data batch until data
// arrives. This is not the scenario runner's trigger-by-trigger timing:
// there a no-data batch waits for the next trigger, and data arriving at
// that trigger replaces it.
//
// Each executed batch is one StreamingQueryProgress record in Spark's JSON
// shape, meeting sim/spark/compare's contract: id, runId, name, timestamp,
// batchId, numInputRows, durationMs.addBatch, eventTime.watermark (for a
// query with a watermark) and, per dedup operator (the last in the chain
// first), operatorName, numRowsTotal, numRowsUpdated, numRowsRemoved,
// numRowsDroppedByWatermark and customMetrics.numDroppedDuplicateRows.
// Ids are derived from the export's source, so a seed fixes every byte;
// timestamps are the trigger times (a scenario) or the batch's index in
// seconds since the epoch (a trace), and durations 0: compare ignores all
// of them.
//
// # Memory
//
// An export is streamed: it holds one batch of rows at a time, the state
// of every query, and the file being written; never the run's history.
package export
