// Package statereader reads the state of a dedupsim checkpoint the way
// Spark's state data source (spark.read.format("statestore")) reads a
// query's: for each dedup operator, its keys decoded into their columns,
// the expiry where the operator has one, and counts. It reads a run
// checkpoint (the folder of `simulate run --checkpoint DIR`, with run.json)
// or a single query checkpoint (a folder with a metadata file), at the last
// batch of the query's commit log, and never writes to either, so that it
// works on a read-only copy: each store is opened through its backend's
// Read (sim/stores: the memory store's files loaded, Pebble opened
// read-only without taking its LOCK file), and a checkpoint a run is
// writing (its run.lock is held) is refused.
package statereader

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/runfolder"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// DefaultLimit is the number of rows listed per operator by default.
const DefaultLimit = 20

// TimeLayout renders event times and expiries: RFC 3339 in UTC with
// microseconds, the precision of Spark's TimestampType.
const TimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// Options choose what Read lists.
type Options struct {
	// Query selects one job of a run checkpoint by its folder name (the
	// query's name, "name@delay" in a sweep); "" reads every job. It must
	// be "" for a query checkpoint.
	Query string
	// Limit is the number of rows listed per operator, the first in key
	// order, in Operator.Rows; negative lists every row, through
	// Operator.EachRow, which reads them as it lists them (Rows is then
	// nil). Counts always cover every row.
	Limit int
}

// State is what Read found in a checkpoint folder.
type State struct {
	// Dir is the folder read.
	Dir string `json:"dir"`
	// Kind is "run" for a run checkpoint, "query" for a query checkpoint.
	Kind string `json:"kind"`
	// Scenario is the scenario's name, for a run checkpoint.
	Scenario string `json:"scenario,omitempty"`
	// Queries holds one entry per query read, in folder name order.
	Queries []Query `json:"queries"`
}

// Query is the state of one query checkpoint.
type Query struct {
	// Name is the job's folder name in a run checkpoint; "" otherwise.
	Name string `json:"name,omitempty"`
	// Dir is the query checkpoint folder; "" for a job that has not run a
	// batch yet.
	Dir string `json:"dir"`
	// Query is the query text, from the checkpoint's metadata.
	Query string `json:"query,omitempty"`
	// Store is the state store backend: "memory" or "pebble".
	Store string `json:"store,omitempty"`
	// Partitions is the number of shuffle partitions the state is split
	// over (state/<op>/<partition>/, a run with a spark: block); absent
	// for one store per operator.
	Partitions int `json:"partitions,omitempty"`
	// LastCommittedBatch is the last batch of the commit log; nil before
	// the first commit.
	LastCommittedBatch *int64 `json:"lastCommittedBatchId"`
	// WatermarkMs is the watermark the next batch evicts with (the last
	// commit's nextBatchWatermarkMs), when the query has a watermark.
	WatermarkMs *int64 `json:"watermarkMs,omitempty"`
	// Watermark is WatermarkMs in RFC 3339.
	Watermark string `json:"watermark,omitempty"`
	// Operators are the dedup operators in chain order.
	Operators []Operator `json:"operators"`
	// Note says why a query has no state to show.
	Note string `json:"note,omitempty"`
}

// Operator is the state of one dedup operator.
type Operator struct {
	// ID is the operator's position among the query's dedup operators,
	// its folder under state/.
	ID int `json:"operatorId"`
	// Name is Spark's operator name: "dedupe" or "dedupeWithinWatermark".
	Name string `json:"name"`
	// KeyColumns are the key's columns, in key order.
	KeyColumns []string `json:"keyColumns"`
	// HasExpiresAt is set when the operator's entries expire:
	// dedupeWithinWatermark always, dedupe when the watermarked event
	// time is one of its keys (its expiry is then that event time).
	HasExpiresAt bool `json:"hasExpiresAt"`
	// StateDir is the operator's state store folder.
	StateDir string `json:"stateDir"`
	// BatchID is the batch whose committed state this is; nil for the
	// empty state before the first batch.
	BatchID *int64 `json:"batchId"`
	// NumRows is the number of keys in the state.
	NumRows int64 `json:"numRows"`
	// Rows are the first keys in key order, at most Options.Limit; nil
	// when Options.Limit is negative: EachRow lists every key then.
	Rows []Row `json:"rows"`
	// Note reports a state at another batch than the commit log's.
	Note string `json:"note,omitempty"`

	// lister lists every key, for a negative Options.Limit.
	lister *lister
}

