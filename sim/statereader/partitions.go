package statereader

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines/spark/partition"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// A partitioned checkpoint (a run with a spark: block) keeps each dedup
// operator's state in one store per shuffle partition,
// state/<op>/<partition>/, as Spark does. Read lists an operator's keys
// over all its partitions, in key order, each with its partition, and
// checks that Spark's hash of the key (sim.HashDecoded, pmod over the
// checkpoint's partition count) names the store it was read from.

// checkPartitionFolders checks that an operator's state folder of a
// partitioned checkpoint holds only its partitions' folders (with the
// folders a backend keeps beside each, and a killed process's temporary
// siblings).
func checkPartitionFolders(opDir string, partitions int) error {
	ents, err := os.ReadDir(opDir)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	var hidden []string
	for p := range partitions {
		name := strconv.Itoa(p)
		known[name] = true
		for _, b := range stores.Beside(filepath.Join(opDir, name)) {
			known[filepath.Base(b)] = true
		}
		hidden = append(hidden, "."+name+".")
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() && (known[n] || slices.ContainsFunc(hidden, func(p string) bool { return strings.HasPrefix(n, p) })) {
			continue
		}
		return fmt.Errorf("%s: not the state of one of the operator's %d partitions", filepath.Join(opDir, n), partitions)
	}
	return nil
}

// readPartitions reads the state of one dedup operator split over the
// partition folders dirs, at version: the keys of every partition, the
// first limit of them in key order.
func readPartitions(dir string, dirs []string, be stores.Backend, version int64, node chain.Node, limit int) (*Operator, error) {
	o := &Operator{
		Name:         node.Operator,
		KeyColumns:   node.KeyNames,
		HasExpiresAt: node.Op.Kind == chain.DropDuplicatesWithinWatermark || node.EventTimeInKeys && node.WatermarkReaches,
		StateDir:     dir,
		Rows:         []Row{},
	}
	if version > 0 {
		b := version - 1
		o.BatchID = &b
	}
	var srcs []source
	defer func() {
		for _, s := range srcs {
			s.store.Close()
		}
	}()
	var notes []string
	for p, d := range dirs {
		empty, err := isEmptyDir(d)
		if err != nil {
			return nil, err
		}
		if empty {
			if version > 0 {
				return nil, fmt.Errorf("%s: missing: the commit log ends at batch %d", d, version-1)
			}
			continue
		}
		st, err := be.Read(d, version)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, source{dir: d, store: st.Store, part: p})
		// A store that keeps only its latest state (Pebble) may be a
		// batch ahead of the commit log: what it holds is what is shown.
		if st.HasBatch != (version > 0) || st.HasBatch && st.Batch != version-1 {
			have := "no batch"
			if st.HasBatch {
				have = fmt.Sprintf("batch %d", st.Batch)
			}
			notes = append(notes, fmt.Sprintf("partition %d holds the state of %s", p, have))
		}
		o.NumRows += int64(st.Store.Len())
	}
	if len(notes) > 0 {
		o.Note = fmt.Sprintf("%s; the commit log ends at batch %d", strings.Join(notes, ", "), version-1)
	}
	rows, err := listRows(srcs, len(dirs), node, o.HasExpiresAt, limit)
	if err != nil {
		return nil, err
	}
	o.Rows = rows
	return o, nil
}

// keyPartition returns the partition of a listed key of the generated
// columns cols: where Spark's hash puts it among the checkpoint's
// partitions, which must be the partition it was read from, or, for a
// store per operator (partitions 0), among DefaultPartitions.
func keyPartition(l generators.KeyLayout, cols []int, e entry, partitions int, dir string) (int, error) {
	h := sim.HashDecoded(cols, l.Decode(e.key))
	if partitions == 0 {
		return partition.Of(h, DefaultPartitions), nil
	}
	if p := partition.Of(h, partitions); p != e.part {
		return 0, fmt.Errorf("%s: holds a key that Spark's hash places in partition %d of %d: not this partition's state", dir, p, partitions)
	}
	return e.part, nil
}
