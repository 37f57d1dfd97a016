package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/compare"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
	"github.com/dedupsim/dedupsim/sim/spark/replay"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// The folders and files of an export.
const (
	batchesDir   = "batches"
	expectedDir  = "expected"
	jobFile      = "job.py"
	readmeFile   = "README.md"
	manifestFile = "export.json"
)

// MaxBatches is the most batch files an export writes: their names have
// nine digits.
const MaxBatches = 1_000_000_000

// Options configure an export.
type Options struct {
	// Format is the format of the batch files; "" is Parquet.
	Format Format
	// maxBatches bounds the batches predicted into one expected file; 0
	// is compare.MaxBatches, the most simulate compare reads (tests set
	// less).
	maxBatches int64
}

// Summary describes a written export.
type Summary struct {
	// Dir is the export folder, as given.
	Dir string `json:"-"`
	// Source describes what was exported.
	Source string `json:"source"`
	// Format is the batch files' format.
	Format Format `json:"format"`
	// Columns are the exported columns, in order.
	Columns []SummaryColumn `json:"columns"`
	// Batches is the number of batch files, Rows the rows they hold.
	Batches int64 `json:"batches"`
	Rows    int64 `json:"rows"`
	// NoDataMicroBatches is spark.sql.streaming.noDataMicroBatches.enabled.
	NoDataMicroBatches bool `json:"noDataMicroBatches"`
	// StateStoreProvider is spark.sql.streaming.stateStore.providerClass:
	// the spark: block's provider, else the one standing for the
	// scenario's store (RocksDB for pebble), else Spark's default (HDFS).
	StateStoreProvider string `json:"stateStoreProvider"`
	// ShufflePartitions is spark.sql.shuffle.partitions: the spark:
	// block's, or 0 to leave Spark's default.
	ShufflePartitions int64 `json:"shufflePartitions,omitempty"`
	// Faults are the stops and starts between batches.
	Faults []Fault `json:"faults"`
	// Queries are the exported queries.
	Queries []QuerySummary `json:"queries"`
	// BatchTimesMs are, for an export with a transformWithState query,
	// the trigger time of each batch file in milliseconds after the
	// first's: job.py runs each batch of such a query with that batch
	// timestamp (see twsNode's file).
	BatchTimesMs []int64 `json:"batchTimesMs,omitempty"`
}

// SummaryColumn is one exported column, with its Spark type.
type SummaryColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// QuerySummary describes one exported query.
type QuerySummary struct {
	Query
	// Names are its Spark query names, one per checkpoint, each with an
	// expected/<name>.jsonl.
	Names []string `json:"names"`
	// Batches is the number of batches predicted, no-data batches
	// included, over every checkpoint.
	Batches int64 `json:"predictedBatches"`
}

// spec is what an export writes, whatever its source.
type spec struct {
	// source describes the input; kind is "scenario" or "trace".
	source, kind string
	// app names the Spark application.
	app string
	// seed identifies the export, for the predicted query ids.
	seed    string
	cols    []Column
	queries []Query
	noData  bool
	// store is the scenario's store (memory or pebble), for the state
	// store provider job.py sets.
	store string
	// provider is the state store provider's class and partitions the
	// shuffle partitions job.py sets (Summary.StateStoreProvider,
	// Summary.ShufflePartitions): the number of state stores of each
	// operator, and the order in which a chain's later operators read their
	// rows, which the prediction follows.
	provider   string
	partitions int64
	// restarts is set when the source may restart its queries.
	restarts bool
}

