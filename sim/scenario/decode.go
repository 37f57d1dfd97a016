package scenario

import (
	"cmp"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"go.yaml.in/yaml/v3"
)

// The decoder walks the YAML node tree alongside the typed value it fills,
// the key path of each value made of the yaml tags on the way. A mapping
// fills a struct, key by key (an unknown key, a key given twice or a key
// that is not a plain name is an error, as yaml.v3's KnownFields makes
// it), merge keys (<<) included; a list fills a slice; a scalar fills a
// string, a bool, a whole number, a number or a time, parsed strictly; and
// the types that need more (a duration, a rate, a distribution) have their
// own decoders, below and in dist.go. An absent key or a null value keeps
// the default. Every bad value is reported at its key path with the
// field's want tag, and decoding goes on, so that every problem of a file
// is reported at once.
//
// It does not use yaml.v3's own decoding into structs: that accepts values
// dedupsim refuses (yes and on as true, 1.5 as the count 1, .nan as a
// probability, 0x10 as a seed, a start in another time zone kept as is)
// and its errors name a line but no key path.

// tags are what a field's struct tags say about its value.
type tags struct {
	// want says what the value must be ("a name", "uuid or int").
	want string
	// need, when set, makes the key required and says what to set it to.
	need string
	// item says what each element of a list must be.
	item string
	// counts marks a count distribution.
	counts bool
}

func tagsOf(f reflect.StructField) tags {
	return tags{want: f.Tag.Get("want"), need: f.Tag.Get("need"), item: f.Tag.Get("item"), counts: f.Tag.Get("dist") == "counts"}
}

// decoder fills a scenario from its node tree.
type decoder struct {
	p *problems
	// dir anchors relative empirical files.
	dir string
	// optional waives the need of the key paths it holds (duration,
	// which an event log's arrivals give).
	optional map[string]bool
}

// maxDepth bounds the merges (and the aliases) the decoder follows; YAML
// forbids cycles, this only keeps a malformed document from looping.
const maxDepth = 64

// value decodes n into v, the value at path. It reports false when n
// could not be decoded (and v is left as it was).
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string, t tags) bool {
	n = resolve(n)
	switch {
	case !present(n):
		if t.need != "" && !d.optional[path] {
			d.p.add(path, "must be set to %s, got nothing", t.need)
			d.p.breakPath(path)
		}
		return false
	case v.Type() == reflect.TypeFor[randvar.Spec]():
		return d.dist(n, v, path, t.counts)
	case v.Type() == reflect.TypeFor[QueryWindow]():
		return d.queryWindow(n, v, path)
	case v.Type() == reflect.TypeFor[generators.ColumnList]() && n.Kind == yaml.ScalarNode:
		// One column, or a list of them.
		if n.Value == "" {
			d.fail(path, n, t.want)
			return false
		}
		v.Set(reflect.ValueOf(generators.ColumnList{n.Value}))
		return true
	case v.Kind() == reflect.Pointer:
		if !v.IsNil() {
			return d.value(n, v.Elem(), path, t)
		}
		e := reflect.New(v.Type().Elem())
		if def, ok := e.Interface().(interface{ SetDefaults() }); ok {
			// A block with defaults of its own (spark:) starts from them.
			def.SetDefaults()
		}
		if d.value(n, e.Elem(), path, t) {
			v.Set(e)
			return true
		}
		return false
	case v.Kind() == reflect.Slice:
		return d.list(n, v, path, t)
	case v.Kind() == reflect.Map:
		return d.stringMap(n, v, path, t)
	case v.Kind() == reflect.Struct && v.Type() != reflect.TypeFor[time.Time]():
		if n.Kind != yaml.MappingNode {
			d.shape(path, n, "a mapping of "+strings.Join(yamlNames(v.Type()), ", "))
			return false
		}
		return d.mapping(n, v, path)
	}
	want, parse := leaf(v.Type())
	if x, ok := parse(n.Value); ok && n.Kind == yaml.ScalarNode {
		v.Set(reflect.ValueOf(x).Convert(v.Type()))
		return true
	}
	if _, err := interval.Parse(n.Value); v.Type() == reflect.TypeFor[interval.Duration]() && errors.Is(err, interval.ErrTooLong) {
		// A duration, but too long: say so, not "must be a duration".
		want, t.want = "a duration of at most "+interval.MaxText, ""
	}
	d.fail(path, n, cmp.Or(t.want, want))
	return false
}

// durationWant is what a duration must be.
const durationWant = `a duration such as 90s, 20m, 1h30m, 7d or "20 minutes"`

