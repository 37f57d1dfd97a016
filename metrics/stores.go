package metrics

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// StoresFile is the name of the store comparison in a results folder.
const StoresFile = "stores.json"

// StoresFormat versions stores.json.
const StoresFormat = "dedupsim-stores/1"

// StoreBench is the content of stores.json: every query of one scenario
// measured on each state store backend.
type StoreBench struct {
	Format   string `json:"format"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Identical is true when both backends produced the same results:
	// every summary field but the wall-clock ones and the store name, and
	// every timeseries row and progress line. bench-stores writes no
	// stores.json otherwise, so a stored false means a hand-edited file.
	Identical bool `json:"identical"`
	// Machine is where the wall-clock numbers were measured.
	Machine StoreMachine `json:"machine"`
	// Runs holds one entry per query and backend: the queries in scenario
	// order, memory before pebble.
	Runs []StoreRun `json:"runs"`
	// Spark, for a scenario with a spark: block, compares Spark's state
	// store providers as modelled instead: one entry per query and
	// provider, the queries in scenario order, hdfs before rocksdb. Runs
	// is then empty.
	Spark []SparkProviderRun `json:"spark,omitempty"`
	// Backends holds each backend's whole runs timed two ways, wall clock
	// and the process's CPU time (user and system, every goroutine of the
	// run: generator, accounting and the store's background work
	// included), in the order Backends lists them; empty in files written
	// before it was measured.
	Backends []StoreBackendTime `json:"backends,omitempty"`
}

// StoreBackendTime is one backend's whole runs of the scenario: the
// medians over the repetitions, and each repetition's value in the order
// they ran. CPU time is less disturbed than wall time by what else the
// machine runs (it still grows with cache and memory contention).
type StoreBackendTime struct {
	Store           string    `json:"store"`
	WallSeconds     float64   `json:"wallSeconds"`
	CPUSeconds      float64   `json:"cpuSeconds"`
	WallSecondsRuns []float64 `json:"wallSecondsRuns"`
	CPUSecondsRuns  []float64 `json:"cpuSecondsRuns"`
}

// SparkProviderRun is one query's modelled Spark cluster with one state
// store provider (sim/spark/sparkmodel): the same scenario, partitions and
// executors for every provider.
type SparkProviderRun struct {
	Query            string `json:"query"`
	Provider         string `json:"provider"`
	Partitions       int64  `json:"partitions"`
	Executors        int64  `json:"executors"`
	CoresPerExecutor int64  `json:"coresPerExecutor"`
	PeakStateRows    int64  `json:"peakStateRows"`
	// ExecutorPeakMemoryBytes is the busiest executor's state memory
	// (JVM heap for hdfs, native for rocksdb), ExecutorPeakDiskBytes its
	// local disk (0 for hdfs).
	ExecutorPeakMemoryBytes int64 `json:"executorPeakMemoryBytes"`
	ExecutorPeakDiskBytes   int64 `json:"executorPeakDiskBytes"`
	// BatchDurationMs, FallingBehindSinceSeconds and
	// MaxProcessingLagSeconds are as in the summary's spark fields; null
	// without a cost block (batches then take no time).
	BatchDurationMs           *DurationPercentiles `json:"batchDurationMs"`
	FallingBehindSinceSeconds *float64             `json:"fallingBehindSinceSeconds"`
	MaxProcessingLagSeconds   *float64             `json:"maxProcessingLagSeconds"`
	// Costs are the cost terms the run used; null without a cost block.
	Costs *SparkCosts `json:"costs,omitempty"`
}

// SparkCosts are the spark: block's cost terms as a run resolved them.
type SparkCosts struct {
	BatchOverheadMs   float64 `json:"batchOverheadMs"`
	RowNs             float64 `json:"rowNs"`
	NewKeyNs          float64 `json:"newKeyNs"`
	ScanKeyNs         float64 `json:"scanKeyNs"`
	RemoveKeyNs       float64 `json:"removeKeyNs"`
	PartitionCommitMs float64 `json:"partitionCommitMs"`
}

// StoreMachine describes the machine of a measurement.
type StoreMachine struct {
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"goVersion"`
}

