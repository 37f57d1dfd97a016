package flink

import (
	"errors"
	"fmt"
	"io"
	"strings"

	ef "github.com/dedupsim/dedupsim/engines/flink"
	"github.com/dedupsim/dedupsim/sim/enginetrace"
)

// LooksLikeSQL reports whether query is SQL (it starts with SELECT) rather
// than a PySpark chain: `simulate explain` sends it to the Flink front end.
func LooksLikeSQL(query string) bool {
	f := strings.Fields(query)
	return len(f) > 0 && strings.EqualFold(f[0], "SELECT")
}

// NewExplainer binds explain's Flink flags (--option, --flink-version,
// --proctime, --rowtime, --update-before) to fs and returns the function
// that explains a Flink SQL query with them.
func NewExplainer(fs enginetrace.Flags) enginetrace.ExplainFunc {
	var options []string
	var version, procTime, rowTime string
	var updateBefore bool
	fs.StringArrayVar(&options, "option", nil, "Flink SQL only: a Flink option key=value (repeatable), e.g. --option 'table.exec.state.ttl=60 s'")
	fs.StringVar(&version, "flink-version", NewestVersion().String(), "Flink SQL only: the Flink version (2.0, 2.1, 2.2, 2.3)")
	fs.StringVar(&procTime, "proctime", DefaultTimeAttributes.ProcTime, "Flink SQL only: the PROCTIME() column")
	fs.StringVar(&rowTime, "rowtime", DefaultTimeAttributes.RowTime, "Flink SQL only: the event-time column with a WATERMARK")
	fs.BoolVar(&updateBefore, "update-before", false, "Flink SQL only: the sink needs -U rows (a retract sink)")
	return func(w io.Writer, query string) error {
		v, err := ParseVersion(version)
		if err != nil {
			return fmt.Errorf("--flink-version: %w", err)
		}
		opts := map[string]string{}
		for _, o := range options {
			k, val, ok := strings.Cut(o, "=")
			if !ok {
				return fmt.Errorf("--option %q: want key=value", o)
			}
			opts[strings.TrimSpace(k)] = val
		}
		text, err := Explain(query, TimeAttributes{ProcTime: procTime, RowTime: rowTime}, opts, v, updateBefore)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, text)
		return err
	}
}

// Explain parses a Flink SQL query with its options and says which
// operator and runtime function Flink's planner picks for it, what it
// emits, how its state grows and expires, and what TTL expiry does to the
// output. A Top-N rank (valid SQL, not a dedup) is explained as such, with
// no error; a query that is not the pattern, an ORDER BY column that is
// not a time attribute, or a bad option is an error of one line.
func Explain(sql string, ta TimeAttributes, opts map[string]string, v ef.Version, updateBefore bool) (string, error) {
	q, err := ParseSQL(sql, ta)
	var topN *TopNError
	if errors.As(err, &topN) {
		return fmt.Sprintf("Flink %s: %s\n  Flink plans StreamExecRank (a Top-N rank, state: the top rows of every key), not StreamExecDeduplicate.\n  For a dedup: ROW_NUMBER() OVER ([PARTITION BY keys] ORDER BY one time attribute ASC|DESC), filtered on rn = 1.\n", v, topN.Error()), nil
	}
	if err != nil {
		return "", err
	}
	o, err := ParseOptions(opts, v)
	if err != nil {
		return "", err
	}
	cfg := Config(q, o, updateBefore, v)
	fn := cfg.Function()
	var b strings.Builder
	keep := "first"
	dir := "ASC"
	if q.KeepLast {
		keep, dir = "last", "DESC"
	}
	keys := "none (one global key)"
	if len(q.Keys) > 0 {
		keys = strings.Join(q.Keys, ", ")
	}
	fmt.Fprintf(&b, "Flink %s: a deduplication (StreamExecDeduplicate), %s keep-%s\n", v, q.Order, keep)
	fmt.Fprintf(&b, "  keys: %s (PARTITION BY)\n", keys)
	fmt.Fprintf(&b, "  order: %s %s (%s attribute)\n", q.OrderBy, dir, q.Order)
	op := "KeyedProcessOperator"
	if fn.MiniBatch() {
		op = fmt.Sprintf("KeyedMapBundleOperator, bundles of %d rows or one allow-latency (%d ms)", o.MiniBatchSize, o.AllowLatencyMs)
	}
	fmt.Fprintf(&b, "  function: %s (%s)\n", fn.ClassName(), op)
	fmt.Fprintf(&b, "  emits: %s\n", emits(fn, cfg))
	fmt.Fprintf(&b, "  state: %s\n", stateText(fn, cfg))
	if cfg.TTL == 0 {
		b.WriteString("  ttl: none (table.exec.state.ttl = 0): state is never cleared and grows with the number of keys\n")
	} else {
		fmt.Fprintf(&b, "  ttl: %d ms of processing time, counted %s; expired once lastWrite + ttl <= now, never read after (NeverReturnExpired)\n", cfg.TTL, ttlFrom(fn, cfg))
		fmt.Fprintf(&b, "  after expiry: %s\n", afterExpiry(fn, cfg))
		if cfg.RocksDB {
			n := cfg.QueryTimeAfterNumEntries
			if n == 0 {
				n = 1000
			}
			fmt.Fprintf(&b, "  memory: expired entries stay in RocksDB until read again or dropped by Flink's TTL compaction filter when a compaction processes their file (no incremental cleanup on RocksDB); the filter reads the clock every %d entries (%s)\n", n, OptQueryTimeAfter)
		} else {
			b.WriteString("  memory: expired entries stay until read again or removed by incremental cleanup (a few per state access, heap backend)\n")
		}
	}
	if cfg.RocksDB {
		b.WriteString("  backend: RocksDB (state.backend.type: rocksdb): entries are serialized (key group, key row, namespace; value with its 8-byte TTL timestamp); state bytes are an estimate (internal key and block overhead, uncompressed)\n")
	}
	if q.Order == RowTime && fn == ef.RowTimeChangelog && !q.KeepLast && !v.InsertOnlyKeepFirst() {
		b.WriteString("  note: Flink 2.1+ runs this query as RowTimeDeduplicateKeepFirstRowFunction (insert-only, waits for the watermark, drops late rows)\n")
	}
	return b.String(), nil
}

