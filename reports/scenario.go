package reports

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// scenarioYAML renders the resolved scenario of summary.json back as the
// YAML a scenario file is written in, keys in their recorded order, so the
// report shows the run the way its author would write it. Short lists and
// maps of plain values stay on one line, as docs/scenario.md writes them
// ({dist: exponential, mean: 2s}, [1m, 5m, 20m]).
func scenarioYAML(raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return "", nil
	}
	// JSON is YAML: decoding into a node keeps the key order and types.
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return "", fmt.Errorf("scenario: %w", err)
	}
	restyle(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", fmt.Errorf("scenario: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("scenario: %w", err)
	}
	return buf.String(), nil
}

// restyle drops the JSON styling of n (flow collections, quoted strings)
// so the encoder writes block YAML and quotes only what needs quotes, then
// turns short collections of scalars back into one-line flow style.
func restyle(n *yaml.Node) {
	for _, c := range n.Content {
		restyle(c)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		n.Style = 0
	case yaml.MappingNode, yaml.SequenceNode:
		n.Style = 0
		if n.Kind == yaml.SequenceNode {
			// A list of maps (queries) reads best with every item in
			// block style, even the short ones.
			for _, c := range n.Content {
				if c.Kind == yaml.MappingNode && len(c.Content) > 0 {
					c.Style = 0
				}
			}
		}
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle // {} and [] rather than nothing
			return
		}
		width := 0
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return
			}
			width += len(c.Value) + 2
		}
		if width <= 60 {
			n.Style = yaml.FlowStyle
		}
	}
}
