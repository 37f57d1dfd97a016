package chain

import (
	"fmt"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/generators"
)

// ParseColumns reads a schema written as name[:timestamp],... (explain's
// --columns): "id,ts:timestamp,payload" is three columns, ts a timestamp.
// Its errors echo the text as --columns.
func ParseColumns(s string) (Schema, error) {
	var out Schema
	for _, f := range strings.Split(s, ",") {
		name, typ, _ := strings.Cut(strings.TrimSpace(f), ":")
		if name == "" {
			return nil, fmt.Errorf("--columns %s: empty column name", fileio.Quote(s))
		}
		c := Column{Name: name}
		switch strings.ToLower(typ) {
		case "":
		case "timestamp":
			c.Type = Timestamp
		default:
			return nil, fmt.Errorf("--columns %s: column %s: unknown type %s (want timestamp or nothing)", fileio.Quote(s), fileio.Show(name), fileio.Quote(typ))
		}
		out = append(out, c)
	}
	return out, nil
}

// GeneratedSchema returns the columns of dedupsim's generated rows
// (generators.Columns), in column order, as the planner sees them:
// scenario queries are planned against it.
func GeneratedSchema() Schema {
	var out Schema
	for _, c := range generators.Columns() {
		t := Other
		if c.Timestamp {
			t = Timestamp
		}
		out = append(out, Column{Name: c.Name, Type: t})
	}
	return out
}