func emits(fn ef.Function, c ef.Config) string {
	ub := ""
	if c.GenerateUpdateBefore {
		ub = "-U and "
	}
	first := "+I"
	if !c.GenerateInsert && !c.GenerateUpdateBefore {
		first = "+U"
	}
	switch fn {
	case ef.ProcTimeKeepFirst:
		if c.Version.InsertOnlyKeepFirst() {
			return "+I for the first row of each key, nothing for later rows; an insert-only changelog (outputInsertOnly=true)"
		}
		return "+I for the first row of each key, nothing for later rows"
	case ef.ProcTimeMiniBatchKeepFirst:
		return "+I for the first row of each key, nothing for later rows; yet with mini-batch the planner declares an updating changelog (outputInsertOnly=false), which an append-only sink refuses"
	case ef.ProcTimeKeepLast, ef.ProcTimeMiniBatchKeepLast:
		if first == "+U" {
			return "+U for every row (table.exec.deduplicate.insert-update-after-sensitive-enabled is false)"
		}
		if c.TTL > 0 {
			return fmt.Sprintf("+I for a key's first row, then %s+U for every later row (with TTL on, even one identical to the stored row)", ub)
		}
		if c.RocksDB {
			return fmt.Sprintf("+I for a key's first row, then %s+U for every later row, except one identical to the stored row, which emits nothing (RocksDB serializes the row before its kind is set)", ub)
		}
		return fmt.Sprintf("+I for a key's first row, then %s+U for every later row; one identical to the stored row emits nothing only while that row was emitted as +I (heap backend: the stored row object becomes +U, and the generated equaliser compares row kinds)", ub)
	case ef.RowTimeKeepFirstInsertOnly:
		return "+I once the watermark passes the earliest row of a key (insert-only); rows with rowtime < watermark are dropped and counted (numLateRecordsDropped)"
	}
	if c.KeepLast {
		return fmt.Sprintf("%s for a key's first row, then %s+U for every row with rowtime >= the kept one (ties: the later arrival wins); no late filter", first, ub)
	}
	return fmt.Sprintf("%s for a key's first row, then %s+U when a row with an earlier rowtime arrives (ties: the earlier arrival stays); no late filter", first, ub)
}

func stateText(fn ef.Function, c ef.Config) string {
	switch fn {
	case ef.ProcTimeKeepFirst, ef.ProcTimeMiniBatchKeepFirst:
		return "one boolean flag per key"
	case ef.ProcTimeKeepLast, ef.ProcTimeMiniBatchKeepLast:
		if !c.GenerateInsert && !c.GenerateUpdateBefore {
			return "none"
		}
		return "the last row of every key"
	case ef.RowTimeKeepFirstInsertOnly:
		return "per key, the row waiting for the watermark (no TTL) and then an already-emitted flag (with TTL)"
	}
	return "the kept row of every key"
}

func ttlFrom(fn ef.Function, c ef.Config) string {
	switch fn {
	case ef.ProcTimeKeepFirst, ef.ProcTimeMiniBatchKeepFirst:
		return "from a key's first copy (duplicates only read the flag)"
	case ef.ProcTimeKeepLast, ef.ProcTimeMiniBatchKeepLast:
		return "from a key's last copy (every copy rewrites the row)"
	case ef.RowTimeMiniBatch:
		return "from the last bundle holding the key (the kept row is rewritten at every flush, even unchanged)"
	case ef.RowTimeKeepFirstInsertOnly:
		return "from the emission (the flag is written when the watermark emits the row; waiting rows never expire)"
	}
	return "from the last row that replaced the kept one (dropped rows do not refresh it)"
}

func afterExpiry(fn ef.Function, c ef.Config) string {
	switch fn {
	case ef.ProcTimeKeepFirst, ef.ProcTimeMiniBatchKeepFirst, ef.RowTimeKeepFirstInsertOnly:
		return "the next copy of the key is emitted again (+I): a duplicate downstream"
	}
	return "the next row of the key is +I again, without -U for the row downstream still holds"
}
