package memstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// StateFiles lists the files that Open(dir, version) and Load(dir,
// version) rebuild the state of version from: the newest snapshot file at
// or below version, then the deltas after it up to version, in the order
// they are read; none for version 0. A resumed run records their checksums
// with each job snapshot and checks them, and this list, before it reopens
// the store, so that an edited file, or a snapshot file slipped in that
// Open would read instead, is refused. It writes nothing; a missing delta
// or a file that is not the store's is an error naming it.
func StateFiles(dir string, version int64) ([]string, error) {
	if version == 0 {
		return nil, nil
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("memstore %s: missing: cannot rebuild state version %d", dir, version)
	}
	c := &Checkpointed{dir: dir}
	snaps, deltas, err := c.listVersions()
	if err != nil {
		return nil, err
	}
	base := int64(0)
	for _, s := range snaps {
		if s <= version && s > base {
			base = s
		}
	}
	var out []string
	if base > 0 {
		out = append(out, filepath.Join(dir, fmt.Sprintf("%d.snapshot", base)))
	}
	for u := base + 1; u <= version; u++ {
		if !deltas[u] {
			return nil, fmt.Errorf("memstore %s: %d.delta is missing: cannot rebuild state version %d", dir, u, version)
		}
		out = append(out, filepath.Join(dir, fmt.Sprintf("%d.delta", u)))
	}
	return out, nil
}
