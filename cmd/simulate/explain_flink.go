package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	flinksim "github.com/dedupsim/dedupsim/sim/flink"
)

// flinkExplainFlags are explain's flags for a Flink SQL query.
type flinkExplainFlags struct {
	options      []string
	version      string
	procTime     string
	rowTime      string
	updateBefore bool
}

func (f *flinkExplainFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.options, "option", nil, "Flink SQL only: a Flink option key=value (repeatable), e.g. --option 'table.exec.state.ttl=60 s'")
	cmd.Flags().StringVar(&f.version, "flink-version", flinksim.NewestVersion().String(), "Flink SQL only: the Flink version (2.0, 2.1, 2.2, 2.3)")
	cmd.Flags().StringVar(&f.procTime, "proctime", flinksim.DefaultTimeAttributes.ProcTime, "Flink SQL only: the PROCTIME() column")
	cmd.Flags().StringVar(&f.rowTime, "rowtime", flinksim.DefaultTimeAttributes.RowTime, "Flink SQL only: the event-time column with a WATERMARK")
	cmd.Flags().BoolVar(&f.updateBefore, "update-before", false, "Flink SQL only: the sink needs -U rows (a retract sink)")
}

// explainFlink explains a Flink SQL query (docs/flink.md).
func explainFlink(stdout io.Writer, query string, f *flinkExplainFlags) error {
	v, err := flinksim.ParseVersion(f.version)
	if err != nil {
		return fmt.Errorf("--flink-version: %w", err)
	}
	opts := map[string]string{}
	for _, o := range f.options {
		k, val, ok := strings.Cut(o, "=")
		if !ok {
			return fmt.Errorf("--option %q: want key=value", o)
		}
		opts[strings.TrimSpace(k)] = val
	}
	text, err := flinksim.Explain(query, flinksim.TimeAttributes{ProcTime: f.procTime, RowTime: f.rowTime}, opts, v, f.updateBefore)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, text)
	return err
}
