// Package fileio holds the file primitives that every layer of dedupsim
// shares: bounded reads of regular files, atomic replacement of a file or a
// folder, folders and files created under the user's umask, an exclusive
// lock on a folder, the staging and publishing of a folder (Folder), and
// the escaping of what a message echoes (Clean).
//
// It is a leaf: it imports nothing of the module but the leaf
// engines/interval, so the engines, the simulator, metrics and the command
// line may all use it without breaking the one-way import map of
// docs/architecture.md (it sits under engines/ because the state stores
// are its lowest user). Reports reach it through metrics.
//
// Guarantees, stated once:
//
//   - Reads refuse anything that is not a regular file (a FIFO, a device,
//     a folder, or a symlink to one) before opening it, so a FIFO cannot
//     hang a read and /dev/zero cannot fill memory, and stop with an error
//     past the caller's limit.
//   - Writes through [Create] and [WriteFile] appear whole or not at all:
//     the bytes go to a temporary file beside the target, are synced, and
//     the file is renamed over the target. A killed process leaves at most
//     a temporary file named ".<base>.tmp-*", never a half-written target.
//   - New files get mode 0666 and new folders 0777, less the process umask,
//     as with any Unix tool.
package fileio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// Limits on what dedupsim reads, in bytes. A file larger than its limit is
// refused with an error naming the limit; none of them is near the size of
// a real input.
const (
	// MaxScenarioBytes bounds a scenario YAML file.
	MaxScenarioBytes = 1 << 20
	// MaxEmpiricalBytes bounds an empirical delay CSV.
	MaxEmpiricalBytes = 64 << 20
	// MaxTraceBytes bounds a replay trace.
	MaxTraceBytes = 64 << 20
	// MaxSummaryBytes bounds a results folder's summary.json.
	MaxSummaryBytes = 64 << 20
	// MaxStateFileBytes bounds a small state file (a run snapshot, a
	// checkpoint log entry, a marker).
	MaxStateFileBytes = 256 << 20
)

// NotRegularError reports a path that is not a regular file.
type NotRegularError struct {
	Path string
	Mode os.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s)", e.Path, describeMode(e.Mode))
}

// TooLargeError reports a file past the limit of what may be read from it.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s, the limit for this file", e.Path, interval.Size(e.Limit))
}

func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSymlink != 0:
		return "a symlink"
	default:
		return m.Type().String()
	}
}

// CheckRegular returns path's file info (following symlinks) or a
// *NotRegularError when it is not a regular file. It does not open path.
func CheckRegular(path string) (os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return fi, nil
}

// Open opens path for reading after checking that it is a regular file;
// the check is repeated on the open file, so a path swapped for a FIFO in
// between is refused too (the open itself does not block: O_NONBLOCK).
func Open(path string) (*os.File, error) {
	if _, err := CheckRegular(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the regular file path whole, failing with a
// *TooLargeError when it holds more than limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}

// LimitedReader reads at most Limit bytes of a file and then fails with a
// *TooLargeError instead of returning io.EOF early, so a streaming parser
// can never mistake a cut file for a complete one.
type LimitedReader struct {
	R     io.Reader
	Path  string
	Limit int64
	n     int64
}

func (l *LimitedReader) Read(p []byte) (int, error) {
	if l.n > l.Limit {
		return 0, &TooLargeError{Path: l.Path, Limit: l.Limit}
	}
	if rest := l.Limit + 1 - l.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := l.R.Read(p)
	l.n += int64(n)
	if l.n > l.Limit {
		return n - int(l.n-l.Limit), &TooLargeError{Path: l.Path, Limit: l.Limit}
	}
	return n, err
}

// OpenLimited opens the regular file path for streaming reads of at most
// limit bytes. Close the returned file; read through the returned reader.
func OpenLimited(path string, limit int64) (*os.File, io.Reader, error) {
	f, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, &LimitedReader{R: f, Path: path, Limit: limit}, nil
}

func randomSuffix() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// TempName returns a fresh name for a temporary sibling of path:
// ".<base>.<kind>-<random>" in path's folder.
func TempName(path, kind string) string {
	path = filepath.Clean(path)
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+kind+"-"+randomSuffix())
}

// MkdirTemp creates a new folder named pattern plus a random suffix inside
// parent, with mode 0777 less the umask (os.MkdirTemp forces 0700).
func MkdirTemp(parent, pattern string) (string, error) {
	for range 100 {
		dir := filepath.Join(parent, pattern+randomSuffix())
		err := os.Mkdir(dir, 0o777)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: could not create a temporary folder %s*", parent, pattern)
}

// File is a file being written in place of another: its bytes go to a
// temporary sibling until Commit renames it over the target.
type File struct {
	*os.File
	target string
	done   bool
}

// Create starts an atomic write of path. Write to the returned file, then
// Commit it, or Abort to leave path as it was. The file's mode is 0666
// less the umask.
func Create(path string) (*File, error) {
	for range 100 {
		tmp := TempName(path, "tmp")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return &File{File: f, target: path}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: could not create a temporary file beside it", path)
}

// Commit syncs the file, closes it and renames it over the target.
func (f *File) Commit() error { return f.commit(true) }

// commit closes the file and renames it over the target, syncing it
// first when sync is set.
func (f *File) commit(sync bool) error {
	if f.done {
		return fmt.Errorf("%s: already committed or aborted", f.target)
	}
	f.done = true
	tmp := f.Name()
	var err error
	if sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, f.target)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Abort closes and removes the temporary file; the target is untouched.
// It is safe to call after Commit (it does nothing then), so it may be
// deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// WriteFile replaces path with data atomically (see Create).
func WriteFile(path string, data []byte) error {
	return writeFile(path, data, (*File).Commit)
}

// writeFile replaces path with data through Create and commit.
func writeFile(path string, data []byte, commit func(*File) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return commit(f)
}

// SyncDir fsyncs a folder, making the renames and creations inside it
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return SyncClose(d)
}

// SyncClose syncs and closes f, an open file or folder of any file system
// (an *os.File, a Pebble vfs.File), returning the first error.
func SyncClose(f interface {
	Sync() error
	Close() error
}) error {
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// CopyFile copies the regular file from to to, a file that must not
// exist yet (created with mode 0666 under the umask). A copy that fails
// leaves no file at to.
func CopyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Join(err, os.Remove(to))
	}
	return nil
}
