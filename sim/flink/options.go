package flink

import (
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"

	ef "github.com/dedupsim/dedupsim/engines/flink"
)

// Option keys the front end reads, verbatim from Flink's configuration.
const (
	OptStateTTL       = "table.exec.state.ttl"
	OptMiniBatch      = "table.exec.mini-batch.enabled"
	OptMiniBatchSize  = "table.exec.mini-batch.size"
	OptMiniBatchDelay = "table.exec.mini-batch.allow-latency"
	OptInsertSens     = "table.exec.deduplicate.insert-update-after-sensitive-enabled"
	OptCompact        = "table.exec.deduplicate.mini-batch.compact-changes-enabled"
	OptAsyncState     = "table.exec.async-state.enabled"
	// OptStateBackend is Flink's state.backend.type: "hashmap" (the
	// default heap backend) or "rocksdb".
	OptStateBackend = "state.backend.type"
	// OptQueryTimeAfter is RocksDB's TTL compaction filter setting
	// (RocksDBConfigurableOptions, default 1000): entries the filter
	// processes before it reads the TTL clock again.
	OptQueryTimeAfter = "state.backend.rocksdb.compaction.filter.query-time-after-num-entries"
)

var knownOptions = []string{OptStateTTL, OptMiniBatch, OptMiniBatchSize, OptMiniBatchDelay, OptInsertSens, OptCompact, OptAsyncState, OptStateBackend, OptQueryTimeAfter}

// Options are the Flink options of one dedup, resolved.
type Options struct {
	// TTLms is table.exec.state.ttl in milliseconds (0: never expires).
	TTLms int64
	// MiniBatch, MiniBatchSize and AllowLatencyMs are the mini-batch
	// options; the allow-latency is kept for the harness and explain, a
	// replay flushes bundles on their size and on watermarks only.
	MiniBatch      bool
	MiniBatchSize  int64
	AllowLatencyMs int64
	// GenerateInsert is the insert-update-after-sensitive option.
	GenerateInsert bool
	// RocksDB: state.backend.type is rocksdb (else the heap backend).
	RocksDB bool
	// QueryTimeAfterNumEntries is OptQueryTimeAfter (0: not set, Flink's
	// default 1000).
	QueryTimeAfterNumEntries int64
}

// ParseOptions resolves Flink options given as strings (Flink's own
// configuration is a string map) as version ver reads them (durations:
// ParseDurationFor). An unknown key, a value Flink cannot
// parse, or an option dedupsim does not model is one error line naming
// the key.
func ParseOptions(opts map[string]string, ver ef.Version) (Options, error) {
	o := Options{GenerateInsert: true, MiniBatchSize: -1}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(opts[k])
		var err error
		switch k {
		case OptStateTTL:
			o.TTLms, err = ParseDurationFor(v, ver)
		case OptMiniBatchDelay:
			o.AllowLatencyMs, err = ParseDurationFor(v, ver)
		case OptMiniBatch:
			o.MiniBatch, err = parseBool(v)
		case OptInsertSens:
			o.GenerateInsert, err = parseBool(v)
		case OptMiniBatchSize:
			o.MiniBatchSize, err = strconv.ParseInt(v, 10, 64)
			if err != nil {
				err = fmt.Errorf("%q is not a whole number", v)
			}
		case OptStateBackend:
			// StateBackendLoader: the two built-in names, case-insensitive;
			// any other text names a factory class, which dedupsim does not
			// model (nor ForSt).
			switch strings.ToLower(v) {
			case "hashmap":
				o.RocksDB = false
			case "rocksdb":
				o.RocksDB = true
			default:
				err = fmt.Errorf("%q is not modelled: want hashmap (the heap backend, the default) or rocksdb", v)
			}
		case OptQueryTimeAfter:
			// A Long option; the native filter counts entries with it, so
			// dedupsim takes a positive count only.
			o.QueryTimeAfterNumEntries, err = strconv.ParseInt(v, 10, 64)
			if err != nil || o.QueryTimeAfterNumEntries <= 0 {
				err = fmt.Errorf("%q: want a whole number of entries above 0 (default 1000)", v)
			}
		case OptCompact, OptAsyncState:
			var b bool
			if b, err = parseBool(v); err == nil && b {
				err = fmt.Errorf("true is not modelled by dedupsim (only false, the default)")
			}
		default:
			return Options{}, fmt.Errorf("option %q is not one dedupsim reads: want one of %s", k, strings.Join(knownOptions, ", "))
		}
		if err != nil {
			return Options{}, fmt.Errorf("option %s: %w", k, err)
		}
	}
	if o.MiniBatch && o.MiniBatchSize <= 0 {
		return Options{}, fmt.Errorf("option %s should be greater than 0 when %s is true (Flink's StreamExecDeduplicate checks it)", OptMiniBatchSize, OptMiniBatch)
	}
	return o, nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (true or false)", v)
}

// durationUnits maps Flink's duration labels (TimeUtils.TimeUnit) to
// nanoseconds.
var durationUnits = map[string]int64{}

func init() {
	add := func(ns int64, singular []string, plural ...string) {
		for _, l := range singular {
			durationUnits[l] = ns
		}
		for _, l := range plural {
			durationUnits[l] = ns
			durationUnits[l+"s"] = ns
		}
	}
	add(86400e9, []string{"d"}, "day")
	add(3600e9, []string{"h"}, "hour")
	add(60e9, []string{"min", "m"}, "minute")
	add(1e9, []string{"s"}, "sec", "second")
	add(1e6, []string{"ms"}, "milli", "millisecond")
	add(1e3, []string{"µs"}, "micro", "microsecond")
	add(1, []string{"ns"}, "nano", "nanosecond")
}

