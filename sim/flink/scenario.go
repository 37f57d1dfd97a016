package flink

import (
	"fmt"
	"maps"
	"strings"

	"github.com/dedupsim/dedupsim/engines"
	ef "github.com/dedupsim/dedupsim/engines/flink"
	"github.com/dedupsim/dedupsim/generators"
)

// OptVersion is the key of a scenario query's options that selects the
// Flink version (2.0 ... 2.3, default the newest); it is dedupsim's, not
// one of Flink's configuration keys, and the same value as a trace's
// "version".
const OptVersion = "version"

// ScenarioQuery is a Flink query as `simulate run` runs it on generated
// rows: its PARTITION BY columns and the configuration of its operator.
type ScenarioQuery struct {
	// Keys are the PARTITION BY columns.
	Keys []string
	// Config is the operator's configuration.
	Config ef.Config
}

// ParseScenarioQuery reads a scenario's Flink query and its options
// (Flink's keys verbatim, plus OptVersion) against the generated rows'
// time attributes (DefaultTimeAttributes). The harness runs the
// processing-time functions without mini-batch only: a rowtime or
// mini-batch query is refused in one line saying it is not yet supported
// in scenarios. The sink is append-only, so no -U rows are generated.
func ParseScenarioQuery(sql string, opts map[string]string) (ScenarioQuery, error) {
	q, err := ParseSQL(sql, DefaultTimeAttributes)
	if err != nil {
		return ScenarioQuery{}, err
	}
	flinkOpts := maps.Clone(opts)
	v := ef.Newest()
	if s, ok := flinkOpts[OptVersion]; ok {
		if v, err = ef.ParseVersion(strings.TrimSpace(s)); err != nil {
			return ScenarioQuery{}, fmt.Errorf("option %s: %w", OptVersion, err)
		}
		delete(flinkOpts, OptVersion)
	}
	o, err := ParseOptions(flinkOpts)
	if err != nil {
		return ScenarioQuery{}, err
	}
	if q.Order == RowTime {
		return ScenarioQuery{}, fmt.Errorf("ORDER BY %s: rowtime dedups are not yet supported in scenarios (only ORDER BY %s, the proctime attribute)", q.OrderBy, DefaultTimeAttributes.ProcTime)
	}
	if o.MiniBatch {
		return ScenarioQuery{}, fmt.Errorf("option %s: true is not yet supported in scenarios (mini-batch emits rows after their arrival)", OptMiniBatch)
	}
	if len(q.Keys) == 0 {
		return ScenarioQuery{}, fmt.Errorf("a dedup without PARTITION BY (one global key) is not yet supported in scenarios: want PARTITION BY event_id or other columns")
	}
	cfg := Config(q, o, false, v)
	// A job's heap backend runs incremental cleanup with Flink's default
	// settings (a replay's physicalState leaves it out: an upper bound).
	cfg.CleanupSize = ef.DefaultCleanupSize
	return ScenarioQuery{Keys: q.Keys, Config: cfg}, nil
}

// ScenarioOperator runs one ScenarioQuery's operator row by row.
type ScenarioOperator struct {
	op  *ef.Operator
	out []ef.Change
	seq int // the ID of the last row fed
	// compare is set when the function compares rows (keep-last without
	// TTL): only then is the row's value copied.
	compare bool
	// keys is the number of PARTITION BY columns; entryBytes the heap
	// bytes of one entry (HeapEntryBytes), set at the first row, when the
	// key's and the row's sizes are known.
	keys       int
	entryBytes int64
	cfg        ef.Config
}

// NewOperator returns a fresh operator for sq, its TTL clock at 0.
func (sq ScenarioQuery) NewOperator() (*ScenarioOperator, error) {
	op, err := ef.New(sq.Config)
	if err != nil {
		return nil, err
	}
	return &ScenarioOperator{op: op, compare: sq.Config.KeepLast && sq.Config.TTL == 0, keys: len(sq.Keys), cfg: sq.Config}, nil
}

// Function returns the Java class name of the runtime function.
func (s *ScenarioOperator) Function() string { return s.op.Function().ClassName() }