// Row is one key of an operator's state.
type Row struct {
	// Key is the key's columns, in key order.
	Key Key `json:"key"`
	// ExpiresAt is the entry's expiry in RFC 3339; "" when it has none.
	ExpiresAt string `json:"expiresAt,omitempty"`
	// Partition is the shuffle partition of the key: the store it was
	// read from when the state is partitioned (where Spark's hash puts
	// it, which Read checks), else where Spark's hash puts it among
	// spark.sql.shuffle.partitions' default, DefaultPartitions.
	Partition int `json:"partition"`
}

// DefaultPartitions is spark.sql.shuffle.partitions' default: the
// partitions a key's Partition is given for among in a checkpoint that
// keeps one store per operator.
const DefaultPartitions = 200

// Key is a key's columns, in key order.
type Key []Column

// Column is one decoded key column. Value is a string (a UUID event id,
// or a timestamp in RFC 3339) or an int64.
type Column struct {
	Name  string
	Value any
}

// MarshalJSON renders the key as a JSON object with its columns in key
// order (a map would sort them by name).
func (k Key) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range k {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(c.Name))
		b.WriteByte(':')
		switch v := c.Value.(type) {
		case string:
			b.WriteString(strconv.Quote(v))
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		default:
			return nil, fmt.Errorf("key column %s: unexpected value %T", c.Name, c.Value)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Read reads the checkpoint folder dir: a run checkpoint (run.json) or a
// query checkpoint (metadata). It writes nothing. A folder that is neither,
// a foreign file in it, or a state file that is corrupted is an error
// naming the file.
func Read(dir string, opts Options) (*State, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such folder; want a checkpoint folder (what run --checkpoint DIR writes, or one of its query folders)", fileio.ShowPath(dir))
	case err != nil:
		return nil, fmt.Errorf("%s: %s", fileio.ShowPath(dir), fileio.Reason(err))
	case !fi.IsDir():
		return nil, fmt.Errorf("%s: not a folder", dir)
	}
	_, runErr := os.Stat(filepath.Join(dir, "run.json"))
	_, queryErr := os.Stat(filepath.Join(dir, "metadata"))
	if err := checkNotInUse(dir, runErr == nil, queryErr == nil); err != nil {
		return nil, err
	}
	switch {
	case runErr == nil:
		return readRun(dir, opts)
	case queryErr == nil:
		if opts.Query != "" {
			return nil, fmt.Errorf("%s: a query checkpoint holds one query: --query is for a run checkpoint", dir)
		}
		q, err := readQuery(dir, opts.Limit)
		if err != nil {
			return nil, err
		}
		return &State{Dir: dir, Kind: "query", Queries: []Query{*q}}, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "job.state")); err == nil {
		return nil, fmt.Errorf("%s: a job's folder in a run checkpoint, not a checkpoint itself: read the run checkpoint %s (with --query %s) or one of the job's query.<n> folders",
			dir, filepath.Dir(filepath.Clean(dir)), filepath.Base(filepath.Clean(dir)))
	}
	return nil, fmt.Errorf("%s: not a dedupsim checkpoint: no run.json (a run checkpoint) and no metadata file (a query checkpoint)", dir)
}

// checkNotInUse refuses a run checkpoint (or a query checkpoint inside
// one: <run>/<job>/query.<n>) while a run holds its lock: the run changes
// the files as they are read. It only probes the lock file, never creates
// or changes it, so that reading works on a read-only copy.
func checkNotInUse(dir string, isRun, isQuery bool) error {
	root := ""
	switch {
	case isRun:
		root = dir
	case isQuery:
		up := filepath.Dir(filepath.Dir(filepath.Clean(dir)))
		if _, err := os.Stat(filepath.Join(up, "run.json")); err == nil {
			root = up
		}
	}
	if root == "" {
		return nil
	}
	err := fileio.ProbeLock(filepath.Join(root, runfolder.LockFile))
	var le *fileio.LockedError
	if errors.As(err, &le) {
		holder := "another process"
		if le.PID > 0 {
			holder = fmt.Sprintf("process %d", le.PID)
		}
		return fmt.Errorf("checkpoint %s: in use by %s, a run writing it (it holds %s); read it once the run has ended", root, holder, le.Path)
	}
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", root, err)
	}
	return nil
}

