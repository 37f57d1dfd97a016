// Package engines holds what every engine model shares: the Store
// interface that the state-store backends (memstore, pebblestore)
// implement, with its optional capabilities (BatchAdder, Ranger,
// Snapshotter), and the Outcome of a row. Each engine's operators live in
// a folder of their own: spark (StreamingDeduplicateExec and its
// within-watermark twin, Spark's partitioning), flink, kstreams and beam.
package engines
