// Package stores maps the names of the state store backends to their
// constructors: the one place that knows the backends. The executor (sim)
// is handed the stores it runs on; the runner, the replay, the store bench
// and the state reader get them here.
package stores

import (
	"fmt"
	"os"
	"strings"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/pebblestore"
)

// The backends' names, as scenarios and checkpoints name them.
const (
	// Memory keeps state in memory (memstore), checkpointed like Spark's
	// HDFS-backed state store when it has a folder.
	Memory = "memory"
	// Pebble keeps state in a Pebble database (pebblestore), which stands
	// for RocksDB.
	Pebble = "pebble"
)

// Names lists the backends, in the order they are compared.
func Names() []string { return []string{Memory, Pebble} }

// Backend is one state store backend.
type Backend struct {
	// Name is the backend's name.
	Name string
	// Open opens the store of one dedup operator in its checkpoint folder
	// dir at version, the number of committed batches (0 for a new store),
	// as a query started or restarted from its checkpoint does. dir ""
	// is a store without a checkpoint (Pebble puts it in the scratch
	// folder given to Lookup).
	Open func(dir string, version int64) (engines.Store, error)
	// Resume opens the store in dir at a job snapshot's version from
	// exactly the files Files lists for it, and nothing else: the memory
	// store replays them, Pebble restores the checkpoint its Snapshot
	// saved.
	Resume func(dir string, version int64) (engines.Store, error)
	// Files lists the files the store's state at version is read from,
	// which a resumable run records the checksums of: whole files (Len
	// -1), or the first Len bytes of an append-only log (the memory
	// store's delta logs grow past the version).
	Files func(dir string, version int64) ([]engines.StateFile, error)
	// Read opens the state in dir at version for reading, writing
	// nothing, even on a read-only copy.
	Read func(dir string, version int64) (State, error)
}

// State is a store's state opened for reading.
type State struct {
	// Store lists the keys; close it.
	Store interface {
		engines.Ranger
		Len() int
		Close() error
	}
	// Batch is the last batch whose state this is, when HasBatch. A store
	// that keeps only its latest state (Pebble) may hold a batch other
	// than the one asked for: a process killed between the store's commit
	// and the commit log leaves it a batch ahead.
	Batch    int64
	HasBatch bool
}

// DefaultPebbleMemory is the memory budget of each Pebble store (its
// block cache and its overlay, half each: pebblestore.Options.MemoryBudget)
// when LookupMemory is not given one. It is kept small: a run holds one
// store per query (and sweep point) at once, on every core.
const DefaultPebbleMemory int64 = 32 << 20

// Lookup returns the backend named name, its Pebble stores with
// DefaultPebbleMemory each. scratch is the folder for the stores that need
// one even without a checkpoint (Pebble's); the caller removes it. An
// unknown name is an error listing the known ones.
func Lookup(name, scratch string) (Backend, error) {
	return LookupMemory(name, scratch, 0)
}

// LookupMemory is Lookup with the memory budget, in bytes, of each Pebble
// store the backend opens for writing (0 means DefaultPebbleMemory); the
// memory store ignores it.
func LookupMemory(name, scratch string, memory int64) (Backend, error) {
	if memory < 0 {
		return Backend{}, fmt.Errorf("store %q: memory budget %d: want at least 0", name, memory)
	}
	if memory == 0 {
		memory = DefaultPebbleMemory
	}
	pebbleOptions := pebblestore.Options{MemoryBudget: memory}
	switch name {
	case Memory:
		open := func(dir string, version int64) (engines.Store, error) {
			if dir == "" {
				return memstore.New(), nil
			}
			return memstore.Open(dir, version, memstore.Options{})
		}
		read := func(dir string, version int64) (State, error) {
			s, err := memstore.Load(dir, version)
			if err != nil {
				return State{}, err
			}
			return State{Store: s, Batch: version - 1, HasBatch: version > 0}, nil
		}
		return Backend{Name: name, Open: open, Resume: open, Files: memstore.StateFiles, Read: read}, nil
	case Pebble:
		open := func(dir string, version int64) (engines.Store, error) {
			if dir == "" {
				if err := os.MkdirAll(scratch, 0o777); err != nil {
					return nil, err
				}
				d, err := os.MkdirTemp(scratch, "pebble-")
				if err != nil {
					return nil, err
				}
				if err := os.Remove(d); err != nil {
					return nil, err
				}
				dir = d
			}
			return pebblestore.OpenAt(dir, version, pebbleOptions)
		}
		resume := func(dir string, version int64) (engines.Store, error) {
			return pebblestore.RestoreAt(dir, version, pebbleOptions)
		}
		read := func(dir string, _ int64) (State, error) {
			s, err := pebblestore.OpenReadOnly(dir, pebblestore.Options{CacheSize: 1 << 20})
			if err != nil {
				return State{}, err
			}
			last, ok := s.LastCommitted()
			return State{Store: s, Batch: last, HasBatch: ok}, nil
		}
		return Backend{Name: name, Open: open, Resume: resume, Files: wholeFiles(pebblestore.StateFiles), Read: read}, nil
	}
	return Backend{}, fmt.Errorf("store %q: unknown state store (want %s)", name, strings.Join(Names(), " or "))
}

// Beside returns the folders a backend may keep beside a store's folder
// dir, which belong to the store: Pebble's checkpoints (see
// pebblestore.CheckpointsDir).
func Beside(dir string) []string { return []string{pebblestore.CheckpointsDir(dir)} }

// wholeFiles lists whole files.
func wholeFiles(list func(dir string, version int64) ([]string, error)) func(string, int64) ([]engines.StateFile, error) {
	return func(dir string, version int64) ([]engines.StateFile, error) {
		paths, err := list(dir, version)
		if err != nil {
			return nil, err
		}
		out := make([]engines.StateFile, len(paths))
		for i, p := range paths {
			out[i] = engines.StateFile{Path: p, Len: -1}
		}
		return out, nil
	}
}
