// Package flink models Flink SQL's deduplication operators row by row: the
// runtime functions the planner picks for the ROW_NUMBER() = 1 pattern
// (flink-table-runtime, operators/deduplicate), their state TTL and their
// changelog, exactly as Flink's operator test harness shows them.
//
// The model is driven like Flink's KeyedOneInputStreamOperatorTestHarness:
// rows one at a time (Process), the state TTL clock set explicitly
// (SetTTLTime, the harness's setStateTtlProcessingTime), watermarks
// (Watermark) and the end of a bounded input (EndOfInput). Every call
// appends the rows the operator emits to a slice the caller owns; the
// caller reads logical and physical state counts between calls.
//
// Worked example (proctime keep-first, TTL 10 ms): row a at TTL time 0 is
// emitted (+I) and writes the key's flag with timestamp 0; a at TTL time 9
// only reads the flag (0 + 10 > 9: alive) and is dropped, without moving
// the timestamp; a at TTL time 10 reads an expired flag (0 + 10 <= 10),
// which Flink clears and treats as absent, so a is emitted again (+I).
package flink

import (
	"fmt"
	"math"
)

// Kind is a changelog row kind (Flink's RowKind).
type Kind uint8

// Row kinds, in Flink's short-string form.
const (
	Insert       Kind = iota // +I
	UpdateBefore             // -U
	UpdateAfter              // +U
	Delete                   // -D
)

