package scenario

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"go.yaml.in/yaml/v3"
)

// Load reads, resolves and validates the scenario file at path. Relative
// empirical files are read relative to path's directory. Only a regular
// file of at most fileio.MaxScenarioBytes is read: a FIFO, a device or a
// folder is refused before it is opened. On error it returns every
// problem, one line each (see Error).
func Load(path string) (*Scenario, error) {
	data, err := fileio.ReadFile(path, fileio.MaxScenarioBytes)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read the scenario: " + fileio.Reason(err)}
	}
	return Parse(data, path)
}

// Parse resolves and validates the scenario held in data; file names it in
// messages and anchors relative empirical files. The YAML is decoded with
// unknown keys as errors, onto the defaults, then Validate's checks run.
// On error it returns every problem, one line each (see Error).
func Parse(data []byte, file string) (*Scenario, error) {
	return parse(data, file, defaultOptions())
}

// options are the parts of parsing that tests replace.
type options struct {
	// checkQuery returns why a query cannot run, or nil.
	checkQuery func(query string) error
}

// defaultOptions check queries with sim/spark/chain against Schema, as the
// executor will plan them.
func defaultOptions() options {
	return options{checkQuery: func(q string) error {
		c, err := chain.Parse(q)
		if err != nil {
			return err
		}
		_, err = chain.PlanFor(c, Schema())
		return err
	}}
}

func parse(data []byte, file string, opt options) (*Scenario, error) {
	p := &problems{file: file, lines: map[string]pos{}}
	root, ok := parseDocument(data, p)
	if !ok {
		return nil, p.err()
	}
	s := Defaults()
	s.File = file
	if root = resolve(root); root.Kind != yaml.MappingNode {
		p.addLine("", max(root.Line, 1), "a scenario must be a mapping of %s, got %s", strings.Join(yamlNames(reflect.TypeFor[Scenario]()), ", "), describe(root))
		return nil, p.err()
	}
	d := &decoder{p: p, dir: filepath.Dir(file)}
	if hasEvents(root) {
		d.optional = map[string]bool{"duration": true}
	}
	d.value(root, reflect.ValueOf(&s).Elem(), "", tags{})
	if p.shapeOnly {
		return nil, p.err()
	}
	s.Workload.SetMootDefaults()
	s.fillSparkDefaults()
	s.readEvents(p, filepath.Dir(file))
	s.collect(opt, p)
	if len(p.errs) > 0 {
		p.sortByLine()
		return nil, p.err()
	}
	s.fillEngineDefaults()
	return &s, nil
}

// parseDocument parses data as exactly one YAML document and returns its
// root node.
func parseDocument(data []byte, p *problems) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.addLine("", 1, "the file holds no YAML document, want a mapping of name, duration, workload, queries, ...")
		} else {
			yamlErrors(p, err)
			hintQuoting(p, data)
		}
		return nil, false
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			yamlErrors(p, err)
		} else {
			p.addLine("", next.Line, "a scenario file holds one YAML document, got another one at line %d", next.Line)
		}
		return nil, false
	}
	if len(doc.Content) == 0 {
		p.addLine("", doc.Line, "the file holds no YAML document, want a mapping of name, duration, workload, queries, ...")
		return nil, false
	}
	return doc.Content[0], true
}

// yamlErrors turns the errors of the YAML library into Errors that name
// the line: "yaml: line 3: mapping values are not allowed in this context"
// becomes line 3, "mapping values are not allowed in this context".
func yamlErrors(p *problems, err error) {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		for _, e := range te.Errors {
			line, msg := splitLine(e)
			p.addLine("", line, "%s", msg)
		}
		return
	}
	line, msg := splitLine(strings.TrimPrefix(err.Error(), "yaml: "))
	p.addLine("", line, "%s", msg)
}

// hintQuoting adds to the syntax errors of p that fall near a query: key
// (two lines either side) how to write a query YAML would misread: PySpark
// chains and SQL hold quotes and ": ", which a plain YAML value cannot.
func hintQuoting(p *problems, data []byte) {
	lines := strings.Split(string(data), "\n")
	for _, err := range p.errs {
		e, ok := err.(*Error)
		if !ok || e.Line == 0 {
			continue
		}
		for l := max(e.Line-3, 0); l < min(e.Line+2, len(lines)); l++ {
			if strings.Contains(lines[l], "query:") {
				e.Msg += ` (near a query: write a query that holds quotes or ": " in single quotes, doubling any single quote inside, or as a block: "query: |" then the query indented on the next line)`
				break
			}
		}
	}
}

// splitLine splits "line N: msg" into N and msg.
func splitLine(s string) (int, string) {
	rest, ok := strings.CutPrefix(s, "line ")
	if !ok {
		return 0, s
	}
	num, msg, ok := strings.Cut(rest, ": ")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return 0, s
	}
	return n, msg
}
