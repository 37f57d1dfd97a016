//go:build !dedupsim_testhooks

package main

import "github.com/dedupsim/dedupsim/sim/runner"

// applyTestHooks does nothing: the test hooks (testhooks.go) are compiled
// only with the build tag dedupsim_testhooks, so a release binary can
// neither pause a run nor move its snapshots, whatever its environment.
func applyTestHooks(*runner.Options) error { return nil }
