package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runfolder"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// treeState describes every entry under dir, without following links: its
// type and mode, and for a file its size, modification time and content
// hash. Two equal states mean nothing was created, removed, written or
// touched.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%v %d", fi.Mode(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			desc += fmt.Sprintf(" %d %x", len(data), sum[:8])
		} else if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			desc += " -> " + target
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails the test for every entry that differs between two states.
func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if w, ok := after[k]; !ok {
			t.Errorf("%s: %s vanished", what, k)
		} else if w != v {
			t.Errorf("%s: %s changed: %s, then %s", what, k, v, w)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: %s appeared", what, k)
		}
	}
}

// interruptAt runs sc with a checkpoint in dir on one worker, snapshots
// after the batches snapAfter lists, and cancels the run once job stopJob
// has run batch stopBatch: the jobs before it in job order have finished,
// the ones after it have not started.
func interruptAt(t *testing.T, sc *scenario.Scenario, dir, store string, snapAfter []int64, stopJob string, stopBatch int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Run(ctx, sc, Options{
		Workers:       1,
		CheckpointDir: dir,
		Store:         store,
		hooks: testHooks{SnapshotAt: func(_ string, next int64) bool { return slices.Contains(snapAfter, next-1) },
			AfterBatch: func(job string, next int64, done bool) {
				if job == stopJob && next-1 == stopBatch {
					cancel()
				}
			},
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run interrupted at %s batch %d: %v, want it canceled", stopJob, stopBatch, err)
	}
}

// copyTree copies the checkpoint src to a new folder and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// editFile applies edit to the content of the file at path.
func editFile(path string, edit func([]byte) []byte) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, edit(data), 0o644)
}

// flipDigit changes the first digit at or after offset off in data, keeping
// its length: an edit that no length check sees.
func flipDigit(data []byte, off int) []byte {
	out := bytes.Clone(data)
	for i := off; i < len(out); i++ {
		if out[i] >= '0' && out[i] <= '8' {
			out[i]++
			return out
		}
	}
	panic("no digit to flip")
}

// withCRC replaces a memory store file's body, keeping its magic, and
// writes a valid CRC trailer: a file that passes the store's own check.
func withCRC(body []byte) []byte {
	out := bytes.Clone(body)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(body))
}

