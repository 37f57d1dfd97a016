package statereader

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines/spark/partition"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// A partitioned checkpoint (a run with a spark: block) keeps each dedup
// operator's state in one store per shuffle partition,
// state/<op>/<partition>/, as Spark does. Read lists an operator's keys
// over all its partitions, in key order, each with its partition, and
// checks that Spark's hash of the key (microbatch.HashDecoded, pmod over the
// checkpoint's partition count) names the store it was read from: of the
// listed keys, or of every key when every key is listed (a negative
// Options.Limit), before anything is listed.

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

// keyPartition returns the partition of a listed key, decoded into vals,
// of the generated columns cols: where Spark's hash puts it among the
// checkpoint's partitions, which must be part, the partition it was read
// from, or, for a store per operator (partitions 0), among
// DefaultPartitions.
func keyPartition(cols []int, vals []any, part, partitions int) (int, error) {
	h := microbatch.HashDecoded(cols, vals)
	if partitions == 0 {
		return partition.Of(h, DefaultPartitions), nil
	}
	if p := partition.Of(h, partitions); p != part {
		return 0, fmt.Errorf("holds a key that Spark's hash places in partition %d of %d: not this partition's state", p, partitions)
	}
	return part, nil
}