// String returns Flink's short string of the kind: +I, -U, +U or -D.
func (k Kind) String() string {
	switch k {
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return "?"
}

// Version is a Flink minor version, e.g. {2, 1}.
type Version struct{ Major, Minor int }

// Versions this package models, oldest first; the last is the default.
var Versions = []Version{{2, 0}, {2, 1}, {2, 2}, {2, 3}}

// Newest is the default version: the newest one modelled.
func Newest() Version { return Versions[len(Versions)-1] }

// String returns the version as "2.1".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// InsertOnlyKeepFirst reports whether the planner of this version turns a
// rowtime keep-first dedup over an insert-only input without mini-batch
// into the insert-only, watermark-timed RowTimeDeduplicateKeepFirstRowFunction
// (FLINK-37005, Flink 2.1).
func (v Version) InsertOnlyKeepFirst() bool {
	return v.Major > 2 || (v.Major == 2 && v.Minor >= 1)
}

// ISODurations reports whether this version's TimeUtils.parseDuration
// (flink-core) falls back to ISO-8601 (java.time.Duration.parse) for text
// that does not start with a digit: 2.1 on; 2.0.x reads only
// "number [unit]" (read in flink-core 2.0.2, 2.1.0, 2.2.0 and 2.3.0's
// sources).
func (v Version) ISODurations() bool {
	return v.Major > 2 || (v.Major == 2 && v.Minor >= 1)
}

// ParseVersion parses "2.0" ... "2.3" (a patch suffix such as "2.0.2" is
// accepted and ignored).
func ParseVersion(s string) (Version, error) {
	for _, v := range Versions {
		if s == v.String() || len(s) > len(v.String()) && s[:len(v.String())+1] == v.String()+"." {
			return v, nil
		}
	}
	//lint:ignore ST1005 the message starts with Flink, a proper name
	return Version{}, fmt.Errorf("Flink version %q is not modelled: want one of 2.0, 2.1, 2.2, 2.3", s)
}

// Function names the Flink runtime function that executes a dedup.
type Function uint8

// Flink's deduplicate functions (flink-table-runtime,
// org.apache.flink.table.runtime.operators.deduplicate).
const (
	ProcTimeKeepFirst Function = iota
	ProcTimeKeepLast
	ProcTimeMiniBatchKeepFirst
	ProcTimeMiniBatchKeepLast
	RowTimeChangelog
	RowTimeMiniBatch
	RowTimeKeepFirstInsertOnly
)

// ClassName returns the Java class name of the function.
func (f Function) ClassName() string {
	switch f {
	case ProcTimeKeepFirst:
		return "ProcTimeDeduplicateKeepFirstRowFunction"
	case ProcTimeKeepLast:
		return "ProcTimeDeduplicateKeepLastRowFunction"
	case ProcTimeMiniBatchKeepFirst:
		return "ProcTimeMiniBatchDeduplicateKeepFirstRowFunction"
	case ProcTimeMiniBatchKeepLast:
		return "ProcTimeMiniBatchDeduplicateKeepLastRowFunction"
	case RowTimeChangelog:
		return "RowTimeDeduplicateFunction"
	case RowTimeMiniBatch:
		return "RowTimeMiniBatchDeduplicateFunction"
	case RowTimeKeepFirstInsertOnly:
		return "RowTimeDeduplicateKeepFirstRowFunction"
	}
	return "unknown"
}

// MiniBatch reports whether the function runs inside a
// KeyedMapBundleOperator (rows buffered per key, flushed as a bundle).
func (f Function) MiniBatch() bool {
	return f == ProcTimeMiniBatchKeepFirst || f == ProcTimeMiniBatchKeepLast || f == RowTimeMiniBatch
}

// Config is a dedup as the planner sees it: the query's shape and the
// options StreamExecDeduplicate reads.
type Config struct {
	// RowTime: ORDER BY the event-time attribute (else PROCTIME()).
	RowTime bool
	// KeepLast: ORDER BY ... DESC.
	KeepLast bool
	// TTL is table.exec.state.ttl in milliseconds; 0 disables TTL.
	TTL int64
	// GenerateUpdateBefore: the sink needs -U rows (a retract sink).
	GenerateUpdateBefore bool
	// GenerateInsert is
	// table.exec.deduplicate.insert-update-after-sensitive-enabled
	// (default true): the first row of a key is +I, not +U.
	GenerateInsert bool
	// MiniBatch is table.exec.mini-batch.enabled; MiniBatchSize is
	// table.exec.mini-batch.size, the CountBundleTrigger's count.
	MiniBatch     bool
	MiniBatchSize int64
	// Version selects the planner's choice for rowtime keep-first.
	Version Version
	// RocksDB: the state lives in RocksDB (state.backend.type: rocksdb),
	// which serializes a row at update: keep-last's stored row keeps the
	// kind it had then (INSERT), so an identical repeat is always
	// suppressed without TTL. Its TTL cleanup is the compaction filter,
	// not incremental cleanup (RocksDB's state has no incremental
	// visitor, so TtlStateFactory registers none and CleanupSize is
	// ignored): an expired entry stays until a read clears it or a
	// compaction (Operator.Compact) drops it.
	RocksDB bool
	// QueryTimeAfterNumEntries is the RocksDB compaction filter's
	// state.backend.rocksdb.compaction.filter.query-time-after-num-entries
	// (RocksDBConfigurableOptions, default 1000; the SQL dedup's TTL
	// config sets no RocksdbCompactFilterCleanupStrategy of its own, so
	// the backend's option applies): the filter reads the TTL clock when
	// a compaction starts and again after every that many entries. A
	// modelled compaction runs at one TTL clock instant, so the setting
	// changes nothing here; it is kept for explain and the oracle. 0
	// means the default.
	QueryTimeAfterNumEntries int64
	// CleanupSize is the entries the heap backend's incremental TTL
	// cleanup visits at every access of a state with TTL:
	// DefaultCleanupSize is Flink's; 0 models no cleanup, so that an
	// expired entry stays until a read clears it (the upper bound a
	// replay's physicalState reports).
	CleanupSize int
}

// Function returns the runtime function the planner of c.Version picks
// (StreamExecDeduplicate's translators; the insert-only choice is
// RankUtil.outputInsertOnlyInDeduplicate: keep-first and no mini-batch).
func (c Config) Function() Function {
	switch {
	case !c.RowTime && c.MiniBatch && c.KeepLast:
		return ProcTimeMiniBatchKeepLast
	case !c.RowTime && c.MiniBatch:
		return ProcTimeMiniBatchKeepFirst
	case !c.RowTime && c.KeepLast:
		return ProcTimeKeepLast
	case !c.RowTime:
		return ProcTimeKeepFirst
	case c.MiniBatch:
		return RowTimeMiniBatch
	case !c.KeepLast && c.Version.InsertOnlyKeepFirst():
		return RowTimeKeepFirstInsertOnly
	}
	return RowTimeChangelog
}

// Validate reports the first problem of c.
func (c Config) Validate() error {
	if c.TTL < 0 {
		return fmt.Errorf("table.exec.state.ttl must not be negative, got %d ms", c.TTL)
	}
	if c.MiniBatch && c.MiniBatchSize <= 0 {
		return fmt.Errorf("table.exec.mini-batch.size should be greater than 0 when mini-batch is enabled, got %d", c.MiniBatchSize)
	}
	if c.QueryTimeAfterNumEntries < 0 {
		return fmt.Errorf("state.backend.rocksdb.compaction.filter.query-time-after-num-entries must not be negative, got %d", c.QueryTimeAfterNumEntries)
	}
	if c.CleanupSize < 0 {
		return fmt.Errorf("incremental cleanup size must not be negative, got %d", c.CleanupSize)
	}
	if _, err := ParseVersion(c.Version.String()); err != nil {
		return err
	}
	return nil
}

// expired is Flink's TtlUtils.expired: the entry written at lastWrite is
// expired at now once lastWrite + ttl <= now (the sum saturates instead of
// overflowing).
func expired(lastWrite, ttl, now int64) bool {
	return expiryOf(lastWrite, ttl) <= now
}

// expiryOf is the TTL clock at which an entry written at lastWrite
// expires: lastWrite + ttl, saturated at math.MaxInt64.
func expiryOf(lastWrite, ttl int64) int64 {
	exp := lastWrite + ttl
	if lastWrite > 0 && ttl > 0 && exp < 0 {
		exp = math.MaxInt64
	}
	return exp
}