// editLogRecord changes one digit of the JSON of the newest record of
// the kind ('o' offsets, 'c' commit) and batch in a query checkpoint's
// log (sim/spark/microbatch/checkpoint_log.go: length, CRC-32C, kind, batch id, JSON) and
// writes a valid CRC for it: a well-formed log of another run.
func editLogRecord(log []byte, kind byte, batch int64) []byte {
	out := bytes.Clone(log)
	at := -1
	for off := 8; off+8 <= len(out); {
		n := int(binary.BigEndian.Uint32(out[off:]))
		body := out[off+8 : off+8+n]
		if body[0] == kind && int64(binary.BigEndian.Uint64(body[1:])) == batch {
			at = off
		}
		off += 8 + n
	}
	if at < 0 {
		panic("no such record")
	}
	n := int(binary.BigEndian.Uint32(out[at:]))
	body := out[at+8 : at+8+n]
	copy(body[9:], flipDigit(body[9:], 0))
	binary.BigEndian.PutUint32(out[at+4:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// editDeltaRecord changes one byte of the last key of the delta of
// version in a memory store's delta log (engines/memstore/deltalog.go: a
// 16-byte header, then records of length, CRC-32C, version and changes)
// and writes a valid CRC for it: a well-formed log of another run.
func editDeltaRecord(log []byte, version int64) []byte {
	out := bytes.Clone(log)
	for off := 16; off+8 <= len(out); {
		n := int(binary.BigEndian.Uint32(out[off:]))
		body := out[off+8 : off+8+n]
		if int64(binary.BigEndian.Uint64(body)) == version {
			copy(body, editKey(body))
			binary.BigEndian.PutUint32(out[off+4:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
			return out
		}
		off += 8 + n
	}
	panic("no such record")
}

// editKey changes one byte of the last key of a memory store file's
// records (36-byte UUID keys, then a varint expiry): a well-formed file of
// another state.
func editKey(body []byte) []byte {
	out := bytes.Clone(body)
	i := len(out) - 15
	if out[i] == 'a' {
		out[i] = 'b'
	} else {
		out[i] = 'a'
	}
	return out
}

// TestEditedCheckpointIsRefusedUnchanged edits an interrupted run's
// checkpoint in one place at a time, in ways that keep every file well
// formed (valid JSON, valid CRCs, the same lengths) or that plant a
// symlink or a file the store would read instead: the resume fails with
// one line naming the file, and the folder is left exactly as it was
// (content, listing and modification times), and so is anything a link
// points to.
func TestEditedCheckpointIsRefusedUnchanged(t *testing.T) {
	sc := load(t, faulty)
	// Job "within" finished; job "unbounded" snapshotted after batches 5
	// and 11 (version 12: 10.snapshot and the deltas 11 and 12 in
	// 11.log) and was
	// stopped after batch 13, past the restart at 100 s.
	bases := map[string]string{}
	for _, store := range []string{"memory", "pebble"} {
		bases[store] = filepath.Join(t.TempDir(), store)
		interruptAt(t, sc, bases[store], store, []int64{5, 11}, "unbounded", 13)
	}
	outside := filepath.Join(t.TempDir(), "outside.csv")
	type damage struct {
		name, store, file string
		// want is the file the error must name ("" for file).
		want string
		do   func(path string) error
	}
	u := "unbounded/"
	cases := []damage{
		{"job.state edited, still valid JSON", "memory", u + "job.state", "", func(p string) error {
			return editFile(p, func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"nextFault":1`), []byte(`"nextFault":0`), 1)
			})
		}},
		{"timeseries part edited, same length", "memory", u + runfolder.TimeseriesPart, "", func(p string) error {
			return editFile(p, func(b []byte) []byte { return flipDigit(b, 20) })
		}},
		{"progress part edited, same length", "memory", u + runfolder.ProgressPart, "", func(p string) error {
			return editFile(p, func(b []byte) []byte { return flipDigit(b, 30) })
		}},
		{"finished job's part edited", "memory", "within/" + runfolder.TimeseriesPart, "", func(p string) error {
			return editFile(p, func(b []byte) []byte { return flipDigit(b, len(b)/2) })
		}},
		{"done.json edited", "memory", "within/done.json", "", func(p string) error {
			return editFile(p, func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"restarts":2`), []byte(`"restarts":3`), 1)
			})
		}},
		{"delta rewritten with a valid CRC", "memory", u + "query.0/state/0/11.log", "", func(p string) error {
			return editFile(p, func(b []byte) []byte { return editDeltaRecord(b, 12) })
		}},
		{"snapshot rewritten with a valid CRC", "memory", u + "query.0/state/0/10.snapshot", "", func(p string) error {
			return editFile(p, func(b []byte) []byte { return withCRC(editKey(b[:len(b)-4])) })
		}},
		{"snapshot file planted", "memory", u + "query.0/state/0/11.snapshot", "", func(p string) error {
			// A valid, empty snapshot the store would rebuild version 12
			// from, instead of 10.snapshot and two deltas.
			return os.WriteFile(p, withCRC([]byte("DDSMSNP1")), 0o644)
		}},
		{"offsets record edited, with a valid CRC", "memory", u + "query.0/log", "", func(p string) error {
			return editFile(p, func(b []byte) []byte { return editLogRecord(b, 'o', 11) })
		}},
		{"commit record edited, with a valid CRC", "memory", u + "query.0/log", "", func(p string) error {
			return editFile(p, func(b []byte) []byte { return editLogRecord(b, 'c', 11) })
		}},
		{"part file is a symlink", "memory", u + runfolder.TimeseriesPart, u + runfolder.TimeseriesPart, func(p string) error {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(outside, data, 0o644); err != nil {
				return err
			}
			os.Remove(p)
			return os.Symlink(outside, p)
		}},
		{"lock file is a symlink", "memory", "run.lock", "run.lock", func(p string) error {
			if err := os.WriteFile(outside, []byte("keep me\n"), 0o644); err != nil {
				return err
			}
			os.Remove(p)
			return os.Symlink(outside, p)
		}},
		{"job folder is a symlink", "memory", "within", "within", func(p string) error {
			moved := filepath.Join(filepath.Dir(outside), "within-elsewhere")
			if err := os.Rename(p, moved); err != nil {
				return err
			}
			return os.Symlink(moved, p)
		}},
		{"store folder is a symlink", "memory", u + "query.0/state/0", u + "query.0/state/0", func(p string) error {
			// A resume would write the store's new files there.
			moved := filepath.Join(filepath.Dir(outside), "store-elsewhere")
			if err := os.Rename(p, moved); err != nil {
				return err
			}
			return os.Symlink(moved, p)
		}},
		{"batch log is a symlink", "memory", u + "query.0/log", u + "query.0/log", func(p string) error {
			// A resume would rewrite the log there.
			moved := filepath.Join(filepath.Dir(outside), "log-elsewhere")
			if err := os.Rename(p, moved); err != nil {
				return err
			}
			return os.Symlink(moved, p)
		}},
		{"named pipe in a query checkpoint", "memory", u + "query.0/state/fifo", u + "query.0/state/fifo", func(p string) error {
			return syscall.Mkfifo(p, 0o644)
		}},
		{"pebble checkpoint sstable edited", "pebble", u + "query.0/state/0.checkpoints/12", "", nil},
		{"file planted in a pebble checkpoint", "pebble", u + "query.0/state/0.checkpoints/12/000099.sst", "", func(p string) error {
			return os.WriteFile(p, []byte("not a table"), 0o644)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyTree(t, bases[c.store])
			path := filepath.Join(dir, c.file)
			want := path
			if c.want != "" {
				want = filepath.Join(dir, c.want)
			}
			do := c.do
			if do == nil {
				// Flip one byte in the middle of the checkpoint's first
				// sstable (the restart flushed the reopened store's WAL
				// into one).
				ssts, _ := filepath.Glob(filepath.Join(path, "*.sst"))
				if len(ssts) == 0 {
					t.Fatalf("no sstable in %s", path)
				}
				want = ssts[0]
				do = func(string) error {
					return editFile(ssts[0], func(b []byte) []byte {
						b = bytes.Clone(b)
						b[len(b)/2] ^= 1
						return b
					})
				}
			}
			if err := do(path); err != nil {
				t.Fatal(err)
			}
			before := treeState(t, dir)
			outBefore := treeState(t, filepath.Dir(outside))
			res, err := Run(context.Background(), sc, Options{Workers: 2, CheckpointDir: dir, Store: c.store})
			if err == nil {
				res.Close()
				t.Fatal("the resume ran")
			}
			if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want one line naming %s, got %v", want, err)
			}
			t.Log(err)
			sameTree(t, "checkpoint", before, treeState(t, dir))
			sameTree(t, "outside the checkpoint", outBefore, treeState(t, filepath.Dir(outside)))
		})
	}
	// The untouched checkpoints resume, to the uninterrupted results.
	want := run(t, sc, 2)
	for store, dir := range bases {
		got, err := runOpts(t, sc, Options{Workers: 2, CheckpointDir: copyTree(t, dir), Store: store})
		if err != nil {
			t.Fatalf("%s: %v", store, err)
		}
		sameResults(t, want, got)
	}
}

// empiricalScenario draws arrival delays from delays.csv beside it.
const empiricalScenario = `
name: empirical
seed: 9
duration: 3m
trigger: 10s
workload:
  rate: 100/s
  arrivalDelay: {dist: empirical, file: delays.csv}
  retries:
    probability: 0.2
    delay: {dist: uniform, min: 1s, max: 30s}
    timestamp: same
queries:
  - name: within
    query: withWatermark("event_time", "30 seconds").dropDuplicatesWithinWatermark(["event_id"])
`

// TestResumeRefusesChangedInputs interrupts a run and resumes it with an
// input changed: an empirical CSV with the same number of lines, the seed,
// the store. Each is refused with one line saying which input differs, and
// the folder is left as it was.
func TestResumeRefusesChangedInputs(t *testing.T) {
	src := t.TempDir()
	yaml, csv := filepath.Join(src, "s.yaml"), filepath.Join(src, "delays.csv")
	os.WriteFile(yaml, []byte(empiricalScenario), 0o644)
	os.WriteFile(csv, []byte("1s\n2s\n3s\n5s\n8s\n"), 0o644)
	sc, err := scenario.Load(yaml)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "ck")
	interruptAt(t, sc, base, "memory", []int64{4}, "within", 6)

	os.WriteFile(csv, []byte("1s\n2s\n3s\n5s\n9s\n"), 0o644)
	changedCSV, err := scenario.Load(yaml)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(csv, []byte("1s\n2s\n3s\n5s\n8s\n"), 0o644)
	seed, _ := scenario.Load(yaml)
	seed.Seed++
	for _, c := range []struct {
		name  string
		sc    *scenario.Scenario
		store string
		want  string
	}{
		{"empirical values", changedCSV, "memory", "workload.arrivalDelay (empirical file delays.csv)"},
		{"seed", seed, "memory", "the scenario differs"},
		{"store", sc, "pebble", "another state store"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyTree(t, base)
			before := treeState(t, dir)
			res, err := Run(context.Background(), c.sc, Options{CheckpointDir: dir, Store: c.store})
			if err == nil {
				res.Close()
				t.Fatal("the resume ran")
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, dir) || strings.Contains(msg, "\n") {
				t.Fatalf("want one line naming %s and %s, got %v", dir, c.want, err)
			}
			sameTree(t, "checkpoint", before, treeState(t, dir))
		})
	}
}