// leaf returns how a scalar of type t is parsed, strictly, and what it
// must be when the field does not say.
func leaf(t reflect.Type) (want string, parse func(string) (any, bool)) {
	switch t {
	case reflect.TypeFor[interval.Duration]():
		return durationWant, func(s string) (any, bool) {
			d, err := interval.Parse(s)
			return d, err == nil
		}
	case reflect.TypeFor[generators.Rate]():
		return "a rate such as 2000/s, 120/m, 5000/h or a number per second", func(s string) (any, bool) {
			r, err := ParseRate(s)
			return r, err == nil
		}
	case reflect.TypeFor[time.Time]():
		// An RFC 3339 time, or a date meaning its midnight, in UTC.
		return "", func(s string) (any, bool) {
			for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
				if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
					return t.UTC(), true
				}
			}
			return nil, false
		}
	}
	switch t.Kind() {
	case reflect.String:
		return "", func(s string) (any, bool) { return s, true }
	case reflect.Bool:
		return "true or false", func(s string) (any, bool) {
			s = strings.ToLower(s)
			return s == "true", s == "true" || s == "false"
		}
	case reflect.Uint64:
		return "", func(s string) (any, bool) {
			x, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			return x, err == nil
		}
	case reflect.Int64:
		// "1e4" is accepted when it is whole.
		return "", func(s string) (any, bool) {
			if x, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				return x, true
			}
			x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			return int64(x), err == nil && x == math.Trunc(x) && math.Abs(x) <= 1<<53
		}
	case reflect.Float64:
		return "", func(s string) (any, bool) {
			x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			return x, err == nil && !math.IsNaN(x) && !math.IsInf(x, 0)
		}
	}
	return "", func(string) (any, bool) { return nil, false }
}

// mapping decodes the mapping n into the struct v, field by field.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) bool {
	vals, ok := d.keys(n, yamlNames(v.Type()), path, 0)
	if !ok {
		if path == "" {
			d.p.shapeOnly = true
		}
		d.p.breakPath(path)
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name := yamlName(f)
		if name == "" {
			continue
		}
		d.value(vals[name], v.Field(i), key(path, name), tagsOf(f))
	}
	return ok
}

// keys checks the keys of the mapping n against names (a struct type's
// yaml names) and returns the value of each key: the mapping's own keys first,
// then those the mappings of its last merge key (<<) bring, the first of
// them winning, as yaml.v3 merges. It reports unknown keys, keys given
// twice and keys that are not plain names, with their lines (those of the
// merged mappings too), and records the position of every key. It reports
// false when a key is given twice: the YAML decoder keeps nothing of such
// a mapping.
func (d *decoder) keys(n *yaml.Node, names []string, path string, depth int) (map[string]*yaml.Node, bool) {
	vals := map[string]*yaml.Node{}
	seen := map[string]int{}
	ok := true
	var merged []map[string]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			d.lineError(path, k.Line, "keys must be plain names, got "+describe(k))
		case k.ShortTag() == "!!merge":
			// `<<: *defaults` merges another mapping, or a list of them.
			merged = merged[:0]
			list := []*yaml.Node{resolve(v)}
			if list[0].Kind == yaml.SequenceNode {
				list = list[0].Content
			}
			for _, m := range list {
				if m = resolve(m); m.Kind != yaml.MappingNode {
					d.lineError(path, k.Line, "<< must merge a mapping or a list of mappings, got "+describe(m))
				} else if depth < maxDepth {
					mv, _ := d.keys(m, names, path, depth+1)
					merged = append(merged, mv)
				}
			}
		case !slices.Contains(names, k.Value):
			d.p.addLine(key(path, fileio.Show(k.Value)), k.Line, "unknown key (line %d), must be one of %s", k.Line, strings.Join(names, ", "))
		case seen[k.Value] > 0:
			d.p.addLine(key(path, k.Value), k.Line, "must be given once, got it again at line %d (first at line %d)", k.Line, seen[k.Value])
			ok = false
		default:
			seen[k.Value] = k.Line
			d.p.lines[key(path, k.Value)] = pos{k.Line, k.Column}
			vals[k.Value] = v
		}
	}
	for _, mv := range merged {
		for name, v := range mv {
			if _, set := vals[name]; !set {
				vals[name] = v
			}
		}
	}
	return vals, ok
}

