package scenario

import "fmt"

// The spark: block (docs/scenario.md, "The spark block"): its type,
// defaults and checks are sim/spark/sparkmodel's Config; the loader decodes it
// like any block, starting from Config.SetDefaults, then writes the
// provider's cost defaults into a cost block's missing terms.

// fillSparkDefaults writes the cost terms a cost block leaves out.
func (s *Scenario) fillSparkDefaults() {
	if s.Spark != nil {
		s.Spark.FillDefaults()
	}
}

// checkSpark reports every invalid value of the spark: block, under
// "spark.".
func (s *Scenario) checkSpark(p *problems) {
	if s.Spark == nil {
		return
	}
	for _, pr := range s.Spark.Check() {
		p.add("spark."+pr.Path, "%s", pr.Msg)
	}
	// A downtime starts after the first trigger (the first batch is the
	// query's start) and ends within the traffic window.
	for i, d := range s.Spark.Downtime {
		path := fmt.Sprintf("spark.downtime[%d]", i)
		if d.At > 0 && d.At < s.Trigger {
			p.add(path+".at", "must be at least the trigger, %s (the query's first batch runs there), got %s", s.Trigger, d.At)
		}
		if d.At > 0 && d.For > 0 && d.At+d.For > s.Duration {
			p.add(path+".for", "must end within the duration, %s: at %s plus %s ends at %s", s.Duration, d.At, d.For, d.At+d.For)
		}
	}
}
