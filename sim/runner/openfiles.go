package runner

import (
	"fmt"
	"runtime"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

// Open files: a Pebble store keeps about eight files open (its folder,
// LOCK, MANIFEST, WAL, an sstable or two, and the folder handles Pebble
// syncs through; BenchmarkPebbleOpenFiles counts them), so a query with a
// spark: block of 10,000 partitions on Pebble keeps some 80,000 open and
// would fail minutes in with "too many open files". The run counts them
// first, and refuses to start past the limit.
const (
	// pebbleFilesPerStore is what one Pebble store is reckoned to keep
	// open, with room for the sstables a flush adds.
	pebbleFilesPerStore = 12
	// baseOpenFiles is what the run keeps open besides its stores: part
	// files, locks, checkpoint logs being written, the standard streams.
	baseOpenFiles = 64
)

// openFilesNeeded returns how many files the run's jobs may keep open at
// once: every job's Pebble stores (one per dedup operator, or one per
// operator and shuffle partition with a spark: block) for the jobs open
// at the same time (all of them over a shared stream, workers of them in
// a resumable run), and the largest job's count.
func openFilesNeeded(s *scenario.Scenario, jobs []Job, workers int, resumable bool) (need, largest int64, job string) {
	parts := int64(1)
	if s.Spark != nil && s.Spark.Partitions > 0 {
		parts = int64(s.Spark.Partitions)
	}
	var per []int64
	for _, j := range jobs {
		n := int64(0)
		if j.Store == scenario.StorePebble {
			n = int64(len(j.Plan.Dedups())) * parts * pebbleFilesPerStore
		}
		per = append(per, n)
		if n > largest {
			largest, job = n, j.FileName
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if resumable && workers < len(per) {
		// The workers largest jobs at once, at most.
		top := append([]int64(nil), per...)
		for i := range workers {
			for k := i + 1; k < len(top); k++ {
				if top[k] > top[i] {
					top[i], top[k] = top[k], top[i]
				}
			}
			need += top[i]
		}
	} else {
		for _, n := range per {
			need += n
		}
	}
	return need + baseOpenFiles, largest, job
}

// checkOpenFiles refuses, in one line and before anything runs, a run
// whose stores need more open files than the process may have, after
// raising the soft limit toward the hard one where that is what it takes.
func checkOpenFiles(s *scenario.Scenario, jobs []Job, workers int, resumable bool) error {
	need, largest, job := openFilesNeeded(s, jobs, workers, resumable)
	if need <= baseOpenFiles {
		return nil
	}
	limit, err := raiseOpenFiles(uint64(need))
	if err != nil || limit == 0 || need <= int64(limit) {
		// No limit to read (not a Unix), or it fits.
		return nil
	}
	parts := 0
	if s.Spark != nil {
		parts = int(s.Spark.Partitions)
	}
	fewer := ""
	if resumable {
		// Only a resumable run opens its jobs a few at a time.
		fewer = ", run fewer jobs at once (--workers)"
	}
	return fmt.Errorf("scenario %s: the Pebble stores would keep about %d files open (query %s alone %d: %d per store, a store per dedup operator and each of %d shuffle partitions), over this process's limit of %d (ulimit -n, which cannot be raised further here): lower spark.partitions, use store: memory%s, or raise the hard limit",
		s.File, need, job, largest, pebbleFilesPerStore, max(parts, 1), limit, fewer)
}