// StoreRun is one query run on one backend. Byte counts are bytes;
// durations are seconds of wall-clock time.
type StoreRun struct {
	// Query is the job's name: the query's, with "@delay" in a sweep.
	Query string `json:"query"`
	// Store is the backend: "memory" or "pebble".
	Store     string `json:"store"`
	InputRows int64  `json:"inputRows"`
	Batches   int64  `json:"batches"`
	// EngineSeconds is the engine's wall-clock time (micro-batches,
	// checkpoint commits included) minus MeasureSeconds.
	EngineSeconds float64 `json:"engineSeconds"`
	// MeasureSeconds is the time the bench's own measurements took inside
	// the engine's time (forced GCs, Pebble's metrics), subtracted.
	MeasureSeconds float64 `json:"measureSeconds"`
	// CommitSeconds is the part of EngineSeconds spent in the stores'
	// Commit: writing the checkpoint of each batch.
	CommitSeconds float64 `json:"commitSeconds"`
	// EventsPerSecond is InputRows / EngineSeconds; with several
	// repetitions, the median of theirs, EventsPerSecondRuns holding
	// each (in the order they ran) and EngineSeconds the median's.
	EventsPerSecond     float64   `json:"eventsPerSecond"`
	EventsPerSecondRuns []float64 `json:"eventsPerSecondRuns,omitempty"`
	PeakStateRows       int64     `json:"peakStateRows"`
	// ModelPeakBytes is the peak of the per-entry state-bytes model
	// (metrics.EntryBytes), the same for both backends.
	ModelPeakBytes int64 `json:"modelPeakBytes"`
	// GoHeapPeakBytes is the measured growth of the Go heap (memory
	// backend only).
	GoHeapPeakBytes *int64 `json:"goHeapPeakBytes,omitempty"`
	// DiskPeakBytes and MemTablePeakBytes are Pebble's own metrics
	// (pebble backend only).
	DiskPeakBytes     *int64 `json:"diskPeakBytes,omitempty"`
	MemTablePeakBytes *int64 `json:"memTablePeakBytes,omitempty"`
	// CheckpointBytes is what the stores wrote to their checkpoint in
	// all, the log of every batch and the compacted state;
	// CheckpointBytesPerBatch divides it by Batches. CompactBytes is the
	// compacted part: the memory store's full snapshots, Pebble's flushed
	// sstables (Flushes of them); the rest is the log (the memory store's
	// deltas, Pebble's changelogs).
	CheckpointBytes         int64   `json:"checkpointBytes"`
	CheckpointBytesPerBatch float64 `json:"checkpointBytesPerBatch"`
	CompactBytes            *int64  `json:"compactBytes,omitempty"`
	Flushes                 *int64  `json:"flushes,omitempty"`
	// RecoverySeconds is the time to reopen the query's stores from their
	// last checkpoint after the run; RecoveredRows and RecoveredVersion
	// are what the reopened stores held (checked against the run's end).
	// With several repetitions RecoverySeconds is the median and
	// RecoverySecondsRuns holds each.
	RecoverySeconds     float64   `json:"recoverySeconds"`
	RecoverySecondsRuns []float64 `json:"recoverySecondsRuns,omitempty"`
	RecoveredRows       int64     `json:"recoveredRows"`
	RecoveredVersion    int64     `json:"recoveredVersion"`
}

// WriteStoreBench writes sb as dir/stores.json, atomically.
func WriteStoreBench(dir string, sb *StoreBench) error {
	data, err := json.MarshalIndent(sb, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, StoresFile), err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, StoresFile), append(data, '\n')); err != nil {
		return fmt.Errorf("writing %s: %w", StoresFile, err)
	}
	return nil
}

// ReadStoreBench reads dir/stores.json, a regular file of at most
// fileio.MaxSummaryBytes (a FIFO or a link to a device is refused before
// it is opened). A missing file is an error that wraps fs.ErrNotExist.
func ReadStoreBench(dir string) (*StoreBench, error) {
	path := filepath.Join(dir, StoresFile)
	data, err := fileio.ReadFile(path, fileio.MaxSummaryBytes)
	if err != nil {
		return nil, err
	}
	var sb StoreBench
	if err := json.Unmarshal(data, &sb); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if sb.Format != StoresFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", path, sb.Format, StoresFormat)
	}
	if len(sb.Runs) == 0 && len(sb.Spark) == 0 {
		return nil, fmt.Errorf("%s: holds no runs", path)
	}
	return &sb, nil
}
