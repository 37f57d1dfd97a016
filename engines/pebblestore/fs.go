package pebblestore

import (
	"strings"

	"github.com/cockroachdb/pebble/vfs"
)

// walNoFsyncFS is the file system the store gives Pebble when Options.Fsync
// is false: WAL files ("*.log") ignore Sync, so that a Commit with
// pebble.Sync still writes its WAL record to the OS before returning (which
// survives a killed process) but does not wait for the disk (which only a
// machine crash would need). Every other file keeps Pebble's syncing.
type walNoFsyncFS struct {
	vfs.FS
}

func isWAL(name string) bool { return strings.HasSuffix(name, ".log") }

// Create creates name, wrapping it if it is a WAL.
func (fs walNoFsyncFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil || !isWAL(name) {
		return f, err
	}
	return walFile{f}, nil
}

// ReuseForWrite recycles an old WAL as newname, wrapping it if it is a WAL.
func (fs walNoFsyncFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname)
	if err != nil || !isWAL(newname) {
		return f, err
	}
	return walFile{f}, nil
}

// walFile is a WAL file whose writes reach the OS but are never fsynced.
type walFile struct {
	vfs.File
}

// Sync does nothing: see walNoFsyncFS.
func (walFile) Sync() error { return nil }

// SyncData does nothing: see walNoFsyncFS.
func (walFile) SyncData() error { return nil }

// SyncTo does nothing: see walNoFsyncFS.
func (walFile) SyncTo(int64) (bool, error) { return false, nil }
