// Package partition places a key in a shuffle partition exactly as Spark
// does, so that dedupsim can say which of the spark.sql.shuffle.partitions
// state stores a key lives in.
//
// Spark's stateful operators (dropDuplicates, dropDuplicatesWithinWatermark,
// aggregations) require their input clustered by the key columns, and the
// exchange Spark inserts for that is HashPartitioning(keys, n). Its
// partition id is
//
//	pmod(Murmur3Hash(keys, seed 42), n)
//
// (partitionIdExpression in sql/catalyst/.../plans/physical/partitioning.scala).
// Murmur3Hash folds the key columns in order: the hash starts at the seed 42
// and each column's value is hashed with the previous result as its seed; a
// null column leaves the hash unchanged. How a value is hashed depends on its
// Spark type (HashExpression and InterpretedHashFunction in
// sql/catalyst/.../expressions/hash.scala):
//
//	boolean                     Int(h, 1) for true, Int(h, 0) for false
//	byte, short, int, date      Int: the value as a 32-bit int (a date as days)
//	long, timestamp             Long: the value as a 64-bit int (a timestamp
//	                            as microseconds since the epoch)
//	float                       Int of floatToIntBits, -0.0 as 0 (see Float)
//	double                      Long of doubleToLongBits, -0.0 as 0 (see Double)
//	string, binary              Bytes: the UTF-8 bytes, with Spark's legacy
//	                            murmur3 tail (see Bytes)
//	null                        unchanged (Null)
//	array, struct               each element or field folded in order, as if
//	                            it were one more column
//
// The hash is Spark's signed 32-bit int; Of is Spark's pmod on it, so a
// negative hash still lands in [0, n).
//
// Worked example, from PySpark's documented hash('ABC', 'DEF') = 599895104
// and hash('ABC') = -757602832:
//
//	h := partition.Seed                  // 42
//	h = partition.String(h, "ABC")       // -757602832
//	partition.Of(h, 200)                 // -757602832 % 200 = -32; -32+200 = 168
//	h = partition.String(h, "DEF")       // 599895104
//	partition.Of(h, 200)                 // 599895104 % 200 = 104
//
// A key of a UUID string and an event time, as dedupsim generates them:
//
//	h := partition.Bytes(partition.Seed, row.EventID[:])
//	h = partition.Timestamp(h, row.EventTime)
//	p := partition.Of(h, 200)
//
// Every function is a pure function of its arguments and allocates nothing
// (Of panics on a partition count outside [1, MaxInt32], a caller's bug).
//
// What the package does not decide: which columns form the key and in which
// order. Spark 3.5's Dataset.dropDuplicates(colNames) passes the names
// through colNames.toSet.toSeq (kept for state compatibility, SPARK-31990),
// so up to four distinct names keep the order given and more than four come
// in Scala hash-set order; dropDuplicates() passes all the columns the same
// way. The caller must fold the columns in Spark's order.
package partition
