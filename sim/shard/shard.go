// Package shard splits a sweep's jobs over machines and merges the parts
// back: `simulate sweep --shard K/N` runs the K-th of N disjoint parts of
// the job list into a shard folder, and `simulate merge` combines the N
// shard folders into the results folder the unsharded sweep writes, byte
// for byte except the wall-clock fields (eventsPerSecond, wallSeconds and
// the events/s the report prints).
//
// The split is round-robin over the job list of runner.Jobs (query order,
// then delay order): job i belongs to shard i mod N, K counting from 0 as
// Kubernetes' JOB_COMPLETION_INDEX does. Every job is in exactly one
// shard; a shard may own no job (N larger than the job count), and it is
// still written and still needed by the merge.
//
// A run splits by key too: `simulate run --shard K/N` runs every job over
// the whole stream but decides and counts only the events whose event_id
// hashes to K (runner.KeyShard), and Merge sums the N parts back into the
// unsplit run's results (keymerge.go).
package shard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// Format versions the shard folder.
//
// Version 2 added each job file's size and SHA-256 and the store a shard
// ran with; a merge refuses a shard of version 1.
const Format = "dedupsim-shard/2"

// ManifestFile is the file that makes a folder a shard folder: it says
// which shard of which sweep the folder holds. A shard folder has no
// summary.json, so nothing takes it for a results folder.
const ManifestFile = "shard.json"

// SplitByKey is the Split of a run split by key (Manifest.Split).
const SplitByKey = "key"

// MaxShards bounds N in --shard K/N.
const MaxShards = 100_000

// Spec is one part of a split: shard K of N, K from 0 to N-1.
type Spec struct {
	K, N int
}

// ParseSpec parses "K/N" (K from 0 to N-1, as Kubernetes'
// JOB_COMPLETION_INDEX counts). A bad value is an error that echoes it.
func ParseSpec(s string) (Spec, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, kerr := strconv.Atoi(strings.TrimSpace(ks))
	n, nerr := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || kerr != nil || nerr != nil || n < 1 || n > MaxShards || k < 0 {
		return Spec{}, fmt.Errorf("%s: want K/N, N shards from 1 to %d and K from 0 to N-1, such as 0/4 ($JOB_COMPLETION_INDEX/4)", fileio.Quote(s), MaxShards)
	}
	if k >= n {
		return Spec{}, fmt.Errorf("%s: K counts from 0, as JOB_COMPLETION_INDEX does: want K from 0 to %d", fileio.Quote(s), n-1)
	}
	return Spec{K: k, N: n}, nil
}

// String renders the spec as K/N.
func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Owns reports whether job number i (its runner.Job Index) belongs to
// this shard: i mod N = K.
func (s Spec) Owns(i int) bool { return i%s.N == s.K }

// Manifest is the content of shard.json.
type Manifest struct {
	Format string `json:"format"`
	// Shard is K, Of is N: the folder holds shard K of N.
	Shard int `json:"shard"`
	Of    int `json:"of"`
	// Version identifies the binary that wrote the shard (Version()).
	Version string `json:"version"`
	// ScenarioSHA256 is the SHA-256 of the scenario as run (summary.json's
	// scenario, compact), which includes the seed and the sweep.
	ScenarioSHA256 string `json:"scenarioSHA256"`
	// InputsSHA256 is the SHA-256 of the values the scenario's empirical
	// distributions read from their files (inputsHash).
	InputsSHA256 string `json:"inputsSHA256"`
	// Seed and Sweep repeat the run's seed and delays, to name what
	// differs when shards do not match.
	Seed  uint64   `json:"seed"`
	Sweep []string `json:"sweep"`
	// Store is the --store the shard ran every query with ("memory" or
	// "pebble"), "" for each query's own: the shards of one sweep share
	// it.
	Store string `json:"store"`
	// Split is how the work was split: "" for a sweep's jobs, round-robin
	// (sweep --shard), SplitByKey for a run split by key (run --shard):
	// every job in every shard, each shard deciding and counting the
	// events whose event_id hashes to K (runner.KeyShard).
	Split string `json:"split,omitempty"`
	// TrafficLastMs is, in a run split by key, the last trigger of the
	// traffic window (ms since the epoch, truncated): the merge recomputes
	// the peaks from the summed samples up to it.
	TrafficLastMs int64 `json:"trafficLastMs,omitempty"`
	// TotalJobs is the job count of the whole sweep.
	TotalJobs int `json:"totalJobs"`
	// Jobs are this shard's jobs, in job order.
	Jobs []JobEntry `json:"jobs"`
	// Summary is the summary.json of this shard's jobs: its queries are
	// the shard's jobs, in job order.
	Summary *metrics.Summary `json:"summary"`
}

// JobEntry is one job of a shard: its place in the sweep's job list and
// the names of its files.
type JobEntry struct {
	Index    int    `json:"index"`
	Name     string `json:"name"`
	FileName string `json:"fileName"`
	// Files are the job's files as the shard wrote them, by their path
	// in the shard folder ("timeseries/NAME.csv"): a merge checks each
	// against its size and SHA-256 before reading it.
	Files map[string]FileSum `json:"files"`
}

// FileSum is a file's size and SHA-256 (hex).
type FileSum struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Version identifies this binary for the merge's check that every shard
// ran the same code: the Go version, the module's version and, when the
// binary was built from a git checkout, its revision (with "+dirty" for
// uncommitted changes).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.GoVersion + " " + bi.Main.Path + "@" + bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v
}

// scenarioHash returns the SHA-256 of the compact form of a scenario's
// JSON.
func scenarioHash(raw json.RawMessage) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	h := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(h[:]), nil
}

func sweepDelays(s *scenario.Scenario) []string {
	out := []string{}
	if s.Sweep != nil {
		for _, d := range s.Sweep.Delay {
			out = append(out, interval.Format(d.Std()))
		}
	}
	return out
}

// marshalManifest renders m as indented JSON with a trailing newline.
func marshalManifest(m *Manifest) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