// list decodes the sequence n into the slice v: every element, in order,
// at path[i].
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string, t tags) bool {
	structs := v.Type().Elem().Kind() == reflect.Struct
	if n.Kind != yaml.SequenceNode {
		if structs {
			d.shape(path, n, "a list")
		} else {
			d.fail(path, n, cmp.Or(t.want, "a list"))
		}
		return false
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		p := index(path, i)
		d.p.lines[p] = pos{e.Line, e.Column}
		if structs && !present(resolve(e)) {
			// The YAML decoder drops a null item from a list of
			// mappings, which would shift the indexes of the rest.
			d.p.addShape(p, "must be a mapping of %s, got nothing", strings.Join(yamlNames(v.Type().Elem()), ", "))
			d.p.breakPath(path)
			continue
		}
		d.element(e, out.Index(i), p, t.item)
	}
	v.Set(out)
	return true
}

// element decodes one element of a list; a null element is given (an
// empty string, or a bad duration), not absent.
func (d *decoder) element(n *yaml.Node, v reflect.Value, path, want string) {
	if !present(n) {
		if v.Kind() == reflect.String {
			v.SetString("")
		} else {
			d.fail(path, n, cmp.Or(want, durationWant))
		}
		return
	}
	d.value(n, v, path, tags{want: want})
}

// ParseRate parses a rate, as a scenario file writes one
// (generators.ParseRate).
func ParseRate(s string) (generators.Rate, error) { return generators.ParseRate(s) }

// fail reports that the value at path is not what was expected.
func (d *decoder) fail(path string, n *yaml.Node, want string) {
	d.p.add(path, "must be %s, got %s", want, describe(n))
	d.p.breakPath(path)
}

// shape reports a mapping or a list of the wrong shape.
func (d *decoder) shape(path string, n *yaml.Node, want string) {
	d.p.addShape(path, "must be %s, got %s", want, describe(n))
}

// lineError reports a problem that a line locates, under path when there
// is one.
func (d *decoder) lineError(path string, line int, msg string) {
	if path == "" {
		d.p.addLine("", line, "%s", msg)
		return
	}
	d.p.addLine(path, line, "%s (line %d)", msg, line)
}

// resolve follows aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

// present reports whether a key was given a value: absent keys and null
// values (`key:`, `key: ~`) count as not given, so that they take their
// default.
func present(n *yaml.Node) bool {
	n = resolve(n)
	if n == nil || n.Kind == 0 || n.Kind == yaml.AliasNode {
		return false
	}
	return !(n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe renders a node for "got VALUE": "nothing", "a mapping", "a
// list", or the scalar as written (fileio.Show: quoted and cut when it is
// empty, holds spaces, quotes or control characters, or is long).
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch {
	case !present(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	return fileio.Show(n.Value)
}

// yamlName returns the key of a struct field, "" for a field the file
// does not hold.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

// yamlNames returns the keys of a struct type, in field order.
func yamlNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// stringMap decodes the mapping n into v, a map of strings to strings
// (an engine's options): every key and value a scalar, kept as written,
// a key at most once.
func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string, t tags) bool {
	if n.Kind != yaml.MappingNode {
		d.shape(path, n, cmp.Or(t.want, "a mapping"))
		return false
	}
	m := reflect.MakeMap(v.Type())
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			d.fail(path, k, "keys that are plain names")
			ok = false
			continue
		}
		kp := key(path, k.Value)
		if m.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
			d.p.addLine(kp, k.Line, "is given twice")
			ok = false
			continue
		}
		if val.Kind != yaml.ScalarNode {
			d.fail(kp, val, "a single value such as 60 s")
			ok = false
			continue
		}
		m.SetMapIndex(reflect.ValueOf(k.Value), reflect.ValueOf(val.Value))
	}
	if ok {
		v.Set(m)
	}
	return ok
}

// queryWindow decodes a query's window: a duration (a kafka-streams
// query's W) or a mapping {fixed: DURATION} (a beam query's fixed
// windows).
func (d *decoder) queryWindow(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.MappingNode {
		return d.value(n, v.FieldByName("Size"), path, tags{})
	}
	var f struct {
		Fixed *interval.Duration `yaml:"fixed" want:"a window size such as 1m"`
	}
	if len(n.Content) == 0 {
		d.fail(path, n, "a duration (kafka-streams) or {fixed: DURATION} (beam)")
		return false
	}
	if !d.mapping(n, reflect.ValueOf(&f).Elem(), path) || f.Fixed == nil {
		// An unknown key was reported. The window stays a fixed one (of
		// size 0, which the path's break keeps from being reported
		// again), so that a sibling key (allowedLateness) is not judged
		// against the global window.
		d.p.breakPath(path)
		v.Set(reflect.ValueOf(QueryWindow{Fixed: new(interval.Duration)}))
		return true
	}
	v.Set(reflect.ValueOf(QueryWindow{Fixed: f.Fixed}))
	return true
}
