package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// JSONResult is the --json form of a plan.
type JSONResult struct {
	Query string `json:"query"`
	// RecommendedDelaySeconds is null when no delay meets the targets.
	RecommendedDelaySeconds *float64 `json:"recommendedDelaySeconds"`
	// Predicted is the closed-form model's peak state; null values when
	// state is unbounded or the query is outside the model.
	Predicted struct {
		PeakStateRows  *int64 `json:"peakStateRows"`
		PeakStateBytes *int64 `json:"peakStateBytes"`
	} `json:"predicted"`
	// Simulated is the simulation at the reported delay.
	Simulated struct {
		MissedRate     float64 `json:"missedRate"`
		FalseDropRate  float64 `json:"falseDropRate"`
		PeakStateRows  int64   `json:"peakStateRows"`
		PeakStateBytes int64   `json:"peakStateBytes"`
	} `json:"simulated"`
	Reason string `json:"reason"`
	// Seeds are the seeds simulated, each with the smallest delay meeting
	// the targets on it (null when none does).
	Seeds []JSONSeed `json:"seeds"`
	// Spread is over the seeds, at the recommended delay (without one, at
	// each seed's reported point).
	Spread struct {
		MissedRate    MinMedMax `json:"missedRate"`
		FalseDropRate MinMedMax `json:"falseDropRate"`
	} `json:"spread"`
	// BindingTarget is the target that decides the delay: "missedRate",
	// "falseDropRate" or "memoryBudget"; null when none does.
	BindingTarget *string `json:"bindingTarget"`
	// Engine and Parameter name, for a query other than Spark's, its
	// engine and the horizon searched ("state TTL", "window",
	// "duration"): every delay of the plan is that horizon. Absent for
	// a Spark query.
	Engine    string `json:"engine,omitempty"`
	Parameter string `json:"parameter,omitempty"`
	// Spark is the plan on a Spark cluster (see Spark); absent without
	// one.
	Spark *JSONSpark `json:"spark,omitempty"`
	// Curves are each seed's exact tradeoff curve, when the query
	// reduces to thresholds on its delay (see Result.Curves); absent
	// otherwise.
	Curves []SeedCurve `json:"curves,omitempty"`
}

// JSONSeed is one seed of a plan's JSON form.
type JSONSeed struct {
	Seed         uint64   `json:"seed"`
	DelaySeconds *float64 `json:"delaySeconds"`
}

// JSON returns the plan as `simulate plan --json` prints it. State values
// are at the production rate when one was given.
func (r *Result) JSON() JSONResult {
	var j JSONResult
	j.Query = r.Query
	if r.Recommended != nil {
		s := r.Recommended.Seconds()
		j.RecommendedDelaySeconds = &s
	}
	if v, ok := r.PredictedRows(); ok {
		n := int64(math.Round(v))
		j.Predicted.PeakStateRows = &n
	}
	if v, ok := r.PredictedBytes(); ok {
		n := int64(math.Round(v))
		j.Predicted.PeakStateBytes = &n
	}
	j.Simulated.MissedRate = r.Point.Summary.MissedDuplicateRate
	j.Simulated.FalseDropRate = r.Point.Summary.FalseDropRate
	j.Simulated.PeakStateRows = int64(math.Round(r.SimulatedRows()))
	j.Simulated.PeakStateBytes = int64(math.Round(r.SimulatedBytes()))
	j.Reason = r.Reason
	j.Seeds = []JSONSeed{}
	for _, sr := range r.Seeds {
		js := JSONSeed{Seed: sr.Seed}
		if sr.Delay != nil {
			v := sr.Delay.Seconds()
			js.DelaySeconds = &v
		}
		j.Seeds = append(j.Seeds, js)
	}
	j.Spread.MissedRate, j.Spread.FalseDropRate = r.Spread.MissedRate, r.Spread.FalseDropRate
	j.Curves = r.Curves
	if r.Binding != "" {
		b := r.Binding
		j.BindingTarget = &b
	}
	if r.Spark != nil {
		j.Spark = r.Spark.json()
	}
	j.Engine, j.Parameter = r.Engine, r.Parameter
	return j
}