// Process feeds one row at processing time procMs (the TTL clock): key
// encodes its PARTITION BY columns, value the whole row (keep-last without
// TTL compares it). It returns the row's outcome, Emitted when the
// operator emitted a row carrying it (+I, or keep-last's +U), else
// DroppedDuplicate, and the number of changelog rows emitted.
func (s *ScenarioOperator) Process(key, value []byte, procMs int64) (engines.Outcome, int) {
	if s.entryBytes == 0 {
		s.entryBytes = s.heapEntryBytes(len(key), len(value))
	}
	s.op.SetTTLTime(procMs)
	s.seq++
	var v []byte
	if s.compare {
		v = value
	}
	s.out = s.op.ProcessBytes(key, v, 0, s.seq, s.out[:0])
	for _, c := range s.out {
		if c.Row.ID == s.seq && c.Kind != ef.UpdateBefore {
			return engines.Emitted, len(s.out)
		}
	}
	return engines.DroppedDuplicate, len(s.out)
}

// State returns the operator's entries at processing time procMs: logical
// (a read would see them) and physical (expired entries that neither a
// read nor incremental cleanup removed yet are counted too).
func (s *ScenarioOperator) State(procMs int64) (logical, physical int64) {
	s.op.SetTTLTime(procMs)
	return int64(s.op.LogicalEntries()), int64(s.op.PhysicalEntries())
}

// StateBytes returns the estimated heap bytes of the state held (the
// physical entries: the heap holds an expired entry until it is
// removed) and of one entry, as of the last State call. The total adds
// the state's bucket arrays (HeapTableBytes); a function that keeps no
// state has none. Both are 0 before the first row.
func (s *ScenarioOperator) StateBytes() (total, perEntry int64) {
	if s.entryBytes == 0 || !keepsState(s.cfg) {
		return 0, 0
	}
	n := int64(s.op.PhysicalEntries())
	return n*s.entryBytes + ef.HeapTableBytes(n), s.entryBytes
}

// keepsState reports whether the function keeps state: all but keep-last
// that needs neither -U nor +I (every row is +U).
func keepsState(c ef.Config) bool {
	return !(c.Function() == ef.ProcTimeKeepLast && !c.GenerateUpdateBefore && !c.GenerateInsert)
}

// heapEntryBytes estimates one entry's heap bytes (ef.HeapEntryBytes)
// from the sizes of the generated key and row encodings (generators'
// AppendKey): every column is 8 bytes there but a UUID event_id, 36
// bytes of text. In Flink's BinaryRowData an 8-byte column is a fixed
// field (BIGINT, INT, TIMESTAMP(3)) and the UUID a STRING (a fixed field
// plus 36 bytes of variable-length data). The row the keep-last state
// holds has the generated columns plus proc_time.
func (s *ScenarioOperator) heapEntryBytes(keyLen, rowLen int) int64 {
	key := ef.HeapRowBytes(binaryRowBytes(s.keys, keyLen))
	var val int64 // keep-first's flag: the shared Boolean.TRUE
	if s.cfg.KeepLast {
		val = ef.HeapRowBytes(binaryRowBytes(generators.NumColumns+1, rowLen+8))
	}
	return ef.HeapEntryBytes(key, val, s.cfg.TTL > 0)
}

// binaryRowBytes is ef.BinaryRowBytes of an encoding of arity columns n
// bytes long: the bytes beyond 8 per column are one string column's.
func binaryRowBytes(arity, n int) int {
	varBytes := 0
	if extra := n - 8*arity; extra > 0 {
		varBytes = extra + 8
	}
	return ef.BinaryRowBytes(arity, varBytes)
}

// FormatDuration renders ms milliseconds as a Flink duration option in its
// largest exact unit, as Flink's TimeUtils.formatWithHighestUnit does:
// "2 min", "90 s", "1500 ms", "1 d". ParseDuration reads it back.
func FormatDuration(ms int64) string {
	for _, u := range []struct {
		ms   int64
		name string
	}{{86_400_000, "d"}, {3_600_000, "h"}, {60_000, "min"}, {1000, "s"}} {
		if ms != 0 && ms%u.ms == 0 {
			return fmt.Sprintf("%d %s", ms/u.ms, u.name)
		}
	}
	return fmt.Sprintf("%d ms", ms)
}
