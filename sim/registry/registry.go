// Package registry is the one place that maps an engine's name to its
// parts: how its traces and queries are recognised, its replay, its
// explain and a line describing it. `simulate replay` and `simulate
// explain` reach the engines only through it, and so do a scenario's
// queries of another engine than Spark (scenario.go); a new engine is one
// more entry in Engines.
package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/beam"
	"github.com/dedupsim/dedupsim/sim/enginetrace"
	"github.com/dedupsim/dedupsim/sim/flink"
	"github.com/dedupsim/dedupsim/sim/kstreams"
)

// Spark is the engine of a trace or query with no "engine" key.
const Spark = "spark"

// Engine is one engine's parts.
type Engine struct {
	// Name is the value of the "engine" key of the engine's traces and
	// query objects (Spark's have none).
	Name string
	// Summary is one line saying what the engine's model covers.
	Summary string
	// Replay parses the trace in data, runs it and encodes one JSON line
	// per step (or batch) with enc. Its errors are one line and do not
	// name the file (Replay does).
	Replay func(ctx context.Context, data []byte, enc *json.Encoder) error
	// Claims reports whether a query with no "engine" key is the
	// engine's (Flink: SQL text); nil claims none. The default engine
	// (Spark) takes what no other engine claims.
	Claims func(query string) bool
	// Explainer binds the engine's explain flags to fs and returns the
	// function that explains one of its queries with them.
	Explainer func(fs enginetrace.Flags) enginetrace.ExplainFunc
}

// Engines returns every engine, Spark first.
func Engines() []Engine {
	return []Engine{
		{
			Name:      Spark,
			Summary:   "Spark Structured Streaming: dropDuplicates[WithinWatermark] by micro-batch (docs/replay-format.md)",
			Replay:    sparkReplay,
			Explainer: sparkExplainer,
		},
		{
			Name:      flink.Engine,
			Summary:   "Flink SQL: the ROW_NUMBER() = 1 dedup and its runtime functions (docs/flink.md)",
			Replay:    flink.Replay,
			Claims:    flink.LooksLikeSQL,
			Explainer: flink.NewExplainer,
		},
		{
			Name:      kstreams.Engine,
			Summary:   "Kafka Streams: the window-store dedup, keep-last toTable (docs/kafka-streams.md)",
			Replay:    enginetrace.Replayer(kstreams.Load, kstreams.Run),
			Explainer: enginetrace.QueryExplainer(kstreams.LoadQuery, (*kstreams.Trace).Explain),
		},
		{
			Name:      beam.Engine,
			Summary:   "Beam: Deduplicate as the Java DirectRunner runs it (docs/beam.md)",
			Replay:    enginetrace.Replayer(beam.Load, beam.Run),
			Explainer: enginetrace.QueryExplainer(beam.LoadQuery, (*beam.Trace).Explain),
		},
	}
}

// Lookup returns the engine called name; an unknown name is an error
// that lists the engines.
func Lookup(name string) (Engine, error) {
	es := Engines()
	var names []string
	for _, e := range es {
		if e.Name == name {
			return e, nil
		}
		if e.Name != Spark {
			names = append(names, fmt.Sprintf("%q", e.Name))
		}
	}
	return Engine{}, fmt.Errorf("engine: %s is not an engine dedupsim models: want %s (a Spark trace or query has no \"engine\" key)", fileio.Quote(name), strings.Join(names, ", "))
}

// ForDocument returns the engine of a trace or query object: the one its
// "engine" key names, Spark when it has none (or is not a JSON object).
func ForDocument(data []byte) (Engine, error) {
	name := enginetrace.Engine(data)
	if name == "" {
		name = Spark
	}
	return Lookup(name)
}

// ForQuery returns the engine of explain's query: the one a JSON object's
// "engine" key names, else the first engine that claims the text, else
// Spark.
func ForQuery(query string) (Engine, error) {
	if enginetrace.Engine([]byte(query)) != "" {
		return ForDocument([]byte(query))
	}
	for _, e := range Engines() {
		if e.Claims != nil && e.Claims(query) {
			return e, nil
		}
	}
	return Lookup(Spark)
}

// Replay runs the trace in the file at path through its engine and writes
// the engine's JSON lines to w only once every step ran: a bad trace, a
// failure or a cancelled ctx writes nothing. Its errors name the file
// once.
func Replay(ctx context.Context, path string, w io.Writer) error {
	data, err := enginetrace.ReadFile(path)
	if err != nil {
		return err
	}
	e, err := ForDocument(data)
	if err != nil {
		return fmt.Errorf("%s: %w", fileio.ShowPath(path), err)
	}
	return enginetrace.Publish(ctx, path, w, func(enc *json.Encoder) error {
		return e.Replay(ctx, data, enc)
	})
}

// Explainer explains a query with the engine it belongs to.
type Explainer struct {
	explain map[string]enginetrace.ExplainFunc
}

// NewExplainer binds every engine's explain flags to fs.
func NewExplainer(fs enginetrace.Flags) *Explainer {
	x := &Explainer{explain: map[string]enginetrace.ExplainFunc{}}
	for _, e := range Engines() {
		x.explain[e.Name] = e.Explainer(fs)
	}
	return x
}

// Explain writes what the engine of query (ForQuery) does with it; its
// errors are one line and may quote the query.
func (x *Explainer) Explain(w io.Writer, query string) error {
	e, err := ForQuery(query)
	if err != nil {
		return err
	}
	return x.explain[e.Name](w, query)
}

// Describe returns one line per engine, its name and summary, for a
// command's help.
func Describe() string {
	var b strings.Builder
	for _, e := range Engines() {
		fmt.Fprintf(&b, "  %-14s %s\n", e.Name, e.Summary)
	}
	return b.String()
}