// Scenario exports the scenario sc, loaded from its file, into the folder
// out (see CheckOut): its generated rows as batch files, job.py, the
// prediction and the README. Nothing is written when it fails: out is
// left as it was.
func Scenario(ctx context.Context, sc *scenario.Scenario, out string, opts Options) (*Summary, error) {
	qs, err := scenarioQueries(sc)
	if err != nil {
		return nil, err
	}
	src, err := newScenarioSource(sc, qs)
	if err != nil {
		return nil, err
	}
	sp := &spec{
		source: fmt.Sprintf("scenario %s (%s, seed %d)", sc.Name, filepath.ToSlash(sc.File), sc.Seed),
		kind:   "scenario", app: "dedupsim export " + sc.Name,
		seed: fmt.Sprintf("scenario %s seed %d", sc.Name, sc.Seed),
		cols: Columns(sc.Workload.IDs.Kind()), queries: qs,
		noData: sc.NoDataMicroBatches, store: sc.Store, restarts: len(restartFaults(sc.Faults)) > 0,
	}
	sp.provider, sp.partitions = scenarioProvider(sc)
	if sp.partitions == 0 {
		sp.partitions = sparkmodel.DefaultPartitions
	}
	return write(ctx, sp, src, out, opts)
}

// Trace exports the replay trace t, read from the file path, into the
// folder out, as Scenario does. A trace Spark cannot be driven through
// with files (a manual clock, columns that differ only in case, a column
// of mixed kinds, an event time outside Spark's years, a query Spark
// fails while it runs) is refused with one line saying why.
func Trace(ctx context.Context, t *replay.Trace, path, out string, opts Options) (*Summary, error) {
	cols, src, err := analyzeTrace(t)
	if err != nil {
		return nil, err
	}
	name := TraceName(path)
	apply, verbatim := pythonChain(t.Chain.Text, t.Chain)
	text := strings.TrimSpace(t.Chain.Text)
	sp := &spec{
		source: fmt.Sprintf("trace %s", filepath.ToSlash(path)),
		kind:   "trace", app: "dedupsim export " + name, seed: "trace " + name,
		cols:    cols,
		queries: []Query{{Name: name, Text: text, Apply: apply, Verbatim: verbatim, Plan: t.Plan}},
		noData:  t.NoDataMicroBatches, store: "memory", provider: hdfsProvider,
		partitions: int64(t.ShufflePartitions),
	}
	for _, f := range src.faults {
		sp.restarts = sp.restarts || f != noFault
	}
	return write(ctx, sp, src, out, opts)
}

