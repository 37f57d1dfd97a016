// Package flink is dedupsim's Flink front end: it reads Flink SQL's
// deduplication pattern and Flink's options into a plan for engines/flink,
// explains which runtime function Flink's planner picks (or why the query
// is a Top-N rank, not a dedup), and replays Flink traces (the format of
// docs/flink.md) through the model.
package flink

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Time attribute kinds of the ORDER BY column.
const (
	ProcTime = "proctime"
	RowTime  = "rowtime"
)

// Query is the dedup a ROW_NUMBER() = 1 query asks for.
type Query struct {
	// Keys are the PARTITION BY columns (none: one global key).
	Keys []string
	// OrderBy is the ORDER BY column; Order is ProcTime or RowTime.
	OrderBy string
	Order   string
	// KeepLast: ORDER BY ... DESC.
	KeepLast bool
}

// TimeAttributes names the query's time attributes: the PROCTIME() column
// and the event-time column with a WATERMARK declaration.
type TimeAttributes struct {
	ProcTime string
	RowTime  string
}

// DefaultTimeAttributes are the columns of dedupsim's generated events:
// proc_time AS PROCTIME() and event_time with its WATERMARK.
var DefaultTimeAttributes = TimeAttributes{ProcTime: "proc_time", RowTime: "event_time"}

// TopNError says the query is valid Flink SQL that Flink plans as a Top-N
// rank (StreamExecRank), not as a deduplication.
type TopNError struct{ Reason string }

func (e *TopNError) Error() string { return "a Top-N rank, not a dedup: " + e.Reason }

var (
	reSpace = regexp.MustCompile(`\s+`)
	ident   = "`?([A-Za-z_][A-Za-z0-9_]*)`?"
	// The over clause: FUNC() OVER ([PARTITION BY cols] ORDER BY col [ASC|DESC][, ...]).
	reOver = regexp.MustCompile(`(?i)\b(ROW_NUMBER|RANK|DENSE_RANK)\s*\(\s*\)\s*OVER\s*\(\s*(?:PARTITION\s+BY\s+([^)]*?)\s+)?ORDER\s+BY\s+([^)]*?)\s*\)`)
	// The subquery form: ... OVER (...) [AS] rn FROM ... ) [[AS] t] WHERE rn op N.
	reAlias = regexp.MustCompile(`(?i)^\s*(?:AS\s+)?` + ident)
	reWhere = regexp.MustCompile(`(?i)\)\s*(?:(?:AS\s+)?` + ident + `\s+)?WHERE\s+` + ident + `\s*(=|<=|<)\s*(\d+)\s*;?\s*$`)
	// The QUALIFY form: ... QUALIFY FUNC() OVER (...) op N.
	reQualify = regexp.MustCompile(`(?i)\bQUALIFY\s+(?:ROW_NUMBER|RANK|DENSE_RANK)\s*\(\s*\)\s*OVER\s*\([^)]*\)\s*(=|<=|<)\s*(\d+)\s*;?\s*$`)
	reIdent   = regexp.MustCompile(`^` + ident + `$`)
	reOrder   = regexp.MustCompile(`(?i)^` + ident + `(?:\s+(ASC|DESC))?$`)
)