// badClock makes every thousandth row's clock run 20 s ahead: some
// bad-clock markers before any snapshot, some after.
var badClock = strings.Replace(small, "    timestamp: restamp\n", `    timestamp: restamp
  futureTimestamps:
    probability: 1e-4
    skew: {dist: constant, value: 20s}
`, 1)

// TestBadClockMarkersSurviveResume interrupts a run with bad-clock rows
// after a snapshot, and after more bad-clock rows than the markers keep:
// the resumed run's markers are the uninterrupted run's.
func TestBadClockMarkersSurviveResume(t *testing.T) {
	sc := load(t, badClock)
	want := run(t, sc, 2)
	n := 0
	for _, m := range want.Summary.Markers {
		if m.Kind == "bad-clock" {
			n++
		}
	}
	if n == 0 {
		t.Fatal("the scenario has no bad-clock row")
	}
	for _, stop := range []int64{8, 20} {
		t.Run(fmt.Sprintf("stopped after batch %d", stop), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ck")
			// The first job collects the markers: stop it.
			interruptAt(t, sc, dir, "memory", []int64{stop - 2}, want.Jobs[0].FileName, stop)
			got, err := runOpts(t, sc, Options{Workers: 2, CheckpointDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if a, b := js(want.Summary.Markers), js(got.Summary.Markers); a != b {
				t.Fatalf("markers after resume:\n%s\nwant\n%s", b, a)
			}
		})
	}
	// A finished job's markers come from its done.json.
	t.Run("first job finished", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ck")
		interruptAt(t, sc, dir, "memory", nil, want.Jobs[1].FileName, 2)
		got, err := runOpts(t, sc, Options{Workers: 2, CheckpointDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := js(want.Summary.Markers), js(got.Summary.Markers); a != b {
			t.Fatalf("markers after resume:\n%s\nwant\n%s", b, a)
		}
	})
}

// TestSecondRunOnACheckpointIsRefused starts a run on a checkpoint folder,
// holds it after a batch, and starts a second run on the same folder: the
// second fails at once with one line naming the folder and this process,
// and changes nothing; the first then finishes.
func TestSecondRunOnACheckpointIsRefused(t *testing.T) {
	sc := load(t, faulty)
	dir := filepath.Join(t.TempDir(), "ck")
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		res, err := Run(context.Background(), sc, Options{
			Workers:       1,
			CheckpointDir: dir,
			hooks: testHooks{SnapshotAt: func(_ string, next int64) bool { return next == 3 },
				AfterBatch: func(job string, next int64, _ bool) {
					if next == 3 && job == "within" {
						once.Do(func() {
							close(held)
							<-release
						})
					}
				},
			},
		})
		if err == nil {
			err = res.Close()
		}
		done <- err
	}()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("the first run ended before it was held: %v", err)
	}
	before := treeState(t, dir)
	res, err := Run(context.Background(), sc, Options{CheckpointDir: dir})
	if err == nil {
		res.Close()
		t.Fatal("a second run used a checkpoint folder in use")
	}
	want := fmt.Sprintf("checkpoint %s: in use by process %d", dir, os.Getpid())
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("second run: %v, want one line starting %q", err, want)
	}
	sameTree(t, "checkpoint in use", before, treeState(t, dir))
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the first run failed: %v", err)
	}
}