// TraceName is the Spark query name of a trace exported from path: the
// file's name without its extension, with characters other than letters,
// digits and "._-" replaced by "-" ("trace" when nothing is left).
func TraceName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var b strings.Builder
	for _, r := range base {
		if r < 0x80 && (isIdent(byte(r)) || r >= '0' && r <= '9' || r == '.' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.TrimLeft(b.String(), ".-")
	if len(name) > 100 {
		name = name[:100]
	}
	if name == "" {
		return "trace"
	}
	return name
}

// write writes the export of sp's batches from src into out, through a
// staging folder.
func write(ctx context.Context, sp *spec, src source, out string, opts Options) (*Summary, error) {
	if opts.Format == "" {
		opts.Format = Parquet
	}
	if opts.maxBatches == 0 {
		opts.maxBatches = compare.MaxBatches
	}
	if _, err := ParseFormat(string(opts.Format)); err != nil {
		return nil, fmt.Errorf("format: %w", err)
	}
	if err := checkTWS(sp); err != nil {
		return nil, err
	}
	tws := hasTWS(sp)
	if tws {
		// TransformWithStateExec accepts no other state store.
		sp.provider = rocksDBProvider
	}
	st, err := exportFolder().Stage(out)
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	for _, d := range []string{batchesDir, expectedDir} {
		if err := os.Mkdir(filepath.Join(st.Dir, d), 0o777); err != nil {
			return nil, err
		}
	}
	scratch := ""
	if sp.restarts {
		if scratch, err = st.ScratchDir(); err != nil {
			return nil, err
		}
	}
	preds := make([]*predictor, len(sp.queries))
	for i := range sp.queries {
		_, once := twsNode(&sp.queries[i])
		preds[i] = &predictor{q: &sp.queries[i], noData: sp.noData, once: once, seed: sp.seed, maxBatches: opts.maxBatches, partitions: int(sp.partitions),
			expected: filepath.Join(st.Dir, expectedDir), scratch: scratch, restarts: sp.restarts}
		if err := preds[i].start(1); err != nil {
			return nil, err
		}
	}
	defer func() {
		for _, p := range preds {
			p.close()
		}
	}()
	sum := &Summary{Dir: out, Source: sp.source, Format: opts.Format, NoDataMicroBatches: sp.noData, Faults: []Fault{},
		StateStoreProvider: sp.provider, ShufflePartitions: sp.partitions}
	w := newWriter(opts.Format, sp.cols)
	for k := int64(0); ; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, f, ts, ok, err := src.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if k >= MaxBatches {
			return nil, fmt.Errorf("more than %d batches: an export names its batch files with nine digits", MaxBatches)
		}
		if f != noFault {
			sum.Faults = append(sum.Faults, Fault{Before: k, Lose: f == loseFault})
		}
		if err := runBatch(w, preds, filepath.Join(st.Dir, batchesDir, batchFileName(k, opts.Format)), b, f, ts); err != nil {
			return nil, err
		}
		sum.Batches++
		sum.Rows += int64(b.Len())
		if tws {
			sum.BatchTimesMs = append(sum.BatchTimesMs, ts)
		}
	}
	if tws {
		for i := len(sum.BatchTimesMs) - 1; i >= 0; i-- {
			sum.BatchTimesMs[i] -= sum.BatchTimesMs[0]
		}
	}
	if sum.Batches == 0 {
		return nil, fmt.Errorf("not exportable: the %s has no rows, so Spark would run no batch", sp.kind)
	}
	for _, p := range preds {
		if err := p.close(); err != nil {
			return nil, err
		}
		qs := QuerySummary{Query: *p.q, Batches: p.batches}
		for g := 1; g <= p.gen; g++ {
			qs.Names = append(qs.Names, generationName(p.q.Name, g))
		}
		sum.Queries = append(sum.Queries, qs)
	}
	for _, c := range sp.cols {
		sum.Columns = append(sum.Columns, SummaryColumn{Name: c.Name, Type: c.Type.Spark(), Nullable: c.Nullable})
	}
	if err := writeFiles(st.Dir, sp, sum); err != nil {
		return nil, err
	}
	if err := st.Publish(); err != nil {
		return nil, err
	}
	return sum, nil
}

// runBatch writes batch file k of b and runs the batch through every
// query, at once: the writer and the queries only read the batch, and
// each writes its own file.
func runBatch(w writer, preds []*predictor, path string, b batch, f faultKind, ts int64) error {
	var g errgroup.Group
	g.Go(func() error {
		if err := w.write(path, b); err != nil {
			return fmt.Errorf("batch file %s: %w", filepath.Base(path), err)
		}
		return nil
	})
	for _, p := range preds {
		g.Go(func() error {
			if err := p.step(b, f, ts); err != nil {
				var qf *microbatch.QueryFailure
				var ref *refusal
				switch {
				case errors.As(err, &ref):
					return err
				case errors.As(err, &qf):
					return fmt.Errorf("not exportable: query %s: %w", p.name, err)
				}
				return fmt.Errorf("query %s: before %s: %w", p.name, filepath.Base(path), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// step runs one batch of the query, after the fault before it.
func (p *predictor) step(b batch, f faultKind, ts int64) error {
	switch f {
	case restartFault:
		if err := p.restart(); err != nil {
			return err
		}
	case loseFault:
		if err := p.start(p.gen + 1); err != nil {
			return err
		}
	}
	return p.batch(b, ts)
}

// batchFileName names batch file k: name order is batch order.
func batchFileName(k int64, f Format) string {
	return fmt.Sprintf("batch-%09d%s", k, f.ext())
}

// writeFiles writes job.py, README.md and export.json into dir.
func writeFiles(dir string, sp *spec, sum *Summary) error {
	job, err := jobPy(sp, sum)
	if err != nil {
		return err
	}
	readme, err := readmeMD(sp, sum)
	if err != nil {
		return err
	}
	manifest, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{jobFile: job, readmeFile: readme, manifestFile: append(manifest, '\n')} {
		if err := fileio.WriteFile(filepath.Join(dir, name), data); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
