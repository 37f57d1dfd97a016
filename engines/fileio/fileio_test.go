package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link, dir} {
		_, err := ReadFile(p, 1<<20)
		var nr *NotRegularError
		if !errors.As(err, &nr) {
			t.Errorf("ReadFile(%s) = %v, want a NotRegularError", p, err)
		}
	}
}

func TestReadFileLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(p, 5); err != nil || string(got) != "12345" {
		t.Fatalf("at the limit: %q, %v", got, err)
	}
	_, err := ReadFile(p, 4)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "4 B") {
		t.Fatalf("past the limit: %v", err)
	}
	f, r, err := OpenLimited(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 10)
	total := 0
	for {
		n, err := r.Read(buf)
		total += n
		if err != nil {
			if !errors.As(err, &tl) {
				t.Fatalf("streaming past the limit: %v", err)
			}
			break
		}
	}
	if total > 3 {
		t.Fatalf("read %d bytes past a limit of 3", total)
	}
}

func TestWriteFileRespectsUmaskAndLeavesNoTemporary(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(got) != "new" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("got %q mode %v, want new 0600", got, fi.Mode().Perm())
	}
	d, err := MkdirTemp(dir, "x-")
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v under umask 077, want 0700", fi.Mode().Perm())
	}
	syscall.Umask(0o022)
	if err := WriteFile(p, []byte("again")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v under umask 022, want 0644", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("folder holds %d entries, want the file and the temporary folder only", len(entries))
	}
}

func TestAbortLeavesTargetAlone(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("keep"), 0o600)
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	got, _ := os.ReadFile(p)
	if string(got) != "keep" {
		t.Fatalf("target is %q after Abort", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("a temporary file was left behind: %d entries", len(entries))
	}
}

func TestTryLockNamesTheHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	l, err := TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = TryLock(p)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("second lock: %v, want LockedError with pid %d", err, os.Getpid())
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := TryLock(p)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
}

func TestSwapDir(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "results")
	stage := func(content string) string {
		d, err := MkdirTemp(root, ".stage-")
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "f"), []byte(content), 0o644)
		return d
	}
	if err := SwapDir(stage("one"), target); err != nil {
		t.Fatal(err)
	}
	if err := SwapDir(stage("two"), target); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(target, "f"))
	if string(got) != "two" {
		t.Fatalf("target holds %q, want two", got)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Fatalf("root holds %d entries after two swaps, want 1", len(entries))
	}
}
