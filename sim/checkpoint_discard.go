package sim

import (
	"fmt"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"os"
	"path/filepath"
	"strconv"
)

// DiscardFrom removes the offset and commit log entries of batch batchID
// and every later batch. A run resumed from a snapshot of its own taken
// before batchID (sim/runner) redoes those batches; left in place, their
// entries would make a restart recover the abandoned run's batch ids and
// watermark instead of the resumed run's. It checks every name first and
// removes nothing if one is not a log entry.
func (c *Checkpoint) DiscardFrom(batchID int64) error {
	var doomed []string
	for _, kind := range []string{"offsets", "commits"} {
		ents, err := os.ReadDir(filepath.Join(c.dir, kind))
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", c.dir, err)
		}
		for _, e := range ents {
			name := e.Name()
			if fileio.IsCheckpointTemp(name) {
				// A write interrupted by a kill.
				doomed = append(doomed, filepath.Join(c.dir, kind, name))
				continue
			}
			id, err := strconv.ParseInt(name, 10, 64)
			if err != nil {
				return fmt.Errorf("checkpoint %s: %s/%s: not a batch log entry: %w", c.dir, kind, name, ErrNotCheckpoint)
			}
			if id >= batchID {
				doomed = append(doomed, filepath.Join(c.dir, kind, name))
			}
		}
	}
	for _, path := range doomed {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("checkpoint %s: %w", c.dir, err)
		}
	}
	return nil
}
