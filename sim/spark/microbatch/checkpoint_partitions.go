package microbatch

import (
	"path/filepath"
	"strconv"
)

// PartitionDir returns the state folder of shuffle partition part of
// dedup operator op, state/<op>/<part>, Spark's layout
// (StateStoreId.storeCheckpointLocation).
func (c *Checkpoint) PartitionDir(op, part int) string {
	return filepath.Join(c.StateDir(op), strconv.Itoa(part))
}

// StateDirs returns the state folders of dedup operator op for a query
// of the given number of partitions: state/<op> when it is 0, else one
// state/<op>/<part> per partition, in partition order.
func (c *Checkpoint) StateDirs(op, partitions int) []string {
	return StateDirs(c.dir, op, partitions)
}

// StateDirs returns the state folders of dedup operator op of the query
// checkpoint dir, as Checkpoint.StateDirs does.
func StateDirs(dir string, op, partitions int) []string {
	base := filepath.Join(dir, "state", strconv.Itoa(op))
	if partitions == 0 {
		return []string{base}
	}
	out := make([]string, partitions)
	for part := range out {
		out[part] = filepath.Join(base, strconv.Itoa(part))
	}
	return out
}
