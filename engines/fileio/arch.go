package fileio

import "strings"

// CommitNoSync is Commit without the sync: the file still appears whole
// or not at all, to every reader and after a killed process, but after a
// power loss or an operating-system crash the target may hold the old
// content (or, on a file system that does not order the rename after the
// data, an empty file). It is for the files a run writes at every batch
// (checkpoint log entries, state deltas), which a process crash must not
// tear but which a machine crash may lose, as Spark's own are by default.
func (f *File) CommitNoSync() error { return f.commit(false) }

// WriteFileNoSync replaces path with data as WriteFile does, without the
// sync (see CommitNoSync).
func WriteFileNoSync(path string, data []byte) error {
	return writeFile(path, data, (*File).CommitNoSync)
}

// IsTemp reports whether the base name name is a temporary file of an
// atomic write (".<base>.tmp-<random>", see Create and TempName), which a
// killed process may leave beside its target. Readers of a folder skip
// such names; the next write of the same target does not reuse them.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// IsCheckpointTemp reports whether name is a temporary file of an atomic
// write (IsTemp) or the fixed "<name>.tmp" that dedupsim's checkpoints
// (the query logs, the memory store's files, Pebble's snapshots) used for
// theirs before they wrote through this package, which a checkpoint made
// then may still hold. Checkpoint readers skip both.
func IsCheckpointTemp(name string) bool { return IsTemp(name) || strings.HasSuffix(name, ".tmp") }
