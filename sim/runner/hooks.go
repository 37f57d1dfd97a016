package runner

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// StoreEvent describes a state store the runner has just opened for a
// job: at the job's start, and again after every restart fault. With a
// spark: block each dedup operator has one store per shuffle partition,
// and the hook sees each of them (Dir is the partition's folder,
// state/<op>/<partition>).
type StoreEvent struct {
	// Job is the job's FileName: the query's name, with "@delay" in a sweep.
	Job string
	// Op is the dedup operator's position in the chain (0-based).
	Op int
	// Backend is the store's backend name: "memory" or "pebble".
	Backend string
	// Dir is the store's checkpoint folder, "" when the job keeps no
	// checkpoint (a run without Options.CheckpointDir and without faults).
	Dir string
	// Version is the committed batch count the store was opened at.
	Version int64
	// Store is the store as opened.
	Store engines.Store
}

// StoreHook lets a caller observe, and wrap, every state store a run
// opens; `simulate bench-stores` uses it to measure each backend's
// checkpoint bytes, disk and memory. It returns the store the query will
// use: ev.Store itself, or a wrapper that forwards every call to it. A
// wrapper must also keep the optional interfaces of ev.Store that the
// runner relies on (engines.Ranger, and Snapshot(version int64) error on
// stores that implement it), since the query only sees the wrapper.
//
// The hook runs on the job's goroutine, inside the job's engine time: a
// run with several workers calls it from several goroutines at once.
type StoreHook func(ev StoreEvent) engines.Store

// wrap returns open with the hook applied to every store it opens for the
// given job. A nil hook leaves open as it is, so a run without a hook pays
// nothing for the feature.
func (h StoreHook) wrap(job, backend string, open StoreOpener) StoreOpener {
	if h == nil {
		return open
	}
	return func(dir string, op int, version int64) (engines.Store, error) {
		s, err := open(dir, op, version)
		if err != nil {
			return nil, err
		}
		w := h(StoreEvent{Job: job, Op: op, Backend: backend, Dir: dir, Version: version, Store: s})
		if w == nil {
			s.Close()
			return nil, fmt.Errorf("store hook returned no store for query %s, operator %d", job, op)
		}
		return w, nil
	}
}

// OpenStore opens the checkpointed store of the given backend in dir at
// version (committed batches), as a restarted query would: the memory
// store replays its newest snapshot and the deltas after it, Pebble
// reopens its database. It is how `simulate bench-stores` times recovery
// from the last checkpoint; the caller closes the store.
func OpenStore(backend, dir string, version int64) (engines.Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("store %s: no checkpoint folder to open", backend)
	}
	// The scratch folder is only for stores without a checkpoint folder,
	// which dir rules out.
	be, err := stores.Lookup(backend, "")
	if err != nil {
		return nil, err
	}
	return be.Open(dir, version)
}