// TestTemporariesStayInScratchDir runs scenarios that need temporary
// folders (Pebble without a checkpoint, a restart without one) with a
// scratch folder: nothing appears in the system's temporary folder, the
// run's folder in the scratch folder holds them while it runs, only the
// part files once it returned, and nothing once the results are closed or
// the run failed.
func TestTemporariesStayInScratchDir(t *testing.T) {
	tmp, root := t.TempDir(), t.TempDir()
	// From here on, t.TempDir would make its folders in tmp too.
	t.Setenv("TMPDIR", tmp)
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"pebble without a checkpoint", small, "/pebble/pebble-"},
		{"restarts without a checkpoint", faulty, "/checkpoints/within/query.0/state/0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := load(t, c.yaml)
			scratch := filepath.Join(root, c.name)
			var during []string
			res, err := Run(context.Background(), sc, Options{
				Workers:    1,
				Store:      scenario.StorePebble,
				ScratchDir: scratch,
				hooks: testHooks{AfterBatch: func(job string, next int64, _ bool) {
					if job == sc.Queries[0].Name && next == 12 {
						during = listTree(t, scratch)
						if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
							t.Errorf("the run wrote to the system's temporary folder: %v", ents)
						}
					}
				},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(during, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("the scratch folder held no %s during the run: %v", c.want, during)
			}
			after := listTree(t, scratch)
			for _, p := range after {
				if strings.Count(p, "/") > 1 && !strings.Contains(p, "/parts") {
					t.Errorf("%s left in the scratch folder after the run", p)
				}
			}
			if !slices.ContainsFunc(after, func(p string) bool { return strings.HasSuffix(p, runfolder.TimeseriesPart) }) {
				t.Errorf("the part files are gone before the results were read: %v", after)
			}
			if len(timeseries(t, res)) == 0 {
				t.Fatal("no timeseries")
			}
			if err := res.Close(); err != nil {
				t.Fatal(err)
			}
			if left := listTree(t, scratch); len(left) > 0 {
				t.Errorf("closed results left %v", left)
			}
			// A failed run leaves nothing either.
			ctx, cancel := context.WithCancel(context.Background())
			_, err = Run(ctx, sc, Options{
				Store:      scenario.StorePebble,
				ScratchDir: scratch,
				hooks:      testHooks{AfterBatch: func(string, int64, bool) { cancel() }},
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("canceled run: %v", err)
			}
			if left := listTree(t, scratch); len(left) > 0 {
				t.Errorf("a failed run left %v", left)
			}
		})
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("the runs left %v in the system's temporary folder", ents)
	}
}