// readRun reads the jobs of a run checkpoint.
func readRun(dir string, opts Options) (*State, error) {
	rc, err := runfolder.Read(dir)
	if err != nil {
		return nil, err
	}
	st := &State{Dir: dir, Kind: "run", Scenario: rc.Scenario, Queries: []Query{}}
	var names []string
	for _, j := range rc.Jobs {
		names = append(names, j.Name)
		if opts.Query != "" && j.Name != opts.Query {
			continue
		}
		if j.QueryDir == "" {
			st.Queries = append(st.Queries, Query{Name: j.Name, Operators: []Operator{}, Note: "no query checkpoint yet: the job has not run a batch"})
			continue
		}
		q, err := readQuery(j.QueryDir, opts.Limit)
		if err != nil {
			return nil, err
		}
		q.Name = j.Name
		st.Queries = append(st.Queries, *q)
	}
	if opts.Query != "" && len(st.Queries) == 0 {
		return nil, fmt.Errorf("%s: no query %q in the run checkpoint (it has %s)", dir, opts.Query, strings.Join(names, ", "))
	}
	return st, nil
}

// readQuery reads one query checkpoint at the last batch of its commit log.
func readQuery(dir string, limit int) (*Query, error) {
	cp, meta, err := microbatch.OpenCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	metaPath := filepath.Join(dir, "metadata")
	plan, err := planOf(meta.Query)
	if err != nil {
		return nil, fmt.Errorf("%s: query %q: %w", metaPath, meta.Query, err)
	}
	be, err := stores.Lookup(meta.Store, "")
	if err != nil {
		return nil, fmt.Errorf("%s: unknown state store %q", metaPath, meta.Store)
	}
	nOps := len(plan.Dedups())
	if meta.Partitions < 0 || meta.Partitions > microbatch.MaxPartitions {
		return nil, fmt.Errorf("%s: %d partitions, want 0 to %d", metaPath, meta.Partitions, microbatch.MaxPartitions)
	}
	if err := checkQueryFolder(dir, nOps, meta.Partitions); err != nil {
		return nil, err
	}
	rec, err := cp.Recover()
	if err != nil {
		return nil, err
	}
	q := &Query{Dir: dir, Query: meta.Query, Store: meta.Store, Partitions: meta.Partitions, Operators: []Operator{}}
	if rec.LastCommitted >= 0 {
		last := rec.LastCommitted
		q.LastCommittedBatch = &last
		if plan.HasWatermark {
			wm := rec.State.Watermark
			q.WatermarkMs = &wm
			q.Watermark = time.UnixMilli(wm).UTC().Format(TimeLayout)
		}
	}
	version := rec.LastCommitted + 1
	for op, idx := range plan.Dedups() {
		o, err := readOperator(cp.StateDir(op), cp.StateDirs(op, meta.Partitions), be, version, plan.Nodes[idx], limit)
		if err != nil {
			return nil, err
		}
		o.ID = op
		q.Operators = append(q.Operators, *o)
	}
	return q, nil
}

// planOf plans a checkpoint's query against the generated rows' schema,
// as the run did.
func planOf(text string) (chain.Plan, error) {
	c, err := chain.Parse(text)
	if err != nil {
		return chain.Plan{}, err
	}
	return chain.PlanFor(c, scenario.Schema())
}

// checkQueryFolder checks that a query checkpoint holds nothing but the
// checkpoint's own files, and state folders only for its nOps operators
// (and, when partitioned, in each of them only its partitions' folders).
func checkQueryFolder(dir string, nOps, partitions int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		switch n := e.Name(); {
		case n == "metadata" || n == microbatch.LogName || fileio.IsCheckpointTemp(n):
		case n == "state" && e.IsDir():
		default:
			return fmt.Errorf("%s: not a file of a dedupsim query checkpoint", filepath.Join(dir, n))
		}
	}
	state := filepath.Join(dir, "state")
	ents, err = os.ReadDir(state)
	if err != nil {
		return err
	}
	// Each operator's store folder, the sibling holding Pebble's
	// checkpoints, and the temporary siblings a killed process may leave
	// (".<op>.creating-*" and the like).
	known := map[string]bool{}
	var hidden []string
	for op := range nOps {
		d := filepath.Join(state, strconv.Itoa(op))
		known[filepath.Base(d)] = true
		for _, b := range stores.Beside(d) {
			known[filepath.Base(b)] = true
		}
		hidden = append(hidden, "."+strconv.Itoa(op)+".")
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() && (known[n] || slices.ContainsFunc(hidden, func(p string) bool { return strings.HasPrefix(n, p) })) {
			continue
		}
		return fmt.Errorf("%s: not the state of one of the query's %d dedup operators", filepath.Join(state, n), nOps)
	}
	if partitions > 0 {
		for op := range nOps {
			if err := checkPartitionFolders(filepath.Join(state, strconv.Itoa(op)), partitions); err != nil {
				return err
			}
		}
	}
	return nil
}

// isEmptyDir reports whether dir is missing or empty.
func isEmptyDir(dir string) (bool, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return len(ents) == 0, nil
}
