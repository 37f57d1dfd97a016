package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profiler writes a CPU profile of one command to a new file, as go
// test's -cpuprofile does: the flag that asks for it is on the root
// command, so every subcommand has it.
type profiler struct {
	path string
	f    *os.File
}

// addFlag registers --cpuprofile on root.
func (p *profiler) addFlag(root *cobra.Command) {
	root.PersistentFlags().StringVar(&p.path, "cpuprofile", "", "write a CPU profile of the command to this new file (read it with go tool pprof)")
}

// start creates the profile's file, refusing one that exists (it was
// not dedupsim's), and starts profiling.
func (p *profiler) start() error {
	if p.path == "" {
		return nil
	}
	f, err := os.OpenFile(p.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("--cpuprofile %s: the file exists; give a new path", p.path)
	}
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(p.path)
		return fmt.Errorf("--cpuprofile %s: %w", p.path, err)
	}
	p.f = f
	return nil
}

// stop ends profiling and closes the file; it is safe to call when
// start was not.
func (p *profiler) stop() error {
	if p.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.f.Close()
	p.f = nil
	if err != nil {
		return fmt.Errorf("--cpuprofile %s: %w", p.path, err)
	}
	return nil
}