// listTree lists every path under dir (not dir itself), slash-separated,
// relative to it with a leading slash.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && path != dir {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, "/"+filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// sparse is a long run of few rows: many batches, each with a timeseries
// row and a progress line per query, and little state.
const sparse = `
name: sparse
seed: 3
duration: 1h
trigger: 1s
workload:
  rate: 2/s
  retries:
    probability: 0.1
    delay: {dist: uniform, min: 1s, max: 5s}
    timestamp: same
queries:
  - name: within
    query: withWatermark("event_time", "10 seconds").dropDuplicatesWithinWatermark(["event_id"])
  - name: pair
    query: withWatermark("event_time", "10 seconds").dropDuplicates(["event_id", "event_time"])
`

// heapProbe samples the live heap (after a collection) as a run reports
// progress, about every simulated ten minutes.
type heapProbe struct {
	peak uint64
	n    int
}

func (h *heapProbe) Start(float64) {}
func (h *heapProbe) Add(float64) {
	if h.n++; h.n%10 != 0 {
		return
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.peak = max(h.peak, m.HeapAlloc)
}

// TestMemoryDoesNotGrowWithRunLength runs the same sparse scenario for one
// hour and for eight: the live heap during the run and with the results
// held does not grow with the number of batches (each batch's timeseries
// row and progress line go to part files), where holding them would add
// about 400 bytes per batch and query, 20 MB over the longer run.
func TestMemoryDoesNotGrowWithRunLength(t *testing.T) {
	measure := func(hours int) (peak, held uint64, rows int) {
		sc := load(t, strings.Replace(sparse, "duration: 1h", fmt.Sprintf("duration: %dh", hours), 1))
		p := &heapProbe{}
		res, err := runOpts(t, sc, Options{Workers: 1, Progress: p})
		if err != nil {
			t.Fatal(err)
		}
		// The least of a few readings: what another test's goroutines
		// still finishing hold is not this run's (a reading in the
		// full suite once saw 8 MB more, in none of 8 runs alone).
		held = math.MaxUint64
		for range 3 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			held = min(held, m.HeapAlloc)
			time.Sleep(20 * time.Millisecond)
		}
		for _, err := range res.Rows() {
			if err != nil {
				t.Fatal(err)
			}
			rows++
		}
		runtime.KeepAlive(res)
		return p.peak, held, rows
	}
	measure(1) // warm up: first-use allocations are not the run's
	peak1, held1, rows1 := measure(1)
	peak8, held8, rows8 := measure(8)
	if rows8 < 7*rows1 {
		t.Fatalf("%d rows in 8 h, %d in 1 h: the longer run is not longer", rows8, rows1)
	}
	// 400 bytes per extra row would be 8 MB over 20,000 extra rows; allow
	// 2 MB of noise.
	const slack = 2 << 20
	t.Logf("rows %d vs %d; peak live heap %d vs %d; held %d vs %d", rows1, rows8, peak1, peak8, held1, held8)
	if peak8 > peak1+slack {
		t.Errorf("peak live heap %d B over %d batches, %d B over %d: grows with the run", peak8, rows8, peak1, rows1)
	}
	if held8 > held1+slack {
		t.Errorf("heap holding the results %d B over %d batches, %d B over %d: grows with the run", held8, rows8, held1, rows1)
	}
}

