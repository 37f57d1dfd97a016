package scenario

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"go.yaml.in/yaml/v3"
)

// dist decodes a distribution at path into v (a randvar.Spec). counts
// selects a count distribution (numbers only, geometric allowed) over a
// time distribution (durations or numbers of seconds). It checks which
// parameters are given: every one the family needs, none of another
// family. Values are checked with the rest of the scenario.
func (d *decoder) dist(n *yaml.Node, v reflect.Value, path string, counts bool) bool {
	names := append([]string{"dist"}, randvar.AllParams()...)
	if n.Kind != yaml.MappingNode {
		d.shape(path, n, "a mapping of "+strings.Join(names, ", "))
		return false
	}
	params, ok := d.keys(n, names, path, 0)
	if !ok {
		d.p.breakPath(path)
	}
	kinds := randvar.TimeKinds()
	if counts {
		kinds = randvar.CountKinds()
	}
	kindPath := key(path, "dist")
	kn := resolve(params["dist"])
	switch {
	case !present(kn):
		d.p.add(kindPath, "must be set to one of %s, got nothing", randvar.JoinKinds(kinds))
	case kn.Kind != yaml.ScalarNode:
		d.fail(kindPath, kn, "one of "+randvar.JoinKinds(kinds))
	case !slices.Contains(kinds, randvar.Kind(kn.Value)):
		note := ""
		if randvar.Kind(kn.Value) == randvar.KindGeometric {
			note = " (geometric is a count distribution)"
		}
		d.p.add(kindPath, "must be one of %s%s, got %s", randvar.JoinKinds(kinds), note, fileio.Show(kn.Value))
	default:
		s := d.params(params, path, randvar.Kind(kn.Value), counts)
		v.Set(reflect.ValueOf(s))
		return true
	}
	d.p.breakPath(path)
	return false
}

// params decodes the parameters of a distribution of family k.
func (d *decoder) params(params map[string]*yaml.Node, path string, k randvar.Kind, counts bool) randvar.Spec {
	s := randvar.Spec{Kind: k, Counts: counts}
	given := func(name string) bool { return present(params[name]) }
	allowed := k.Params()
	for _, name := range randvar.AllParams() {
		if given(name) && !slices.Contains(allowed, name) {
			d.p.add(key(path, name), "must not be set for %s distribution (it takes %s), got %s", k.WithArticle(), k.ParamsText(), describe(params[name]))
		}
	}
	need := allowed
	if k == randvar.KindLogNormal {
		// Median and p99, or mu and sigma; a mix is reported.
		byQuantiles, byMoments := given("median") || given("p99"), given("mu") || given("sigma")
		if byQuantiles && byMoments {
			for _, name := range []string{"mu", "sigma"} {
				if given(name) {
					d.p.add(key(path, name), "must not be set together with median or p99 (a lognormal takes {median, p99} or {mu, sigma}), got %s", describe(params[name]))
				}
			}
		}
		need = []string{"median", "p99"}
		if byMoments && !byQuantiles {
			need = []string{"mu", "sigma"}
		}
	}
	for _, name := range need {
		n, p := resolve(params[name]), key(path, name)
		switch {
		case !present(n):
			d.p.add(p, "must be set for %s distribution (it takes %s), got nothing", k.WithArticle(), k.ParamsText())
			d.p.breakPath(p)
		case name == "file":
			d.empirical(n, p, &s)
		case s.InSeconds(name):
			const want = "a duration such as 30s or a number of seconds"
			if v, ok := parseSeconds(n.Value); ok && n.Kind == yaml.ScalarNode {
				s.SetParam(name, v)
			} else {
				d.fail(p, n, want)
			}
		default:
			want := "a number"
			if counts {
				want = "a number (a count)"
			}
			var x float64
			if d.value(n, reflect.ValueOf(&x).Elem(), p, tags{want: want}) {
				s.SetParam(name, x)
			}
		}
	}
	return s
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

// empirical reads the CSV file of an empirical distribution, relative to
// the scenario file: one value per line (the first field of each record),
// blank lines and lines starting with # ignored. Only a regular file of at
// most fileio.MaxEmpiricalBytes is read, as a stream. A bad value is
// reported with the file and its line.
func (d *decoder) empirical(n *yaml.Node, path string, s *randvar.Spec) {
	if n.Kind != yaml.ScalarNode {
		d.fail(path, n, "the path of a CSV file of observed values")
		return
	}
	name := n.Value
	s.File = name
	full := name
	if !filepath.IsAbs(full) {
		full = filepath.Join(d.dir, name)
	}
	f, r, err := fileio.OpenLimited(full, fileio.MaxEmpiricalBytes)
	if err != nil {
		d.p.add(path, "must name a readable CSV file of observed values, got %s (%s: %s)", fileio.Show(name), full, fileio.Reason(err))
		d.p.breakPath(path)
		return
	}
	defer f.Close()
	samples, err := parseSamples(r, name, s.Counts)
	if err != nil {
		d.p.add(path, "%v", err)
		d.p.breakPath(path)
		return
	}
	s.Samples = samples
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
		v, ok := parseSample(rec[0], counts)
		if !ok {
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

// parseSample parses one empirical value and reports whether it is a
// valid one (randvar.SampleProblem).
func parseSample(s string, counts bool) (float64, bool) {
	if counts {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return v, err == nil && randvar.SampleProblem(v, true) == ""
	}
	v, ok := parseSeconds(s)
	return v, ok && randvar.SampleProblem(v, false) == ""
}
