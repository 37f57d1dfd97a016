package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocExamples loads, with the real query planner, every example
// scenario of the documentation: each ```yaml block of docs/*.md whose
// first line is "# example: NAME". An example the loader rejects is a
// documentation bug.
func TestDocExamples(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	n := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range yamlBlocks(string(data)) {
			first, _, _ := strings.Cut(block, "\n")
			name, ok := strings.CutPrefix(strings.TrimSpace(first), "# example:")
			if !ok {
				continue
			}
			n++
			file := filepath.Base(doc) + "#" + strings.TrimSpace(name)
			if _, err := Parse([]byte(block), file); err != nil {
				t.Errorf("%s:\n%v", file, err)
			}
		}
	}
	if n < 10 {
		t.Fatalf("found %d example scenarios in docs/*.md, want at least the ten of docs/scenario.md", n)
	}
}

// yamlBlocks returns the content of every ```yaml fenced block of a
// Markdown text.
func yamlBlocks(md string) []string {
	var out []string
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```yaml" {
			continue
		}
		var b strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			b.WriteString(lines[i] + "\n")
		}
		out = append(out, b.String())
	}
	return out
}
