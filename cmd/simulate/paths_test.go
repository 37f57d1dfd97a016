package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnFilesInsideOutAreRefused runs with a checkpoint or a CPU profile
// inside (or equal to) the results folder, and with the results inside
// the checkpoint: publishing replaced --out whole and lost the checkpoint
// or the profile, or, with --checkpoint cc --out cc, blamed the folder
// the run had just created. Each must be refused up front in one line
// naming both flags, with exit 1 and nothing written.
func TestOwnFilesInsideOutAreRefused(t *testing.T) {
	sc := writeScenario(t, smallScenario)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--out", "o", "--checkpoint", "o/ck"}, "--checkpoint o/ck is inside --out o"},
		{[]string{"--out", "o", "--checkpoint", "./o/../o"}, "--checkpoint ./o/../o and --out o are the same folder"},
		{[]string{"--out", "cc", "--checkpoint", "cc"}, "--checkpoint cc and --out cc are the same folder"},
		{[]string{"--out", "cc/x", "--checkpoint", "cc"}, "--out cc/x is inside --checkpoint cc"},
		{[]string{"--out", "o", "--cpuprofile", "o/cpu.prof"}, "--cpuprofile o/cpu.prof is inside --out o"},
		{[]string{"--cpuprofile", "o/cpu.prof", "--out", "o"}, "--cpuprofile o/cpu.prof is inside --out o"},
		{[]string{"--out", ""}, `--out "": want a results folder`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "o"), 0o755)
			before := listing(t, dir)
			args := append([]string{"run", sc, "--quiet", "--no-report"}, c.args...)
			cmd := exec.Command(simulateBinary(t), args...)
			cmd.Dir = dir
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmd.Run()
			code, errs := cmd.ProcessState.ExitCode(), stderr.String()
			if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit 1 and one line with %q", code, errs, c.want)
			}
			if after := listing(t, dir); after != before {
				t.Fatalf("the folder changed:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}