// ParseSQL reads Flink SQL's deduplication pattern
//
//	SELECT ... FROM (SELECT *, ROW_NUMBER() OVER ([PARTITION BY k1[, k2]]
//	  ORDER BY t [ASC|DESC]) AS rn FROM events) WHERE rn = 1
//
// or its QUALIFY form, against the time attributes ta. As Flink's planner
// (RankUtil.canConvertToDeduplicate), it is a dedup only for ROW_NUMBER
// with a rank range of exactly 1 (rn = 1, rn <= 1, rn < 2) ordered by one
// time attribute; other ranks, ranges or orders return a *TopNError. A
// query that is not the pattern at all, or an ORDER BY column that is not
// a time attribute, returns one line saying so.
func ParseSQL(sql string, ta TimeAttributes) (Query, error) {
	s := strings.TrimSpace(reSpace.ReplaceAllString(sql, " "))
	if !strings.HasPrefix(strings.ToUpper(s), "SELECT ") {
		return Query{}, fmt.Errorf("not the Flink dedup pattern: the query must start with SELECT")
	}
	m := reOver.FindStringSubmatchIndex(s)
	if m == nil {
		return Query{}, fmt.Errorf("not the Flink dedup pattern: no ROW_NUMBER() OVER ([PARTITION BY keys] ORDER BY time_attribute [ASC|DESC])")
	}
	fn := strings.ToUpper(s[m[2]:m[3]])
	var keys []string
	if m[4] >= 0 {
		for _, k := range strings.Split(s[m[4]:m[5]], ",") {
			km := reIdent.FindStringSubmatch(strings.TrimSpace(k))
			if km == nil {
				return Query{}, fmt.Errorf("not the Flink dedup pattern: PARTITION BY %q: want column names", strings.TrimSpace(k))
			}
			keys = append(keys, km[1])
		}
	}
	if fn != "ROW_NUMBER" {
		// StreamExecRank throws this for RANK and DENSE_RANK on a stream.
		//lint:ignore ST1005 the message starts with Flink, a proper name
		return Query{}, fmt.Errorf("Flink rejects the query: %s() on streaming table is not supported currently; a dedup is ROW_NUMBER() = 1", fn)
	}
	orders := strings.Split(s[m[6]:m[7]], ",")
	var cmp string
	var n int
	if q := reQualify.FindStringSubmatch(s); q != nil && strings.Contains(strings.ToUpper(s[:m[0]]), "QUALIFY") {
		cmp, n = q[1], atoi(q[2])
	} else {
		rest := s[m[1]:]
		am := reAlias.FindStringSubmatch(rest)
		if am == nil {
			return Query{}, fmt.Errorf("not the Flink dedup pattern: %s() OVER (...) needs an alias (AS rn) that the outer query filters on", fn)
		}
		alias := am[1]
		w := reWhere.FindStringSubmatch(s)
		if w == nil {
			return Query{}, fmt.Errorf("not the Flink dedup pattern: the outer query must end with WHERE %s = 1 (a filter on the row number)", alias)
		}
		if !strings.EqualFold(w[2], alias) {
			return Query{}, fmt.Errorf("not the Flink dedup pattern: WHERE filters %s, not the row number %s", w[2], alias)
		}
		cmp, n = w[3], atoi(w[4])
	}
	lo, hi := 1, n // the rank range the filter gives
	switch cmp {
	case "=":
		lo = n
	case "<":
		hi = n - 1
	}
	if hi < 1 || lo > hi {
		return Query{}, fmt.Errorf("not the Flink dedup pattern: the filter %s %d keeps no row", cmp, n)
	}
	if len(orders) != 1 {
		return Query{}, &TopNError{fmt.Sprintf("ORDER BY has %d columns; a dedup orders by one time attribute (RankUtil.sortOnTimeAttributeOnly)", len(orders))}
	}
	om := reOrder.FindStringSubmatch(strings.TrimSpace(orders[0]))
	if om == nil {
		return Query{}, fmt.Errorf("not the Flink dedup pattern: ORDER BY %q: want one column, ASC or DESC", strings.TrimSpace(orders[0]))
	}
	q := Query{Keys: keys, OrderBy: om[1], KeepLast: strings.EqualFold(om[2], "DESC")}
	switch {
	case strings.EqualFold(q.OrderBy, ta.ProcTime):
		q.Order = ProcTime
	case strings.EqualFold(q.OrderBy, ta.RowTime):
		q.Order = RowTime
	default:
		return Query{}, fmt.Errorf("ORDER BY %s: %s is not a time attribute (the proctime attribute is %s AS PROCTIME(), the rowtime attribute %s with its WATERMARK); Flink would plan a Top-N rank, not a dedup", q.OrderBy, q.OrderBy, ta.ProcTime, ta.RowTime)
	}
	if lo != 1 || hi != 1 {
		return Query{}, &TopNError{fmt.Sprintf("the filter keeps row numbers %d to %d; a dedup keeps exactly row number 1", lo, hi)}
	}
	return q, nil
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 1 << 30
	}
	return n
}