// WriteJSON writes the plan's JSON form, indented, with a final newline.
func (r *Result) WriteJSON(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.JSON()); err != nil {
		return fmt.Errorf("plan JSON: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteText writes the plan as a short block for a terminal: the
// recommendation, the model beside the simulation, why, and the notes.
func (r *Result) WriteText(w io.Writer, file string, seed uint64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "plan for %s in %s (seed %d)\n", r.Query, file, seed)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  query\t%s\n", r.QueryText)
	fmt.Fprintf(tw, "  targets\tmissed duplicates <= %s, false drops <= %s", percent(r.Targets.MaxMissedRate), percent(r.Targets.MaxFalseDropRate))
	if r.Targets.MemoryBudget > 0 {
		fmt.Fprintf(tw, ", peak state <= %s", formatBytes(float64(r.Targets.MemoryBudget)))
	}
	fmt.Fprintln(tw)
	at := "as written"
	param := r.ParamName()
	switch {
	case r.Recommended != nil:
		fmt.Fprintf(tw, "  %s\t%s recommended (%s, resolution %s)\n", param, fmtDelay(*r.Recommended), r.simulatedText(), fmtDelay(max(r.Resolution, time.Second)))
		at = "at " + fmtDelay(*r.Recommended)
	case r.Shape == NeverEvicts && !r.BudgetExceeded && r.Point.HasDelay:
		fmt.Fprintf(tw, "  delay\tnone: the query never evicts, its state grows without bound at any delay (%s meets the rates)\n", fmtDelay(r.Point.Delay))
		at = "at " + fmtDelay(r.Point.Delay)
	case r.BudgetExceeded && r.Point.HasDelay:
		fmt.Fprintf(tw, "  %s\tnone: %s meets the rates but not the budget\n", param, fmtDelay(r.Point.Delay))
		at = "at " + fmtDelay(r.Point.Delay)
	case r.Point.HasDelay && r.Engine != "":
		fmt.Fprintf(tw, "  %s\tnone meets the targets (%s, %s to %s)\n", param, r.simulatedText(), fmtDelay(r.Points[0].Delay), fmtDelay(r.Points[len(r.Points)-1].Delay))
		at = "at " + fmtDelay(r.Point.Delay)
	case r.Point.HasDelay:
		fmt.Fprintf(tw, "  delay\tnone meets the targets (%s, %s to %s)\n", r.simulatedText(), fmtDelay(r.Points[0].Delay), fmtDelay(r.Points[len(r.Points)-1].Delay))
		at = "at " + fmtDelay(r.Point.Delay) + " (as written)"
	default:
		fmt.Fprintf(tw, "  delay\tnone: no watermark reaches the dedup\n")
	}
	if r.ModelOK {
		fmt.Fprintf(tw, "  key horizon\t%s\n", horizonText(r))
	}
	if r.Engine != "" {
		fmt.Fprintf(tw, "  engine\t%s: no closed-form model for this engine; every value is simulated\n", r.Engine)
	}
	multi := len(r.Seeds) > 1
	if multi {
		first, last := r.Seeds[0].Seed, r.Seeds[len(r.Seeds)-1].Seed
		fmt.Fprintf(tw, "  seeds\t%d: %d to %d (the scenario's seed and the next ones); the %s must meet the targets on %s\n",
			len(r.Seeds), first, last, param, shareWords(r.Quantile))
		var per []string
		for _, sr := range r.Seeds {
			v := "none"
			if sr.Delay != nil {
				v = fmtDelay(*sr.Delay)
			}
			per = append(per, fmt.Sprintf("%d: %s", sr.Seed, v))
		}
		fmt.Fprintf(tw, "  per seed\t%s\n", strings.Join(per, ", "))
	}
	if s := r.bindingText(); s != "" {
		fmt.Fprintf(tw, "  binding\t%s\n", s)
	}
	tw.Flush()
	fmt.Fprintln(&b)

	tw = tabwriter.NewWriter(&b, 0, 0, 3, ' ', tabwriter.AlignRight)
	simHead := "simulation"
	if multi {
		simHead = fmt.Sprintf("seed %d\tseeds min / median / max", r.Seeds[0].Seed)
	}
	fmt.Fprintf(tw, "  %s\tmodel (estimate)\t%s\t\n", at, simHead)
	q := r.Point.Summary
	mod := func(f func() string) string {
		if !r.ModelOK {
			return "-"
		}
		return f()
	}
	pct := func(m MinMedMax) string {
		return "\t" + interval.Percent(m.Min) + " / " + interval.Percent(m.Median) + " / " + interval.Percent(m.Max)
	}
	spread := func(s string) string {
		if !multi {
			return ""
		}
		return s
	}
	fmt.Fprintf(tw, "  missed duplicates\t%s\t%s%s\t\n", mod(func() string { return interval.Percent(r.Model.MissedRate) }), interval.PercentBeside(q.MissedDuplicateRate, r.Targets.MaxMissedRate), spread(pct(r.Spread.MissedRate)))
	fmt.Fprintf(tw, "  false drops\t%s\t%s%s\t\n", mod(func() string { return interval.Percent(r.Model.FalseDropRate) }), interval.PercentBeside(q.FalseDropRate, r.Targets.MaxFalseDropRate), spread(pct(r.Spread.FalseDropRate)))
	rows, bytes := "-", "-"
	if v, ok := r.PredictedRows(); ok {
		rows = fmtCount(v)
		bv, _ := r.PredictedBytes()
		bytes = formatBytes(bv)
	} else if r.ModelOK && r.Model.Unbounded {
		rows, bytes = "unbounded", "unbounded"
	}
	sr := r.Spread.PeakStateRows
	fmt.Fprintf(tw, "  peak state rows\t%s\t%s%s\t\n", rows, fmtCount(r.SimulatedRows()),
		spread("\t"+fmtCount(sr.Min)+" / "+fmtCount(sr.Median)+" / "+fmtCount(sr.Max)))
	sb := r.Spread.PeakStateBytes
	fmt.Fprintf(tw, "  peak state bytes\t%s\t%s%s\t\n", bytes, formatBytes(r.SimulatedBytes()),
		spread("\t"+formatBytes(sb.Min)+" / "+formatBytes(sb.Median)+" / "+formatBytes(sb.Max)))
	tw.Flush()
	fmt.Fprintln(&b)
	if m := r.marginsText(); m != "" {
		fmt.Fprintf(&b, "  margins: %s\n", m)
	}
	fmt.Fprintf(&b, "  why: %s\n", r.Reason)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	if r.Spark != nil {
		r.Spark.writeText(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// simulatedText counts the simulations behind the plan: "13 delays
// simulated", or over several seeds "98 simulations over 5 seeds".
func (r *Result) simulatedText() string {
	if len(r.Curves) > 0 {
		n := 0
		for _, sr := range r.Seeds {
			n += sr.Simulated
		}
		runs := "direct runs"
		if n == 1 {
			runs = "direct run"
		}
		if len(r.Seeds) <= 1 {
			return fmt.Sprintf("the exact one-pass curve, %d %s", n, runs)
		}
		return fmt.Sprintf("the exact one-pass curve of %d seeds, %d %s", len(r.Seeds), n, runs)
	}
	if len(r.Seeds) <= 1 {
		if r.Engine != "" {
			return fmt.Sprintf("%d values simulated", len(r.Points))
		}
		return fmt.Sprintf("%d delays simulated", len(r.Points))
	}
	n := 0
	for _, sr := range r.Seeds {
		n += sr.Simulated
	}
	return fmt.Sprintf("%s simulations over %d seeds", fmtCount(float64(n)), len(r.Seeds))
}

// BindingText is bindingText, for the review document.
func (r *Result) BindingText() string { return r.bindingText() }

// MarginsText is marginsText, for the review document.
func (r *Result) MarginsText() string { return r.marginsText() }

// bindingText names the target that decides the plan and what the other
// rate target alone needs: "the false-drop target 0.01% decides: the
// missed-duplicate target alone needs 4m10s".
func (r *Result) bindingText() string {
	alone := func(d *time.Duration) string {
		if d == nil {
			return "no delay tried"
		}
		if *d <= time.Second {
			return "1s or less"
		}
		return fmtDelay(*d)
	}
	budget := ""
	if r.Targets.MemoryBudget > 0 {
		budget = fmt.Sprintf("; the memory budget %s is met", formatBytes(float64(r.Targets.MemoryBudget)))
	}
	switch r.Binding {
	case BindMissedRate:
		return fmt.Sprintf("the missed-duplicate target %s decides: the false-drop target alone needs %s%s",
			percent(r.Targets.MaxMissedRate), alone(r.FalseDropAlone), budget)
	case BindFalseDropRate:
		return fmt.Sprintf("the false-drop target %s decides: the missed-duplicate target alone needs %s%s",
			percent(r.Targets.MaxFalseDropRate), alone(r.MissedAlone), budget)
	case BindMemoryBudget:
		return fmt.Sprintf("the memory budget %s decides: no %s meeting the rate targets fits it", formatBytes(float64(r.Targets.MemoryBudget)), r.ParamName())
	}
	return ""
}

// marginsText says how far the recommendation is from each target, on
// the worst seed: "missed duplicates 0.085% against 0.1% (15% of the
// target to spare); ...". "" without a recommendation.
func (r *Result) marginsText() string {
	if r.Recommended == nil {
		return ""
	}
	worst := "worst seed"
	if len(r.Seeds) <= 1 {
		worst = "simulated"
	}
	one := func(what string, v, target float64, show func(float64) string) string {
		if show == nil { // a rate: enough digits to tell it from its target
			show = func(x float64) string { return interval.PercentBeside(x, target) }
		}
		switch {
		case target <= 0 && v <= 0:
			return fmt.Sprintf("%s %s against %s (met exactly)", what, show(v), show(target))
		case target <= 0:
			return fmt.Sprintf("%s %s against %s (over)", what, show(v), show(target))
		case v > target:
			return fmt.Sprintf("%s %s against %s (over by %s of the target)", what, show(v), show(target), interval.Percent((v-target)/target))
		}
		return fmt.Sprintf("%s %s against %s (%s of the target to spare)", what, show(v), show(target), interval.Percent((target-v)/target))
	}
	parts := []string{
		one("missed duplicates", r.Spread.MissedRate.Max, r.Targets.MaxMissedRate, nil),
		one("false drops", r.Spread.FalseDropRate.Max, r.Targets.MaxFalseDropRate, nil),
	}
	if r.Targets.MemoryBudget > 0 {
		parts = append(parts, one("peak state", r.Spread.PeakStateBytes.Max, float64(r.Targets.MemoryBudget), formatBytes))
	}
	return "at " + fmtDelay(*r.Recommended) + ", " + worst + ": " + strings.Join(parts, "; ")
}

// percent renders a target share the way it is usually written: 0.001 as
// "0.1%".
func percent(v float64) string {
	return strconv.FormatFloat(100*v, 'g', 4, 64) + "%"
}

// horizonText describes how long a key is kept, in event time.
func horizonText(r *Result) string {
	if r.Model.Unbounded {
		return "unbounded: keys are never evicted"
	}
	h := fmtDelay(secs(r.Model.HorizonSeconds))
	switch r.Shape {
	case WithinWatermark:
		return "about 2 x delay + trigger = " + h + " of event time per key"
	case PairKeyed:
		return "about delay + trigger = " + h + " of event time per key"
	}
	return h
}

// fmtCount renders a count with thousands separators (interval.Count), and
// "unbounded" for the model's infinite state.
func fmtCount(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "unbounded"
	}
	return interval.Count(int64(math.Round(v)))
}

// formatBytes renders a byte count like interval.Bytes, and
// "unbounded" for the model's infinite state.
func formatBytes(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "unbounded"
	}
	return interval.Bytes(int64(v))
}

// ParseSize parses a memory size: a number of bytes with an optional
// unit, binary (KiB, MiB, GiB, TiB; also Ki, Mi, Gi, Ti) or decimal (KB,
// MB, GB, TB), case-insensitive: "4GiB", "512MiB", "1.5GB", "1000000"
// (interval.ParseBytes).
func ParseSize(s string) (int64, error) { return interval.ParseBytes(s) }

// ParseShare parses a rate target: a fraction in [0, 1] ("0.001") or a
// percentage ("0.1%").
func ParseShare(s string) (float64, error) {
	t := strings.TrimSpace(s)
	div := 1.0
	if strings.HasSuffix(t, "%") {
		t, div = strings.TrimSpace(strings.TrimSuffix(t, "%")), 100
	}
	v, err := strconv.ParseFloat(t, 64)
	v /= div
	if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
		return 0, fmt.Errorf("%q: want a rate between 0 and 1, such as 0.001 or 0.1%%", s)
	}
	return v, nil
}
