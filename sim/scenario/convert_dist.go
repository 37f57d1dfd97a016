package scenario

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"go.yaml.in/yaml/v3"
)

// dist decodes a distribution at path. counts selects a count distribution
// (numbers only, geometric allowed) over a time distribution (durations or
// numbers of seconds). It checks which parameters are given: every one the
// family needs, none of another family. Values are checked by Validate.
func (c *conv) dist(raw *rawDist, path string, counts bool) Dist {
	kinds := timeKinds()
	if counts {
		kinds = countKinds()
	}
	kindPath := key(path, "dist")
	if !present(&raw.Dist) {
		c.p.add(kindPath, "must be set to one of %s, got nothing", join(kinds))
		c.p.breakPath(path)
		return Dist{}
	}
	s, ok := c.str(&raw.Dist, kindPath, "one of "+join(kinds))
	if !ok {
		c.p.breakPath(path)
		return Dist{}
	}
	k := DistKind(s)
	if !slices.Contains(kinds, k) {
		note := ""
		if k == Geometric {
			note = " (geometric is a count distribution)"
		}
		c.p.add(kindPath, "must be one of %s%s, got %s", join(kinds), note, show(s))
		c.p.breakPath(path)
		return Dist{}
	}
	d := Dist{Kind: k, Counts: counts}
	allowed := k.params()
	for _, name := range allParams() {
		if n := raw.param(name); present(n) && !slices.Contains(allowed, name) {
			c.p.add(key(path, name), "must not be set for %s distribution (it takes %s), got %s",
				withArticle(k), paramsText(k), describe(n))
		}
	}
	need := allowed
	if k == LogNormal {
		need = c.lognormalForm(raw, path)
	}
	for _, name := range need {
		n := raw.param(name)
		p := key(path, name)
		if !present(n) {
			c.p.add(p, "must be set for %s distribution (it takes %s), got nothing", withArticle(k), paramsText(k))
			c.p.breakPath(p)
			continue
		}
		switch {
		case name == "file":
			c.empirical(n, p, &d)
		case d.inSeconds(name):
			if v, ok := c.seconds(n, p); ok {
				d.setParam(name, v)
			}
		default:
			want := "a number"
			if counts {
				want = "a number (a count)"
			}
			if v, ok := c.number(n, p, want); ok {
				d.setParam(name, v)
			}
		}
	}
	return d
}

// lognormalForm returns the parameters a lognormal needs: median and p99,
// or mu and sigma, and reports a mix of the two forms.
func (c *conv) lognormalForm(raw *rawDist, path string) []string {
	byQuantiles := present(&raw.Median) || present(&raw.P99)
	byMoments := present(&raw.Mu) || present(&raw.Sigma)
	if byQuantiles && byMoments {
		for _, name := range []string{"mu", "sigma"} {
			if n := raw.param(name); present(n) {
				c.p.add(key(path, name), "must not be set together with median or p99 (a lognormal takes {median, p99} or {mu, sigma}), got %s", describe(n))
			}
		}
	}
	if byMoments && !byQuantiles {
		return []string{"mu", "sigma"}
	}
	return []string{"median", "p99"}
}

// paramsText lists the parameters of a family for messages.
func paramsText(k DistKind) string {
	if k == LogNormal {
		return "{median, p99} or {mu, sigma}"
	}
	return "{" + strings.Join(k.params(), ", ") + "}"
}

// empirical reads the CSV file of an empirical distribution, relative to
// the scenario file: one value per line (the first field of each record),
// blank lines and lines starting with # ignored. Only a regular file of at
// most fileio.MaxEmpiricalBytes is read, as a stream. A bad value is
// reported with the file and its line.
func (c *conv) empirical(n *yaml.Node, path string, d *Dist) {
	name, ok := c.str(n, path, "the path of a CSV file of observed values")
	if !ok {
		return
	}
	d.File = name
	full := name
	if !filepath.IsAbs(full) {
		full = filepath.Join(c.dir, name)
	}
	f, r, err := fileio.OpenLimited(full, fileio.MaxEmpiricalBytes)
	if err != nil {
		c.p.add(path, "must name a readable CSV file of observed values, got %s (%s: %s)", show(name), full, fileio.Reason(err))
		c.p.breakPath(path)
		return
	}
	defer f.Close()
	samples, err := parseSamples(r, name, d.Counts)
	if err != nil {
		c.p.add(path, "%v", err)
		c.p.breakPath(path)
		return
	}
	d.Samples = samples
}

// maxSampleEcho bounds how much of a bad line of an empirical file a
// message echoes: enough to recognize a mistyped duration, too little to
// print a line of a file that was named by mistake (/etc/passwd).
const maxSampleEcho = 20

// parseSamples parses the values of an empirical CSV file and sorts them.
// name names the file in errors, which say "NAME: line N: ..." and echo
// at most maxSampleEcho characters of a line, quoted and escaped.
func parseSamples(in io.Reader, name string, counts bool) ([]float64, error) {
	r := csv.NewReader(in)
	r.Comment = '#'
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.ReuseRecord = true
	want := "one duration per line (at least 0, such as 30s, or a number of seconds)"
	if counts {
		want = "one count per line (a whole number of copies of at least 1)"
	}
	var out []float64
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s: line %d: must be %s, got a line that is not CSV (%v)", name, pe.StartLine, want, pe.Err)
			}
			return nil, fmt.Errorf("%s: %s", name, fileio.Reason(err))
		}
		line, _ := r.FieldPos(0)
		v, msg := parseSample(rec[0], counts)
		if msg != "" {
			return nil, fmt.Errorf("%s: line %d: must be %s, got %s", name, line, want, fileio.QuoteN(rec[0], maxSampleEcho))
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: must hold at least one value, got none", name)
	}
	slices.Sort(out)
	return out, nil
}

// parseSample parses one empirical value; on failure it returns what was
// expected.
func parseSample(s string, counts bool) (float64, string) {
	var v float64
	var ok bool
	if counts {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		v, ok = f, err == nil
	} else {
		v, ok = parseSeconds(s)
	}
	msg := sampleProblem(v, counts)
	if !ok && msg == "" {
		msg = sampleProblem(-1, counts)
	}
	return v, msg
}

// sampleProblem says what an empirical value must be when v is not a
// valid one, else returns "".
func sampleProblem(v float64, counts bool) string {
	if counts {
		if !(v >= 1 && v <= math.MaxUint32 && v == math.Trunc(v)) {
			return "a whole number of copies of at least 1"
		}
		return ""
	}
	if !(v >= 0) || math.IsInf(v, 0) {
		return "a duration of at least 0 such as 30s, or a number of seconds"
	}
	return ""
}
