package fit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/generators/randvar"
)

// Written is a fitted scenario: its YAML text and the empirical value
// files it names, by file name (beside the scenario).
type Written struct {
	YAML  []byte
	Files map[string][]byte
}

// Scenario renders r as a scenario file named name, running queries (each
// a PySpark chain), with a comment naming each estimate's method and
// interval. base prefixes the file names of empirical distributions.
func (r *Result) Scenario(name, base, source string, queries []string) Written {
	w := Written{Files: map[string][]byte{}}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Fitted by `simulate fit` from %s: %d rows, about %.0f events;\n", source, r.Rows, r.Events)
	p("# %d events followed (hash sample of ids, fraction %.4g). Methods and\n", r.SampledEvents, r.SampleFraction)
	p("# intervals are in the comments; docs/fit.md says what is fitted and how.\n")
	p("name: %s\n", name)
	p("seed: %d\n", r.Options.Seed)
	p("start: %s   # the first arrival rounded down to a whole trigger\n", r.Start.Format(time.RFC3339Nano))
	p("duration: %s   # to the last original's arrival\n", fmtDur(r.Duration))
	p("trigger: %s\n", fmtDur(r.Options.Trigger))
	p("workload:\n")
	p("  # rate of originals: binary segmentation of the sampled first rows per %s\n", fmtDur(r.Bin))
	p("  # bin on the Poisson log-likelihood (penalty 5 ln n, segments >= the trigger);\n")
	p("  # each rate with its 95%% interval\n")
	p("  profile:\n")
	for _, s := range r.Profile {
		p("    - {for: %s, rate: %s/s}   # from %s; [%s, %s]/s, %s\n", fmtDur(s.Length), fmtNum(s.Rate.Value), fmtDur(s.Start),
			fmtNum(s.Rate.Lo), fmtNum(s.Rate.Hi), s.Rate.Method)
	}
	ids := r.KeyForm
	if ids == "other" {
		ids = "uuid"
		p("  ids: uuid   # the log's ids are neither UUIDs nor integers: generated as UUIDs\n")
	} else {
		p("  ids: %s   # every id of the log has this form\n", ids)
	}
	if r.Customers.Value > 0 {
		p("  customers: %d   # distinct customer values, [%.0f, %.0f], %s\n", int64(math.Round(r.Customers.Value)),
			r.Customers.Lo, r.Customers.Hi, r.Customers.Method)
	}
	p("  # arrival delay of originals (arrival - event time of each event's first row):\n")
	distComment(&b, "  ", r.ArrivalDelay)
	p("  arrivalDelay: %s\n", specYAML(r.ArrivalDelay.Spec, base+"-arrival-delay.csv", w.Files))
	if r.Resent.Value > 0 {
		p("  retries:\n")
		p("    probability: %s   # events with more than one row: [%s, %s], %s\n", fmtNum(r.Resent.Value), fmtNum(r.Resent.Lo), fmtNum(r.Resent.Hi), r.Resent.Method)
		p("    # extra copies of a resent event: mean %s [%s, %s] (%s); family by total-variation\n", fmtNum(r.Copies.Mean.Value), fmtNum(r.Copies.Mean.Lo), fmtNum(r.Copies.Mean.Hi), r.Copies.Mean.Method)
		p("    # distance (at most %.2g + 1/sqrt(n)), else the observed proportions\n", maxTV)
		p("    copies: %s\n", specYAML(r.Copies.Spec, base+"-copies.csv", w.Files))
		p("    # gap between successive copies' arrivals:\n")
		distComment(&b, "    ", r.Gap)
		p("    delay: %s\n", specYAML(r.Gap.Spec, base+"-retry-gap.csv", w.Files))
		v := r.TimestampVotes
		p("    # copies' event time against the first row's: %d kept it, %d moved by the time\n", v[0], v[1])
		p("    # between arrivals (re-stamped), %d otherwise; the majority wins\n", v[2])
		p("    timestamp: %s\n", r.Timestamp)
		if r.Timestamp == "jitter" {
			p("    jitter: %s   # the largest move seen\n", fmtDur(r.Jitter))
		}
	}
	p("  # bad clocks: rows with event time ahead of arrival by more than %s: %d of %d rows\n", fmtDur(r.Options.Tolerance), r.BadClockRows, r.Rows)
	if r.BadClockRows >= RareBadClocks {
		p("  futureTimestamps:\n")
		p("    probability: %s   # [%s, %s], %s\n", fmtNum(r.BadClock.Value), fmtNum(r.BadClock.Lo), fmtNum(r.BadClock.Hi), r.BadClock.Method)
		distComment(&b, "    ", r.Skew)
		p("    skew: %s\n", specYAML(r.Skew.Spec, base+"-skew.csv", w.Files))
	}
	p("queries:\n")
	for i, q := range queries {
		p("  - name: q%d\n    query: '%s'\n", i+1, strings.ReplaceAll(q, "'", "''"))
	}
	if r.BadClockRows > 0 && r.BadClockRows < RareBadClocks {
		p("# fewer than %d bad clocks: each is a bad-clock fault at its own arrival and skew\n", RareBadClocks)
		p("faults:\n")
		for _, f := range r.Faults {
			p("  - {at: %s, kind: bad-clock, skew: %s}\n", fmtDur(max(f.At, time.Microsecond)), fmtDur(f.Skew))
		}
	}
	w.YAML = []byte(b.String())
	return w
}

