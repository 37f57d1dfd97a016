package scenario

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"go.yaml.in/yaml/v3"
)

// conv turns yaml.Nodes into typed values, reporting each value that does
// not parse at its key path. A value that fails keeps its default, and its
// path is marked broken so that Validate does not report it twice.
type conv struct {
	p *problems
	// dir anchors relative empirical files.
	dir string
}

// fail reports that the value at path is not what was expected.
func (c *conv) fail(path string, n *yaml.Node, want string) {
	c.p.add(path, "must be %s, got %s", want, describe(n))
	c.p.breakPath(path)
}

// missing reports that a required key is absent.
func (c *conv) missing(path, want string) {
	c.p.add(path, "must be set to %s, got nothing", want)
	c.p.breakPath(path)
}

// scalar returns the text of a scalar node.
func (c *conv) scalar(n *yaml.Node, path, want string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		c.fail(path, n, want)
		return "", false
	}
	return n.Value, true
}

// str decodes a string.
func (c *conv) str(n *yaml.Node, path, want string) (string, bool) {
	return c.scalar(n, path, want)
}

// number decodes a finite number.
func (c *conv) number(n *yaml.Node, path, want string) (float64, bool) {
	s, ok := c.scalar(n, path, want)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		c.fail(path, n, want)
		return 0, false
	}
	return v, true
}

// duration decodes a duration in any form interval.Parse accepts.
func (c *conv) duration(n *yaml.Node, path string) (Duration, bool) {
	const want = `a duration such as 90s, 20m, 1h30m, 7d or "20 minutes"`
	s, ok := c.scalar(n, path, want)
	if !ok {
		return 0, false
	}
	d, err := interval.Parse(s)
	if err != nil {
		c.fail(path, n, want)
		return 0, false
	}
	return Duration(d), true
}

// seconds decodes a time parameter of a distribution: a duration, or a
// bare number of seconds.
func (c *conv) seconds(n *yaml.Node, path string) (float64, bool) {
	const want = "a duration such as 30s or a number of seconds"
	s, ok := c.scalar(n, path, want)
	if !ok {
		return 0, false
	}
	v, ok := parseSeconds(s)
	if !ok {
		c.fail(path, n, want)
	}
	return v, ok
}

// parseSeconds parses a duration or a bare number of seconds.
func parseSeconds(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	d, err := interval.Parse(s)
	if err != nil {
		return 0, false
	}
	return d.Seconds(), true
}

// integer decodes a whole number in [lo, hi]; "1e4" is accepted when whole.
func (c *conv) integer(n *yaml.Node, path, want string) (int64, bool) {
	s, ok := c.scalar(n, path, want)
	if !ok {
		return 0, false
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		return v, true
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		c.fail(path, n, want)
		return 0, false
	}
	return int64(v), true
}

// boolean decodes true or false.
func (c *conv) boolean(n *yaml.Node, path string) (bool, bool) {
	s, ok := c.scalar(n, path, "true or false")
	if !ok {
		return false, false
	}
	switch strings.ToLower(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	c.fail(path, n, "true or false")
	return false, false
}

// rate decodes a rate.
func (c *conv) rate(n *yaml.Node, path string) (Rate, bool) {
	const want = "a rate such as 2000/s, 120/m, 5000/h or a number per second"
	s, ok := c.scalar(n, path, want)
	if !ok {
		return 0, false
	}
	r, err := ParseRate(s)
	if err != nil {
		c.fail(path, n, want)
		return 0, false
	}
	return r, true
}

// timestamp decodes an RFC 3339 time, or a date meaning its midnight UTC.
func (c *conv) timestamp(n *yaml.Node, path string) (time.Time, bool) {
	const want = "an RFC 3339 time such as 2026-01-01T00:00:00Z"
	s, ok := c.scalar(n, path, want)
	if !ok {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.UTC(), true
		}
	}
	c.fail(path, n, want)
	return time.Time{}, false
}

// list returns the elements of a sequence node.
func (c *conv) list(n *yaml.Node, path, want string) ([]*yaml.Node, bool) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		c.fail(path, n, want)
		return nil, false
	}
	return n.Content, true
}
