package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// The comparison of Spark's state store providers that bench-stores
// writes for a scenario with a spark: block (metrics.StoreBench.Spark):
// modelled numbers, HDFS beside RocksDB per query, at the block's
// partitions and executors.

// providersTitle is the heading of the section.
const providersTitle = "Spark's state store providers (modelled)"

// providersHeader names the columns of the provider table.
func providersHeader() []string {
	return []string{"query", "provider", "cluster", "peak state rows", "executor state memory", "executor local disk",
		"batch p50", "batch p99", "batch max", "keeps up"}
}

// providersRows returns one row per query and provider, in the file's
// order.
func providersRows(sb *metrics.StoreBench) [][]string {
	var rows [][]string
	for _, r := range sb.Spark {
		mem := interval.Bytes(r.ExecutorPeakMemoryBytes) + " heap"
		if r.Provider == "rocksdb" {
			mem = interval.Bytes(r.ExecutorPeakMemoryBytes) + " native"
		}
		p50, p99, mx, keeps := "-", "-", "-", "no cost block"
		if d := r.BatchDurationMs; d != nil {
			p50, p99, mx = formatMs(d.P50), formatMs(d.P99), formatMs(d.Max)
			keeps = "yes"
			if r.FallingBehindSinceSeconds != nil {
				keeps = "falls behind from " + formatOffset(*r.FallingBehindSinceSeconds)
			}
		}
		rows = append(rows, []string{
			r.Query, r.Provider,
			fmt.Sprintf("%d partitions, %d×%d cores", r.Partitions, r.Executors, r.CoresPerExecutor),
			interval.Count(r.PeakStateRows), mem, interval.Bytes(r.ExecutorPeakDiskBytes),
			p50, p99, mx, keeps,
		})
	}
	return rows
}

// providersIntro is the paragraph above the provider table.
func providersIntro(sb *metrics.StoreBench) string {
	return fmt.Sprintf("`simulate bench-stores` ran scenario %s (seed %d) once with each of Spark's state store providers, "+
		"at its spark: block's partitions and executors, and put each batch in the cluster's terms (sim/spark/sparkmodel, docs/spark-model.md). "+
		"Every number is modelled, the same on any machine: executor state memory is the busiest executor's (JVM heap for hdfs, native memory for rocksdb), "+
		"local disk its RocksDB SST files (hdfs keeps its files on the checkpoint location), batch durations come from each provider's cost terms "+
		"(a term the scenario left at its provider's default takes the other provider's default; a calibrated term is kept for both), "+
		"estimates until calibrated from a real job's progress log. "+
		"The simulator's own Go stores are not compared here: their wall clock says nothing of Spark's.", sb.Scenario, sb.Seed)
}

// providersTable writes the provider table, Markdown or for a terminal.
func providersTable(w io.Writer, sb *metrics.StoreBench, markdown bool) error {
	return alignedTable(w, "provider table", providersHeader(), providersRows(sb), 3, markdown)
}

// renderProviders inserts the provider section into report.md (md) and
// report.html (page) before their charts.
func renderProviders(sb *metrics.StoreBench, md, page *bytes.Buffer) error {
	var sec bytes.Buffer
	fmt.Fprintf(&sec, "## %s\n\n%s\n\n", providersTitle, mdText(providersIntro(sb)))
	if err := providersTable(&sec, sb, true); err != nil {
		return err
	}
	sec.WriteString("\n")
	insertBefore(md, "## Charts\n", sec.Bytes())
	t, err := template.New("providers").Parse(`<h2 id="{{.ID}}">{{.Title}}</h2>
<p>{{.Intro}}</p>
<div class="table-wrap">
<table>
<thead><tr>{{range $i, $h := .Header}}<th class="{{if lt $i 3}}text{{else}}num{{end}}">{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range $i, $c := .}}<td class="{{if lt $i 3}}text{{else}}num{{end}}">{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</div>
`)
	if err != nil {
		return err
	}
	var h bytes.Buffer
	err = t.Execute(&h, map[string]any{
		"ID": slug(providersTitle), "Title": providersTitle,
		"Intro":  strings.ReplaceAll(providersIntro(sb), "`", ""),
		"Header": providersHeader(), "Rows": providersRows(sb),
	})
	if err != nil {
		return err
	}
	insertBefore(page, `<h2 id="charts">Charts</h2>`, h.Bytes())
	return nil
}
