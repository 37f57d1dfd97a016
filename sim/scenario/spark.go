package scenario

// The spark: block (docs/scenario.md, "The spark block"): its type,
// defaults and checks are sim/sparkmodel's Config; the loader decodes it
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
}
