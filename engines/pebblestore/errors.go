package pebblestore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/vfs"
)

// Errors.
//
// Pebble reports some I/O errors not by returning them but by calling its
// Logger's Fatalf, which must not return: a failed MANIFEST write when a
// DB is opened, or when a flush or an ingestion installs its sstables. Pebble's default logger exits the process;
// a logger that panics leaves a 25-line goroutine trace, or a deadlock
// when a deferred Close waits on the commit pipeline the panic left
// locked. A store turns them into ordinary errors instead:
//
//   - Fatalf on the goroutine of one of the store's own calls (Add, Evict,
//     Commit, Range, Snapshot, Open..., or the store's flush goroutine,
//     whose error the next Commit returns) panics with a private value that
//     the call recovers and returns as a one-line error naming the store's
//     folder. The store is then broken: every later call returns that
//     error, and Close releases the store without asking Pebble to close a
//     DB whose commit pipeline is left locked.
//   - Fatalf on one of Pebble's background goroutines (a flush or a
//     compaction installing its result), where nothing can recover it
//     and Pebble holds its own mutex, prints one line naming the store's
//     folder on stderr and exits the process with status 1, as Pebble's
//     default logger would, minus the trace. Nothing is half written: the
//     store's last Commit and the runner's last job snapshot stand.
//   - Background errors that Pebble retries (a flush or a compaction that
//     failed, a full disk) are recorded, and the next Commit or Snapshot
//     returns the first of them, so that the run stops with one line
//     instead of printing one per retry.

// fatalError is the panic value of a Pebble fatal error raised on the
// goroutine of one of the store's calls.
type fatalError struct{ msg string }

// pkgPrefix is the prefix of the names of this package's functions, as
// the runtime reports them.
var pkgPrefix = func() string {
	name := runtime.FuncForPC(reflect.ValueOf(Open).Pointer()).Name()
	return name[:strings.LastIndex(name, ".")+1]
}()

// onStoreCall reports whether the caller's goroutine is inside one of the
// store's calls (a frame of this package below the logger), rather than
// one of Pebble's background goroutines.
func onStoreCall() bool {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, pkgPrefix) && !strings.Contains(f.Function, "storeLogger") {
			return true
		}
		if !more {
			return false
		}
	}
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "pebble: ")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ; ")), " ")
}

// shared is what a store's Pebble options (its logger and event listener)
// share with the store.
type shared struct {
	dir string
	// bgErr is the first background error Pebble reported.
	bgErr atomic.Pointer[string]
	// exit ends the process after a background fatal error [os.Exit].
	exit func(code int)
	// stderr receives that error's one line [os.Stderr].
	stderr io.Writer
}

func newShared(dir string, opts Options) *shared {
	sh := &shared{dir: dir, exit: os.Exit, stderr: os.Stderr}
	if opts.exit != nil {
		sh.exit = opts.exit
	}
	if opts.stderr != nil {
		sh.stderr = opts.stderr
	}
	return sh
}

// backgroundError returns the first background error, if any.
func (sh *shared) backgroundError() error {
	if p := sh.bgErr.Load(); p != nil {
		return fmt.Errorf("pebblestore %s: background flush or compaction failed: %s", sh.dir, *p)
	}
	return nil
}

// storeLogger is the Logger of a store's Pebble: informational messages
// are dropped (they would interleave with the progress bar), fatal ones
// handled as the package documentation says.
type storeLogger struct{ sh *shared }

// Infof drops the message.
func (storeLogger) Infof(string, ...any) {}

// Fatalf stops the store's call that raised it, or the process when a
// background goroutine raised it; it never returns.
func (l storeLogger) Fatalf(format string, args ...any) {
	msg := oneLine(fmt.Sprintf(format, args...))
	if onStoreCall() {
		panic(fatalError{msg: msg})
	}
	fmt.Fprintf(l.sh.stderr, "pebblestore %s: pebble: %s\n", l.sh.dir, msg)
	l.sh.exit(1)
	// An injected exit (tests) returns: stop this goroutine, never Pebble's
	// caller, which assumes Fatalf does not return.
	runtime.Goexit()
}

// recoverFatal turns a Pebble fatal error raised during the store's call
// op into the call's error and breaks the store. Deferred by every call
// that enters Pebble; other panics go on.
func (s *Store) recoverFatal(op string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	f, ok := r.(fatalError)
	if !ok {
		panic(r)
	}
	s.broken = true
	s.err = fmt.Errorf("pebblestore %s: %s: %s", s.dir, op, f.msg)
	*err = s.err
}

// recoverOpen is recoverFatal for pebble.Open, before there is a store.
func recoverOpen(dir string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	f, ok := r.(fatalError)
	if !ok {
		panic(r)
	}
	*err = fmt.Errorf("pebblestore %s: opening pebble: %s", dir, f.msg)
}

// openError rewrites an error of pebble.Open: a lock held elsewhere says
// which folder is in use; anything else is folded into one line.
func openError(dir string, err error) error {
	var pe *os.PathError
	locked := !errors.As(err, &pe) && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES)) ||
		strings.Contains(err.Error(), "lock held by current process")
	if locked {
		return fmt.Errorf("pebblestore %s: in use: %s is locked by another process, or by another open store in this one; close it or use another folder",
			dir, filepath.Join(dir, "LOCK"))
	}
	return fmt.Errorf("pebblestore %s: opening pebble: %s", dir, oneLine(err.Error()))
}

// readOnlyFS is the file system of a store opened read-only: it refuses
// every change, and its Lock takes no lock file, so that reading a store
// creates and modifies nothing, and works on a read-only mount. The
// caller makes sure that no process writes the store meanwhile (a run
// holds its checkpoint's run.lock, which readers check).
type readOnlyFS struct {
	vfs.FS
}

var errReadOnly = errors.New("the store is opened read-only")

func (readOnlyFS) Create(name string) (vfs.File, error) { return nil, roErr("create", name) }
func (readOnlyFS) Link(oldname, newname string) error   { return roErr("link", newname) }
func (readOnlyFS) OpenReadWrite(name string, _ ...vfs.OpenOption) (vfs.File, error) {
	return nil, roErr("open for writing", name)
}
func (readOnlyFS) Remove(name string) error             { return roErr("remove", name) }
func (readOnlyFS) RemoveAll(name string) error          { return roErr("remove", name) }
func (readOnlyFS) Rename(oldname, newname string) error { return roErr("rename", oldname) }
func (readOnlyFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	return nil, roErr("reuse", oldname)
}
func (readOnlyFS) MkdirAll(dir string, _ os.FileMode) error { return roErr("create", dir) }

// Lock takes no lock: see readOnlyFS.
func (readOnlyFS) Lock(string) (io.Closer, error) { return nopCloser{}, nil }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

func roErr(op, name string) error {
	return &os.PathError{Op: op, Path: name, Err: errReadOnly}
}