// reISO is java.time.Duration.parse's grammar (JDK 17, case-insensitive):
// an optional sign, P, optional days, then T with at least one of hours,
// minutes and seconds (each signed), the seconds with an optional
// fraction of up to 9 digits after "." or ",".
var reISO = regexp.MustCompile(`^(?i)([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)

// ParseDuration parses a duration as the newest modelled Flink's
// TimeUtils.parseDuration does (ParseDurationFor).
func ParseDuration(v string) (int64, error) {
	return ParseDurationFor(v, ef.Newest())
}

// ParseDurationFor parses a duration as version ver's
// TimeUtils.parseDuration (flink-core) does and returns whole
// milliseconds (Duration.toMillis truncates): a whole number with an
// optional unit (ms when none): "60 s", "10min", "1 h", "500". From 2.1
// on, text that does not start with a digit falls back to ISO-8601
// (java.time.Duration.parse, negative durations refused): "PT10S",
// "PT0.0105S". Flink 2.0.x reads only "number [unit]".
func ParseDurationFor(v string, ver ef.Version) (int64, error) {
	t := strings.TrimSpace(v)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	iso := ver.ISODurations()
	bad := fmt.Errorf("%q is not a duration: want a whole number and a unit (ms, s, min, h, d, ...), e.g. \"60 s\", or ISO-8601 such as \"PT1M\"", v)
	if !iso {
		bad = fmt.Errorf("%q is not a duration for Flink %s: want a whole number and a unit (ms, s, min, h, d, ...), e.g. \"60 s\" (ISO-8601 such as \"PT1M\" is read from Flink 2.1 on)", v, ver)
	}
	if i == 0 {
		if !iso {
			return 0, bad
		}
		return parseISODuration(t, bad)
	}
	n, ok := new(big.Int).SetString(t[:i], 10)
	if !ok {
		return 0, bad
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	ns := int64(1e6)
	if unit != "" {
		u, known := durationUnits[unit]
		if !known {
			return 0, bad
		}
		ns = u
	}
	n.Mul(n, big.NewInt(ns))
	n.Quo(n, big.NewInt(1e6))
	if !n.IsInt64() {
		return 0, fmt.Errorf("%q is too large a duration", v)
	}
	return n.Int64(), nil
}

// parseISODuration is java.time.Duration.parse followed by Flink's
// refusal of a negative duration and Duration.toMillis: seconds and
// nanoseconds kept apart, every sum checked for overflow (an overflow is
// a parse error in Java), the nanoseconds truncated to milliseconds
// toward zero as toMillis does for a positive duration.
func parseISODuration(t string, bad error) (int64, error) {
	m := reISO.FindStringSubmatch(t)
	if m == nil {
		return 0, bad
	}
	// A "T" with nothing after it, or no part at all, is an error.
	if strings.EqualFold(m[3], "T") || (m[2] == "" && m[4] == "" && m[5] == "" && m[6] == "") {
		return 0, bad
	}
	secs := new(big.Int)
	for j, mul := range []int64{86400, 3600, 60, 1} {
		part := m[[]int{2, 4, 5, 6}[j]]
		if part == "" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimPrefix(part, "+"), 10, 64)
		if err != nil {
			return 0, bad // Java: Math.multiplyExact / parseLong overflow
		}
		p := new(big.Int).Mul(big.NewInt(n), big.NewInt(mul))
		if !p.IsInt64() {
			return 0, bad
		}
		secs.Add(secs, p)
		if !secs.IsInt64() {
			return 0, bad
		}
	}
	var nanos int64
	if m[7] != "" {
		nanos, _ = strconv.ParseInt((m[7] + "000000000")[:9], 10, 64)
		if strings.HasPrefix(m[6], "-") {
			nanos = -nanos
		}
	}
	// total nanoseconds, negated by a leading "-".
	total := new(big.Int).Mul(secs, big.NewInt(1e9))
	total.Add(total, big.NewInt(nanos))
	if m[1] == "-" {
		total.Neg(total)
	}
	if total.Sign() < 0 {
		return 0, fmt.Errorf("%q is a negative duration (Flink refuses it)", t)
	}
	ms := new(big.Int).Quo(total, big.NewInt(1e6))
	if !ms.IsInt64() {
		return 0, fmt.Errorf("%q is too large a duration", t)
	}
	return ms.Int64(), nil
}

// Config builds the engine configuration of q with options o for version v.
func Config(q Query, o Options, generateUpdateBefore bool, v ef.Version) ef.Config {
	return ef.Config{
		RowTime:                  q.Order == RowTime,
		KeepLast:                 q.KeepLast,
		TTL:                      o.TTLms,
		GenerateUpdateBefore:     generateUpdateBefore,
		GenerateInsert:           o.GenerateInsert,
		MiniBatch:                o.MiniBatch,
		RocksDB:                  o.RocksDB,
		QueryTimeAfterNumEntries: o.QueryTimeAfterNumEntries,
		MiniBatchSize:            o.MiniBatchSize,
		Version:                  v,
	}
}

// Version is a Flink version the model knows (engines/flink.Version).
type Version = ef.Version

// ParseVersion parses "2.0" ... "2.3" (engines/flink.ParseVersion).
func ParseVersion(s string) (Version, error) { return ef.ParseVersion(s) }

// NewestVersion is the default version, the newest verified.
func NewestVersion() Version { return ef.Newest() }
