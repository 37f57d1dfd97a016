package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests that need a real process (SIGKILL, two runs at once) share one
// build of the command, made on first use in a temporary folder that
// TestMain removes, so that `go test` leaves no binary behind. That build
// has the test hooks (hooksTag); TestReleaseBinaryIgnoresTestHooks also
// builds the command as it ships, without them.
var hooked, release build

// hooksTag is the build tag that compiles the test hooks (testhooks.go)
// into the command, and hooksEnv the variable they read.
const (
	hooksTag = "dedupsim_testhooks"
	hooksEnv = "DEDUPSIM_TEST_HOOKS"
)

// build is one build of the command, made once.
type build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// get builds the command with tags on first use and returns its path.
func (b *build) get(t *testing.T, tags string) string {
	t.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "dedupsim-cmd-test-")
		if b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "simulate")
		out, err := exec.Command("go", "build", "-tags", tags, "-o", b.path, ".").CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build -tags %q: %v\n%s", tags, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func TestMain(m *testing.M) {
	// A temporary folder of the tests' own, which must be empty at the
	// end: a run in this process that failed, or whose results were
	// written, leaves nothing behind.
	tmp, err := os.MkdirTemp("", "cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	for _, b := range []*build{&hooked, &release} {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		fmt.Fprintf(os.Stderr, "FAIL: the tests left %s in the temporary folder\n", e.Name())
		code = 1
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

// simulateBinary returns the path of the command built with the test
// hooks.
func simulateBinary(t *testing.T) string {
	t.Helper()
	return hooked.get(t, hooksTag)
}

// releaseBinary returns the path of the command built as it ships,
// without the test hooks.
func releaseBinary(t *testing.T) string {
	t.Helper()
	return release.get(t, "")
}

// proc is a `simulate` process started by a test.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr strings.Builder
	// done is closed once the process has ended and been waited for.
	done chan struct{}
}

// start starts the command built with the test hooks with args; hooks, if
// not "", sets them (hooksEnv) with pauseDir as their pause folder.
func start(t *testing.T, hooks, pauseDir string, args ...string) *proc {
	t.Helper()
	return startBinary(t, simulateBinary(t), hooks, pauseDir, args...)
}

// startBinary is start for the command at bin.
func startBinary(t *testing.T, bin, hooks, pauseDir string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	// A process killed by a test leaves its temporary folder (the CLI's
	// caller sweeps it): in the test's own folder, removed with it.
	p.cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	if hooks != "" {
		p.cmd.Env = append(p.cmd.Env, hooksEnv+"="+hooks+";pause-dir="+pauseDir)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// runProc runs the command to its end and returns its exit code.
func runProc(t *testing.T, hooks, pauseDir string, args ...string) (int, *proc) {
	t.Helper()
	p := start(t, hooks, pauseDir, args...)
	<-p.done
	return p.cmd.ProcessState.ExitCode(), p
}

// waitFiles waits until every file exists, and fails the test if the
// process ends first or a minute passes.
func (p *proc) waitFiles(t *testing.T, files ...string) {
	t.Helper()
	// No deadline of its own: a file that never appears while the process
	// runs ends in the test binary's timeout (a slow, shared machine must
	// not fail the test); a process that ends first fails it at once.
	for {
		missing := ""
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				missing = f
				break
			}
		}
		if missing == "" {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("the process ended (%v) before %s appeared:\n%s", p.cmd.ProcessState, missing, p.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// kill kills the process with SIGKILL and fails the test unless the signal
// is what ended it.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the process ended before it was killed (%v):\n%s", p.cmd.ProcessState, p.stderr.String())
	}
}
