package reports

import (
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReportHeaderAndContents: both reports state the simulated traffic
// under the title, label the simulator's own speed as such, and open with
// a table of contents whose every link lands on a heading (report.md, by
// GitHub's anchors) or an id (report.html).
func TestReportHeaderAndContents(t *testing.T) {
	s, ts := singleRun(t)
	dir := writeResults(t, s, ts)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	mdData, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	pageData, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	md, page := string(mdData), string(pageData)
	for name, doc := range map[string]string{"report.md": md, "report.html": html.UnescapeString(page)} {
		head := doc[:strings.Index(doc, "Findings")]
		if !strings.Contains(head, "Simulated traffic: ") || !strings.Contains(head, "rows/s") {
			t.Errorf("%s: the header does not state the simulated traffic:\n%s", name, head)
		}
		if strings.Contains(doc, "events/s") {
			t.Errorf("%s: still prints events/s, unlabelled as the simulator's speed", name)
		}
		if !strings.Contains(doc, "sim speed (rows/s)") || !strings.Contains(doc, "the simulator's own speed on this machine") {
			t.Errorf("%s: the summary table does not label the simulator's speed", name)
		}
	}
	// report.md: every contents link is the slug of a heading.
	headings := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings[slug(h)] = true
		}
		if h, ok := strings.CutPrefix(line, "### "); ok {
			headings[slug(h)] = true
		}
	}
	toc := md[strings.Index(md, "**Contents:**"):]
	toc = toc[:strings.Index(toc, "\n")]
	links := regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(toc, -1)
	if len(links) < 8 {
		t.Fatalf("report.md: %d contents links, want every section and chart: %s", len(links), toc)
	}
	for _, l := range links {
		if !headings[l[1]] {
			t.Errorf("report.md: contents link #%s lands on no heading", l[1])
		}
		if !strings.Contains(page, `id="`+l[1]+`"`) {
			t.Errorf("report.html: contents link #%s lands on no id", l[1])
		}
	}
	if !strings.Contains(page, `<nav class="toc">`) {
		t.Error("report.html has no table of contents")
	}
}
