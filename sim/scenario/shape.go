package scenario

import (
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxAliasHops bounds the alias chains resolve follows; YAML forbids
// cycles, this only keeps a malformed document from looping.
const maxAliasHops = 64

// resolve follows aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < maxAliasHops; i++ {
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

// describe renders a node for "got VALUE".
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
	return show(n.Value)
}

// yamlKeys returns the keys of a raw struct type, in field order, and the
// field type of each.
func yamlKeys(t reflect.Type) ([]string, map[string]reflect.Type) {
	names := make([]string, 0, t.NumField())
	types := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		names = append(names, name)
		types[name] = f.Type
	}
	return names, types
}

// checkShape walks n along the raw type t (see raw.go) and reports, with
// their key paths, the problems that would make decoding into t fail or
// lose information: unknown keys, keys given twice, and a scalar or list
// where a mapping belongs (or the reverse). Leaves (yaml.Node fields) take
// any value; the conversion checks them.
func checkShape(n *yaml.Node, t reflect.Type, path string, p *problems) {
	checkShapeDepth(n, t, path, p, 0)
}

func checkShapeDepth(n *yaml.Node, t reflect.Type, path string, p *problems, depth int) {
	n = resolve(n)
	if !present(n) || depth > maxAliasHops {
		return
	}
	if t == reflect.TypeFor[yaml.Node]() {
		// A leaf; a list leaf (metadata, sweep.delay) records its items'
		// lines for the order of messages.
		if n.Kind == yaml.SequenceNode {
			for i, e := range n.Content {
				p.lines[index(path, i)] = pos{e.Line, e.Column}
			}
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		checkShapeDepth(n, t.Elem(), path, p, depth)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			shapeError(p, path, n, "a list")
			return
		}
		for i, e := range n.Content {
			p.lines[index(path, i)] = pos{e.Line, e.Column}
			if !present(e) && t.Elem().Kind() == reflect.Struct {
				// The YAML decoder drops a null item from a list of
				// mappings, which would shift the indexes of the rest.
				names, _ := yamlKeys(t.Elem())
				p.add(index(path, i), "must be a mapping of %s, got nothing", strings.Join(names, ", "))
				p.breakPath(path)
				continue
			}
			checkShapeDepth(e, t.Elem(), index(path, i), p, depth+1)
		}
	case reflect.Struct:
		names, types := yamlKeys(t)
		if n.Kind != yaml.MappingNode {
			shapeError(p, path, n, "a mapping of "+strings.Join(names, ", "))
			return
		}
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := resolve(n.Content[i]), n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				lineError(p, path, k.Line, "keys must be plain names, got "+describe(k))
				continue
			}
			if k.ShortTag() == "!!merge" {
				// `<<: *defaults` merges another mapping (or a list of
				// them) into this one; check what it brings.
				merged := []*yaml.Node{resolve(v)}
				if merged[0].Kind == yaml.SequenceNode {
					merged = merged[0].Content
				}
				for _, m := range merged {
					if m = resolve(m); m.Kind != yaml.MappingNode {
						lineError(p, path, k.Line, "<< must merge a mapping or a list of mappings, got "+describe(m))
						continue
					}
					checkShapeDepth(m, t, path, p, depth+1)
				}
				continue
			}
			ft, ok := types[k.Value]
			switch {
			case !ok:
				p.addLine(key(path, showKey(k.Value)), k.Line, "unknown key (line %d), must be one of %s", k.Line, strings.Join(names, ", "))
			case seen[k.Value] > 0:
				p.addLine(key(path, k.Value), k.Line, "must be given once, got it again at line %d (first at line %d)", k.Line, seen[k.Value])
				// The YAML decoder drops a mapping with a repeated key, so
				// nothing under it can be checked further.
				p.dupParents = append(p.dupParents, path)
			default:
				seen[k.Value] = k.Line
				p.lines[key(path, k.Value)] = pos{k.Line, k.Column}
				checkShapeDepth(v, ft, key(path, k.Value), p, depth+1)
			}
		}
	}
}

// lineError reports a problem that a line locates, under path when there
// is one.
func lineError(p *problems, path string, line int, msg string) {
	if path == "" {
		p.addLine("", line, "%s", msg)
		return
	}
	p.addLine(path, line, "%s (line %d)", msg, line)
}

// shapeError reports a value of the wrong shape. At the top level there is
// no key to name, so the line locates it.
func shapeError(p *problems, path string, n *yaml.Node, want string) {
	if path == "" {
		p.addLine("", n.Line, "a scenario must be %s, got %s", want, describe(n))
		return
	}
	p.add(path, "must be %s, got %s", want, describe(n))
	p.breakPath(path)
}
