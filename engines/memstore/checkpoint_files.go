package memstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines"
)

// StateFiles lists the files that Open(dir, version) and Load(dir,
// version) rebuild the state of version from: the newest snapshot file at
// or below version (all of it), then the delta logs holding the versions
// after it, each to the end of its last record read (a log grows past the
// version, and Open truncates it there); none for version 0. A resumed
// run records their checksums with each job snapshot and checks them, and
// this list, before it reopens the store, so that an edited file, or a
// snapshot file slipped in that Open would read instead, is refused. It
// writes nothing; a missing delta, a damaged log or a file that is not the
// store's is an error naming it.
func StateFiles(dir string, version int64) ([]engines.StateFile, error) {
	if version == 0 {
		return nil, nil
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("memstore %s: missing: cannot rebuild state version %d", dir, version)
	}
	c := &Checkpointed{dir: dir}
	d, err := c.listVersions()
	if err != nil {
		return nil, err
	}
	base, parts, err := c.statePlan(d, version)
	if err != nil {
		return nil, err
	}
	var out []engines.StateFile
	if base > 0 {
		out = append(out, engines.StateFile{Path: filepath.Join(dir, fmt.Sprintf("%d.snapshot", base)), Len: -1})
	}
	for _, p := range parts {
		out = append(out, engines.StateFile{Path: p.path, Len: p.upto})
	}
	return out, nil
}

// StateFiles implements engines.StateSummer: the files StateFiles(dir,
// version) lists, from what the store wrote and found, without reading
// its folder, with the SHA-256 of the open delta log's bytes, kept as
// they were written (a snapshot file's is left to the caller, which reads
// each once). ok is false when the version's deltas are not all in the
// open log (after a snapshot that failed or was never finished).
func (c *Checkpointed) StateFiles(version int64) ([]engines.StateFile, bool, error) {
	if version != c.version {
		return nil, false, fmt.Errorf("memstore %s: files of version %d asked, the store is at version %d", c.dir, version, c.version)
	}
	if c.bg != nil && c.bg.version <= version {
		// Until it finishes, the snapshot file may or may not be there.
		return nil, false, nil
	}
	base := baseOf(c.snaps, version)
	var out []engines.StateFile
	if base > 0 {
		out = append(out, engines.StateFile{Path: filepath.Join(c.dir, fmt.Sprintf("%d.snapshot", base)), Len: -1})
	}
	if base == version {
		return out, true, nil
	}
	if c.cur == nil || c.cur.first > base+1 || c.cur.last != version {
		return nil, false, nil
	}
	return append(out, engines.StateFile{Path: c.cur.path, Len: c.cur.size, SHA256: c.cur.hexSum()}), true, nil
}

var _ engines.StateSummer = (*Checkpointed)(nil)
