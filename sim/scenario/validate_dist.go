package scenario

import (
	"math"
	"slices"
)

// checkDist checks the values of a distribution at path; counts selects a
// count distribution. The zero Dist is not checked (callers decide whether
// it may be absent).
func checkDist(p *problems, path string, d Dist, counts bool) {
	if d.Kind == "" {
		return
	}
	kinds := timeKinds()
	if counts {
		kinds = countKinds()
	}
	if !slices.Contains(kinds, d.Kind) {
		p.add(key(path, "dist"), "must be one of %s, got %s", join(kinds), show(string(d.Kind)))
		return
	}
	if d.Counts != counts {
		want := "a time distribution (Counts false)"
		if counts {
			want = "a count distribution (Counts true)"
		}
		p.add(key(path, "dist"), "must be %s, got Counts %t", want, d.Counts)
	}
	allowed := d.Kind.params()
	for _, name := range allParams() {
		if name == "file" || slices.Contains(allowed, name) {
			continue
		}
		if d.param(name) != 0 {
			p.add(key(path, name), "must not be set for %s distribution (it takes %s), got %s", withArticle(d.Kind), paramsText(d.Kind), d.formatParam(name))
		}
	}
	if d.Kind != Empirical && (d.File != "" || len(d.Samples) > 0) {
		p.add(key(path, "file"), "must not be set for %s distribution (it takes %s), got %s", withArticle(d.Kind), paramsText(d.Kind), show(d.File))
	}
	finite := true
	for _, name := range allowed {
		if v := d.param(name); math.IsNaN(v) || math.IsInf(v, 0) {
			p.add(key(path, name), "must be a finite number, got %g", v)
			finite = false
		}
	}
	if !finite {
		return
	}
	c := distCheck{p: p, path: path, d: d}
	switch d.Kind {
	case Constant:
		if counts {
			c.wholeAtLeastOne("value")
		} else {
			c.atLeastZero("value")
		}
	case Uniform:
		if counts {
			c.wholeAtLeastOne("min")
			c.whole("max")
		} else {
			c.atLeastZero("min")
		}
		if d.Max < d.Min {
			p.add(key(path, "max"), "must be at least min (%s), got %s", d.formatParam("min"), d.formatParam("max"))
		}
	case Exponential:
		c.aboveZero("mean")
	case LogNormal:
		if d.ByQuantiles() {
			if c.aboveZero("median") && d.P99 <= d.Median {
				p.add(key(path, "p99"), "must be above the median (%s), got %s", d.formatParam("median"), d.formatParam("p99"))
			}
			for _, name := range []string{"mu", "sigma"} {
				if d.param(name) != 0 {
					p.add(key(path, name), "must not be set together with median or p99 (a lognormal takes {median, p99} or {mu, sigma}), got %s", d.formatParam(name))
				}
			}
		} else {
			c.aboveZero("sigma")
		}
	case Pareto:
		c.aboveZero("min")
		c.aboveZero("alpha")
	case Geometric:
		if d.Mean < 1 {
			p.add(key(path, "mean"), "must be at least 1 (a resent event has at least one extra copy), got %s", d.formatParam("mean"))
		}
	case Empirical:
		c.samples()
	}
}

// distCheck checks the parameters of one distribution.
type distCheck struct {
	p    *problems
	path string
	d    Dist
}

func (c distCheck) atLeastZero(name string) {
	if c.d.param(name) < 0 {
		c.p.add(key(c.path, name), "must be at least 0, got %s", c.d.formatParam(name))
	}
}

func (c distCheck) aboveZero(name string) bool {
	if c.d.param(name) <= 0 {
		c.p.add(key(c.path, name), "must be above 0, got %s", c.d.formatParam(name))
		return false
	}
	return true
}

func (c distCheck) whole(name string) {
	if v := c.d.param(name); v != math.Trunc(v) {
		c.p.add(key(c.path, name), "must be a whole number of copies, got %s", c.d.formatParam(name))
	}
}

func (c distCheck) wholeAtLeastOne(name string) {
	if v := c.d.param(name); v < 1 || v != math.Trunc(v) {
		c.p.add(key(c.path, name), "must be a whole number of copies of at least 1, got %s", c.d.formatParam(name))
	}
}

// samples checks an empirical distribution's values; the parser has
// already checked them line by line, this catches hand-built ones.
func (c distCheck) samples() {
	path := key(c.path, "file")
	if len(c.d.Samples) == 0 {
		c.p.add(path, "must name a CSV file holding at least one value, got %s with none", show(c.d.File))
		return
	}
	for i, v := range c.d.Samples {
		if msg := sampleProblem(v, c.d.Counts); msg != "" {
			c.p.add(path, "sample %d must be %s, got %g", i, msg, v)
			return
		}
	}
}