// TestConsecutiveStallsAreOneMarker: a profile that ends and starts with a
// stall, repeated, marks each run of stalls once.
func TestConsecutiveStallsAreOneMarker(t *testing.T) {
	sc := load(t, `
name: stalls
duration: 40m
workload:
  profile:
    - {for: 5m, rate: 0}
    - {for: 10m, rate: 1/s}
    - {for: 5m, rate: 0}
queries:
  - name: q
    query: dropDuplicates(["event_id"])
`)
	got := markers(sc, nil, nil)
	until := func(m metrics.Marker) float64 { return *m.Until }
	var spans [][2]float64
	for _, m := range got {
		spans = append(spans, [2]float64{m.At, until(m)})
	}
	want := [][2]float64{{0, 300}, {900, 1500}, {2100, 2400}}
	if !slices.Equal(spans, want) {
		t.Fatalf("stall spans %v, want %v", spans, want)
	}
}

// TestSealedFiles checks the seal of job.state and done.json: any change
// to the content or the checksum line is refused.
func TestSealedFiles(t *testing.T) {
	data := seal([]byte(`{"a":1}`))
	if body, err := unseal("f", data); err != nil || string(body) != `{"a":1}` {
		t.Fatalf("unseal(seal(x)) = %q, %v", body, err)
	}
	sum := sha256.Sum256([]byte(`{"a":2}`))
	for _, bad := range [][]byte{
		bytes.Replace(data, []byte("1"), []byte("2"), 1),
		[]byte(`{"a":2}` + "\nsha256 " + hex.EncodeToString(sum[:1]) + "\n"),
		[]byte(`{"a":1}`),
		append(bytes.Clone(data), "x"...),
	} {
		if _, err := unseal("f", bad); err == nil {
			t.Errorf("unseal accepted %q", bad)
		}
	}
}

// TestCheckpointThroughALink uses a checkpoint folder given as a symlink
// (where the user keeps it is theirs to choose): the run follows that one
// link, and still refuses a link inside.
func TestCheckpointThroughALink(t *testing.T) {
	sc := load(t, faulty)
	real := filepath.Join(t.TempDir(), "real")
	link := filepath.Join(t.TempDir(), "link")
	os.Mkdir(real, 0o755)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	interruptAt(t, sc, link, "memory", []int64{3}, "within", 5)
	if _, err := os.Stat(filepath.Join(real, "run.json")); err != nil {
		t.Fatal("the run did not write through the link")
	}
	inside := filepath.Join(real, "within", "query.0", "state", "0", "link")
	if err := os.Symlink(t.TempDir(), inside); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{CheckpointDir: link})
	if err == nil {
		res.Close()
		t.Fatal("a link inside the checkpoint was not refused")
	}
	if want := filepath.Join(link, "within", "query.0", "state", "0", "link") + " is a symlink"; !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	os.Remove(inside)
	got, err := runOpts(t, sc, Options{CheckpointDir: link})
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, run(t, sc, 2), got)
}
