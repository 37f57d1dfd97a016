package microbatch

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// DiscardFrom removes the offsets and commit records of batch batchID and
// every later batch from the log. A run resumed from a snapshot of its own
// taken before batchID (sim/runner) redoes those batches; left in place,
// their records would make a restart recover the abandoned run's batch ids
// and watermark instead of the resumed run's. It also removes the
// temporary files a killed rewrite of the log left, and rewrites nothing
// when there is nothing to remove.
func (c *Checkpoint) DiscardFrom(batchID int64) error {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	if c.log == nil {
		if c.log, err = loadLog(c.dir); err != nil {
			return fmt.Errorf("checkpoint %s: %w", c.dir, err)
		}
	}
	doomed := false
	for _, r := range c.log.recs {
		doomed = doomed || r.batch >= batchID
	}
	if doomed {
		if err := c.log.rewrite(func(r logRecord) bool { return r.batch < batchID }); err != nil {
			return fmt.Errorf("checkpoint %s: %w", c.dir, err)
		}
	}
	for _, e := range ents {
		if fileio.IsCheckpointTemp(e.Name()) {
			// A rewrite interrupted by a kill.
			if err := os.Remove(filepath.Join(c.dir, e.Name())); err != nil {
				return fmt.Errorf("checkpoint %s: %w", c.dir, err)
			}
		}
	}
	return nil
}
