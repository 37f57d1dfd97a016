// Package fitlog fits a scenario to an event log (generators/fit) and
// fills the fit report's file (metrics/fitfile): the command's work, so
// that cmd/simulate stays a thin face.
package fitlog

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/dedupsim/dedupsim/generators/fit"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"github.com/dedupsim/dedupsim/metrics/fitfile"
)

// maxCDFPoints bounds the points of each drawn distribution function.
const maxCDFPoints = 400

// Report fills the fit report's file from r.
func Report(r *fit.Result, log, scenario, command string) *fitfile.Report {
	rep := &fitfile.Report{
		Log: log, Scenario: scenario, Command: command,
		Rows: r.Rows, Events: r.Events, SampledEvents: r.SampledEvents, SampleFraction: r.SampleFraction,
		Tolerance: r.Options.Tolerance.Seconds(),
	}
	est := func(name, key string, iv fit.Interval, unit string) {
		rep.Estimates = append(rep.Estimates, fitfile.Estimate{
			Name: name, Key: key, Value: iv.Value, Lo: iv.Lo, Hi: iv.Hi, Unit: unit,
			Text: fmt.Sprintf("%s [%s, %s]", num(iv.Value), num(iv.Lo), num(iv.Hi)), Method: iv.Method,
		})
	}
	for i, s := range r.Profile {
		est(fmt.Sprintf("rate, segment %d (from %s, for %s)", i+1, s.Start, s.Length), fmt.Sprintf("workload.profile[%d].rate", i), s.Rate, "events/s")
	}
	if r.Customers.Value > 0 {
		est("customers", "workload.customers", r.Customers, "")
	}
	distEst := func(name, key string, d fit.DistFit) {
		for _, k := range slices.Sorted(maps.Keys(d.Params)) {
			est(fmt.Sprintf("%s: %s %s", name, d.Spec.Kind, k), key+"."+k, d.Params[k], unitOf(k))
		}
		if d.Spec.Kind == randvar.KindEmpirical {
			rep.Estimates = append(rep.Estimates, fitfile.Estimate{Name: name + ": empirical", Key: key, Text: fmt.Sprintf("%d observed values", len(d.Spec.Samples)),
				Method: "no family within the 1% Kolmogorov-Smirnov critical value: the observed values"})
		}
	}
	distEst("arrival delay", "workload.arrivalDelay", r.ArrivalDelay)
	est("share of events resent", "workload.retries.probability", r.Resent, "")
	est("extra copies per resent event (mean)", "workload.retries.copies", r.Copies.Mean, "")
	if r.Resent.Value > 0 {
		distEst("retry gap", "workload.retries.delay", r.Gap)
		v := r.TimestampVotes
		rep.Estimates = append(rep.Estimates, fitfile.Estimate{Name: "copies' event time", Key: "workload.retries.timestamp", Text: r.Timestamp,
			Method: fmt.Sprintf("majority of copies: %d kept the first row's event time, %d re-stamped by the time between arrivals, %d otherwise", v[0], v[1], v[2])})
	}
	est("share of rows with a bad clock", "workload.futureTimestamps.probability", r.BadClock, "")
	if r.BadClockRows >= fit.RareBadClocks {
		distEst("bad-clock skew", "workload.futureTimestamps.skew", r.Skew)
	} else if r.BadClockRows > 0 {
		rep.Estimates = append(rep.Estimates, fitfile.Estimate{Name: "bad clocks", Key: "faults", Text: fmt.Sprintf("%d bad-clock faults", len(r.Faults)),
			Method: fmt.Sprintf("fewer than %d bad clocks: each a fault at its own arrival and skew", fit.RareBadClocks)})
	}
	rep.Estimates = append(rep.Estimates, fitfile.Estimate{Name: "key form", Key: "workload.ids", Text: r.KeyForm, Method: "every id's text"})

	bin := r.Bin.Seconds()
	rep.Rate.BinSeconds = bin
	for i := range r.PerBinRows {
		rep.Rate.Rows = append(rep.Rate.Rows, float64(r.PerBinRows[i])/bin)
		rep.Rate.Originals = append(rep.Rate.Originals, r.PerBinOriginals[i]/bin)
	}
	for _, s := range r.Profile {
		rep.Rate.Profile = append(rep.Rate.Profile, fitfile.Segment{Start: s.Start.Seconds(), Length: s.Length.Seconds(), Rate: s.Rate.Value, Lo: s.Rate.Lo, Hi: s.Rate.Hi})
	}
	rep.Delay = dist(r.ArrivalDelay)
	rep.Gap = dist(r.Gap)
	for _, p := range r.Lateness {
		rep.Lateness = append(rep.Lateness, fitfile.XY{X: p.X, Y: p.Y})
	}
	rep.Copies = slices.Clone(r.Copies.Histogram)
	if len(rep.Copies) > 0 {
		rep.Copies[0] = r.SampledEvents
		for _, c := range r.Copies.Histogram[1:] {
			rep.Copies[0] -= c
		}
	}
	if r.SampleFraction < 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("Events were followed one by one for a hash sample of ids (%.3g of them): the retry, delay and rate estimates come from that sample.", r.SampleFraction))
	}
	if r.NegativeDelays > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d events' first rows had an event time ahead of their arrival by less than the tolerance: fitted as a delay of 0.", r.NegativeDelays))
	}
	if r.KeyForm == "other" {
		rep.Notes = append(rep.Notes, "The log's ids are neither UUIDs nor integers: the scenario generates UUIDs, whose state bytes may differ from the log's keys.")
	}
	return rep
}

// dist turns a fitted distribution into the report's observed and fitted
// distribution functions, at up to maxCDFPoints quantiles of the values.
func dist(d fit.DistFit) fitfile.Dist {
	out := fitfile.Dist{Family: string(d.Spec.Kind), KS: d.KS, Critical: d.Critical, N: d.N}
	if d.Spec.Kind != randvar.KindEmpirical {
		ps := []string{}
		for _, k := range slices.Sorted(maps.Keys(d.Params)) {
			ps = append(ps, fmt.Sprintf("%s %s", k, num(d.Params[k].Value)))
		}
		out.Spec = fmt.Sprintf("%s (%s)", d.Spec.Kind, strings.Join(ps, ", "))
	} else {
		out.Spec = "empirical"
	}
	n := len(d.Values)
	if n == 0 {
		return out
	}
	fd, err := randvar.New(d.Spec)
	if err != nil {
		return out
	}
	step := max(1, n/maxCDFPoints)
	for i := 0; i < n; i += step {
		x := d.Values[i]
		out.Observed = append(out.Observed, fitfile.XY{X: x, Y: float64(i+1) / float64(n)})
		out.Fitted = append(out.Fitted, fitfile.XY{X: x, Y: fd.CDF(x)})
	}
	x := d.Values[n-1]
	out.Observed = append(out.Observed, fitfile.XY{X: x, Y: 1})
	out.Fitted = append(out.Fitted, fitfile.XY{X: x, Y: fd.CDF(x)})
	return out
}

func unitOf(k string) string {
	switch k {
	case "mu", "sigma", "alpha":
		return ""
	}
	return "s"
}

func num(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%.4g", v)
}
