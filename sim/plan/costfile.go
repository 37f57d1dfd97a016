package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// costKeys are the keys of a cost block, in the model's order, with the
// unit each wants.
var costKeys = []struct{ key, want string }{
	{"batchOverheadMs", "a cost in milliseconds per batch, 0 or more"},
	{"rowNs", "a cost in nanoseconds per row, 0 or more"},
	{"newKeyNs", "a cost in nanoseconds per key, 0 or more"},
	{"scanKeyNs", "a cost in nanoseconds per key, 0 or more"},
	{"removeKeyNs", "a cost in nanoseconds per key, 0 or more"},
	{"partitionCommitMs", "a cost in milliseconds per partition task, 0 or more"},
}

// ReadCostFile reads the cost block of a YAML file: a top-level cost:
// mapping, as simulate calibrate prints it, or a scenario's spark: cost:
// mapping. A term the block leaves out is nil (the provider's default).
// Errors are one line naming the file, the key and what was expected.
func ReadCostFile(path string) (*sparkmodel.Cost, error) {
	data, err := fileio.ReadFile(path, fileio.MaxScenarioBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %s; want a YAML file with a cost: block (what simulate calibrate prints)", path, fileio.Reason(err))
	}
	return ParseCost(path, data)
}

// ParseCost is ReadCostFile of the text data, named path in its errors:
// the one check of a cost block, which calibrate applies to what it
// prints so that plan never refuses a cost calibrate wrote.
func ParseCost(path string, data []byte) (*sparkmodel.Cost, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: not YAML (%s); want a YAML file with a cost: block (what simulate calibrate prints)", path, fileio.Clean(err.Error()))
	}
	// yaml.Unmarshal reads the first document only: a second one (after a
	// "---") was ignored without a word.
	var second yaml.Node
	switch err := dec.Decode(&second); {
	case err == nil:
		return nil, fmt.Errorf("%s: holds more than one YAML document (the second starts at line %d); want one, with a cost: block", path, second.Line)
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%s: not YAML after its first document (%s); want one document, with a cost: block", path, fileio.Clean(err.Error()))
	}
	block, at := lookup(&doc, "cost"), "cost"
	if block == nil {
		if spark := lookup(&doc, "spark"); spark != nil {
			block, at = lookupIn(spark, "cost"), "spark.cost"
		}
	}
	if block == nil {
		return nil, fmt.Errorf("%s: no cost: block; want a YAML file with a cost: mapping of %s (what simulate calibrate prints), or a scenario whose spark: block has a cost: block", path, keyList())
	}
	if block.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: %s: want a mapping of %s", path, at, keyList())
	}
	var c sparkmodel.Cost
	fields := []**float64{&c.BatchOverheadMs, &c.RowNs, &c.NewKeyNs, &c.ScanKeyNs, &c.RemoveKeyNs, &c.PartitionCommitMs}
	seen := map[string]int{}
	for i := 0; i+1 < len(block.Content); i += 2 {
		k, v := block.Content[i], block.Content[i+1]
		j := slices.IndexFunc(costKeys, func(ck struct{ key, want string }) bool { return ck.key == k.Value })
		if j < 0 {
			return nil, fmt.Errorf("%s: %s.%s: unknown key; want %s", path, at, fileio.Show(k.Value), keyList())
		}
		if first, ok := seen[k.Value]; ok {
			return nil, fmt.Errorf("%s: %s.%s: must be given once, got it again at line %d (first at line %d)", path, at, k.Value, k.Line, first)
		}
		seen[k.Value] = k.Line
		var f float64
		if v.Kind != yaml.ScalarNode || v.Decode(&f) != nil || f < 0 || math.IsNaN(f) {
			return nil, fmt.Errorf("%s: %s.%s: want %s, got %s", path, at, k.Value, costKeys[j].want, fileio.Show(v.Value))
		}
		if limit := sparkmodel.MaxCost(sparkmodel.Term(j)); f > limit {
			return nil, fmt.Errorf("%s: %s.%s: want %s, at most %g (a larger cost overflows the model's durations), got %s", path, at, k.Value, costKeys[j].want, limit, fileio.Show(v.Value))
		}
		*fields[j] = &f
	}
	return &c, nil
}

func keyList() string {
	var ks []string
	for _, k := range costKeys {
		ks = append(ks, k.key)
	}
	return strings.Join(ks, ", ")
}

// lookup returns the value of key in a document's top-level mapping.
func lookup(doc *yaml.Node, key string) *yaml.Node {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	return lookupIn(doc.Content[0], key)
}

// lookupIn returns the value of key in mapping m, nil when absent.
func lookupIn(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// ShowValue renders a value a user gave for an error's "got VALUE": as
// written when that is unambiguous, else quoted and cut to 80 characters
// (fileio.Show), for the command line, which does not import engines.
func ShowValue(s string) string { return fileio.Show(s) }
