package registry

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/dedupsim/dedupsim/sim/enginetrace"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/replay"
)

// sparkReplay runs a Spark trace (docs/replay-format.md), streaming each
// executed micro-batch's line to enc.
func sparkReplay(ctx context.Context, data []byte, enc *json.Encoder) error {
	t, err := replay.Load(data)
	if err != nil {
		return err
	}
	return replay.Stream(ctx, t, func(l *replay.BatchLine) error { return enc.Encode(l) })
}

// sparkExplainer binds --columns and --generated and returns the function
// that plans a PySpark chain (or its JSON form) against those columns and
// prints the plan.
func sparkExplainer(fs enginetrace.Flags) enginetrace.ExplainFunc {
	var columns string
	var generated bool
	fs.StringVar(&columns, "columns", "", "input columns as name[:timestamp],... (default: the columns the query names)")
	fs.BoolVar(&generated, "generated", false, "plan against the columns of dedupsim's generated rows")
	return func(w io.Writer, query string) error {
		c, err := chain.Parse(query)
		if err != nil {
			return err
		}
		schema := chain.InferSchema(c)
		switch {
		case generated && columns != "":
			return errors.New("--generated and --columns: use one or the other")
		case generated:
			schema = chain.GeneratedSchema()
		case columns != "":
			if schema, err = chain.ParseColumns(columns); err != nil {
				return err
			}
		}
		p, err := chain.PlanFor(c, schema)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, chain.Explain(p))
		return err
	}
}
