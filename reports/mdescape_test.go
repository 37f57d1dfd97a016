package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMarkdownEscapesHandEditedNames renders a summary whose query names
// and marker labels were edited by hand into HTML, table-breaking pipes,
// a link and a line break: report.md must hold none of them raw, and
// every table row must keep its column count.
func TestMarkdownEscapesHandEditedNames(t *testing.T) {
	s, ts := singleRun(t)
	hostile := []string{`<script>alert(1)</script>`, "a | b | c", "[x](javascript:alert(1))\n# owned"}
	rename := map[string]string{}
	for i := range s.Queries {
		rename[s.Queries[i].Name] = hostile[i%len(hostile)]
		s.Queries[i].Name = hostile[i%len(hostile)]
	}
	for i := range ts {
		ts[i].Query = rename[ts[i].Query]
	}
	s.Markers[0].Label = "stall <img src=x> | here"
	dir := writeResults(t, s, ts)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(data)
	for _, raw := range []string{"<script", "<img", "x](javascript:", "\n# owned"} {
		if strings.Contains(md, raw) {
			t.Errorf("report.md holds %q raw: %s", raw, md[max(0, strings.Index(md, raw)-80):strings.Index(md, raw)+20])
		}
	}
	if !strings.Contains(md, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("report.md lost the query name instead of escaping it")
	}
	// Every row of a table has as many unescaped pipes as its header.
	unescaped := regexp.MustCompile(`(^|[^\\])\|`)
	pipes := -1
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			pipes = -1
			continue
		}
		n := len(unescaped.FindAllString(line, -1))
		if pipes < 0 {
			pipes = n
		} else if n != pipes {
			t.Errorf("table row has %d cell separators, its header %d: %s", n, pipes, line)
		}
	}
}
