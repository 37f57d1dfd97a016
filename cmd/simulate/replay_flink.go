package main

import (
	"bytes"
	"fmt"
	"io"

	flinksim "github.com/dedupsim/dedupsim/sim/flink"
)

// replayFlink runs a Flink trace (docs/flink.md) through engines/flink and
// prints one JSON line per step; a bad trace prints nothing.
func replayFlink(stdout io.Writer, path string) error {
	t, err := flinksim.LoadFile(path)
	if err != nil {
		return err
	}
	lines, err := flinksim.Run(t)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var buf bytes.Buffer
	if err := flinksim.WriteLines(&buf, lines); err != nil {
		return err
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}
