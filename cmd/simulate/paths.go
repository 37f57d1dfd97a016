package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dedupsim/dedupsim/sim/plan"
)

// resolved returns path made absolute, with the symbolic links of its
// longest existing prefix resolved, so that two spellings of one place
// compare equal.
func resolved(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest), nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// within reports whether path is dir or inside it.
func within(path, dir string) (bool, error) {
	p, err := resolved(path)
	if err != nil {
		return false, err
	}
	d, err := resolved(dir)
	if err != nil {
		return false, err
	}
	return p == d || strings.HasPrefix(p, d+string(filepath.Separator)), nil
}

// checkOutside refuses, in one line, a path the command writes that lies
// inside the results folder out (given by outFlag): publishing the results
// replaces that folder whole, so whatever the run wrote there is lost. It
// refuses out inside a checkpoint folder too, which would then hold a
// foreign folder. flag names the other path's flag; "" paths are skipped.
func checkOutside(outFlag, out, flag, path string) error {
	if path == "" {
		return nil
	}
	in, err := within(path, out)
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, plan.ShowValue(path), err)
	}
	if in {
		same, _ := within(out, path)
		if same {
			return fmt.Errorf("%s %s and %s %s are the same folder, which publishing the results replaces: give the %s its own folder", flag, plan.ShowValue(path), outFlag, plan.ShowValue(out), strings.TrimPrefix(flag, "--"))
		}
		return fmt.Errorf("%s %s is inside %s %s, which publishing the results replaces whole: it would be lost; put it outside %s", flag, plan.ShowValue(path), outFlag, plan.ShowValue(out), plan.ShowValue(out))
	}
	if flag == "--checkpoint" {
		if in, err = within(out, path); err == nil && in {
			return fmt.Errorf("%s %s is inside %s %s, which holds only the run's checkpoints: put the results outside it", outFlag, plan.ShowValue(out), flag, plan.ShowValue(path))
		}
	}
	return nil
}
