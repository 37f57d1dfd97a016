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
)

var knownOptions = []string{OptStateTTL, OptMiniBatch, OptMiniBatchSize, OptMiniBatchDelay, OptInsertSens, OptCompact, OptAsyncState}

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
}

// ParseOptions resolves Flink options given as strings (Flink's own
// configuration is a string map). An unknown key, a value Flink cannot
// parse, or an option dedupsim does not model is one error line naming
// the key.
func ParseOptions(opts map[string]string) (Options, error) {
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
			o.TTLms, err = ParseDuration(v)
		case OptMiniBatchDelay:
			o.AllowLatencyMs, err = ParseDuration(v)
		case OptMiniBatch:
			o.MiniBatch, err = parseBool(v)
		case OptInsertSens:
			o.GenerateInsert, err = parseBool(v)
		case OptMiniBatchSize:
			o.MiniBatchSize, err = strconv.ParseInt(v, 10, 64)
			if err != nil {
				err = fmt.Errorf("%q is not a whole number", v)
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

var reISO = regexp.MustCompile(`^(?i)PT?(?:(\d+)D)?(?:T?(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d{1,9}))?S)?)?$`)

// ParseDuration parses a duration as Flink's TimeUtils.parseDuration does
// and returns whole milliseconds (Duration.toMillis truncates): a whole
// number with an optional unit (ms when none): "60 s", "10min", "1 h",
// "500"; or an ISO-8601 duration such as "PT10S".
func ParseDuration(v string) (int64, error) {
	t := strings.TrimSpace(v)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	bad := fmt.Errorf("%q is not a duration: want a whole number and a unit (ms, s, min, h, d, ...), e.g. \"60 s\", or ISO-8601 such as \"PT1M\"", v)
	if i == 0 {
		m := reISO.FindStringSubmatch(t)
		if m == nil || t == "P" || t == "PT" {
			return 0, bad
		}
		var ms int64
		for j, mul := range []int64{86400e3, 3600e3, 60e3, 1e3} {
			if m[j+1] != "" {
				n, err := strconv.ParseInt(m[j+1], 10, 64)
				if err != nil {
					return 0, bad
				}
				ms += n * mul
			}
		}
		if m[5] != "" {
			frac := (m[5] + "000")[:3]
			n, _ := strconv.ParseInt(frac, 10, 64)
			ms += n
		}
		return ms, nil
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

// Config builds the engine configuration of q with options o for version v.
func Config(q Query, o Options, generateUpdateBefore bool, v ef.Version) ef.Config {
	return ef.Config{
		RowTime:              q.Order == RowTime,
		KeepLast:             q.KeepLast,
		TTL:                  o.TTLms,
		GenerateUpdateBefore: generateUpdateBefore,
		GenerateInsert:       o.GenerateInsert,
		MiniBatch:            o.MiniBatch,
		MiniBatchSize:        o.MiniBatchSize,
		Version:              v,
	}
}

// Version is a Flink version the model knows (engines/flink.Version).
type Version = ef.Version

// ParseVersion parses "2.0" ... "2.3" (engines/flink.ParseVersion).
func ParseVersion(s string) (Version, error) { return ef.ParseVersion(s) }

// NewestVersion is the default version, the newest verified.
func NewestVersion() Version { return ef.Newest() }
