package main

import (
	"io"

	"github.com/dedupsim/dedupsim/sim/beam"
	"github.com/dedupsim/dedupsim/sim/kstreams"
)

// replayOtherEngine runs a trace whose "engine" is kafka-streams or beam
// (docs/kafka-streams.md, docs/beam.md) and reports whether it did; any
// other file is left to Spark's replay.
func replayOtherEngine(path string, stdout io.Writer) (bool, error) {
	for _, replay := range []func(string, io.Writer) (bool, error){kstreams.Replay, beam.Replay} {
		if done, err := replay(path, stdout); done || err != nil {
			return true, err
		}
	}
	return false, nil
}

// explainOtherEngine explains a Kafka Streams or Beam query (a JSON object
// naming its engine) and reports whether it did; any other query is left to
// Spark's explain.
func explainOtherEngine(query string, stdout io.Writer) (bool, error) {
	for _, explain := range []func(io.Writer, string) (bool, error){kstreams.Explain, beam.Explain} {
		if done, err := explain(stdout, query); done || err != nil {
			return true, err
		}
	}
	return false, nil
}