// distComment writes the comment lines of a fitted time distribution.
func distComment(b *strings.Builder, indent string, f DistFit) {
	if f.N == 0 {
		fmt.Fprintf(b, "%s# no values observed\n", indent)
		return
	}
	var cands []string
	for _, c := range f.Candidates {
		cands = append(cands, fmt.Sprintf("%s %.4f", c.Spec.Kind, c.KS))
	}
	fmt.Fprintf(b, "%s# %d values; one-sample KS statistic by family (1%% critical value %.4f): %s\n", indent, f.N, f.Critical, strings.Join(cands, ", "))
	if f.Spec.Kind == randvar.KindEmpirical {
		fmt.Fprintf(b, "%s# none fits: the observed values (empirical)\n", indent)
		return
	}
	var ps []string
	for _, k := range paramKeys(f.Spec.Kind) {
		iv := f.Params[k]
		ps = append(ps, fmt.Sprintf("%s %s [%s, %s]", k, fmtNum(iv.Value), fmtNum(iv.Lo), fmtNum(iv.Hi)))
	}
	fmt.Fprintf(b, "%s# %s, maximum likelihood; 95%% percentile bootstrap (200 resamples, fixed seed): %s\n", indent, f.Spec.Kind, strings.Join(ps, ", "))
}

// specYAML renders s as a flow mapping; an empirical one is written to
// file (added to files) and named.
func specYAML(s randvar.Spec, file string, files map[string][]byte) string {
	if s.Kind == randvar.KindEmpirical {
		var b strings.Builder
		for _, v := range s.Samples {
			if s.Counts {
				b.WriteString(strconv.FormatInt(int64(v), 10))
			} else {
				b.WriteString(strconv.FormatFloat(v, 'f', 6, 64))
			}
			b.WriteByte('\n')
		}
		files[file] = []byte(b.String())
		return fmt.Sprintf("{dist: empirical, file: %s}", file)
	}
	var ps []string
	for _, k := range paramKeys(s.Kind) {
		if s.Kind == randvar.KindGeometric {
			break
		}
		ps = append(ps, fmt.Sprintf("%s: %s", k, fmtNum(s.Param(k))))
	}
	if s.Kind == randvar.KindGeometric {
		ps = append(ps, "mean: "+fmtNum(s.Mean))
	}
	if s.Counts && s.Kind != randvar.KindGeometric {
		ps = ps[:0]
		for _, k := range paramKeys(s.Kind) {
			ps = append(ps, fmt.Sprintf("%s: %d", k, int64(s.Param(k))))
		}
	}
	return fmt.Sprintf("{dist: %s, %s}", s.Kind, strings.Join(ps, ", "))
}

// fmtNum renders a number with 6 significant digits.
func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// fmtDur renders a duration in Go's form, which scenario files take.
func fmtDur(d time.Duration) string { return d.String() }
