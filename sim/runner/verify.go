package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/runfolder"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// fileSum is a file a resume reads and the SHA-256 it must have.
type fileSum struct {
	// Path is relative to the job's folder, with slashes.
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// Batch, when set, makes Path a query checkpoint's log and SHA256
	// the checksum of its records of that batch (microbatch.BatchRecords), not
	// of the whole file, which grows after the snapshot.
	Batch *int64 `json:"batch,omitempty"`
	// Len, when set, makes SHA256 the checksum of the file's first Len
	// bytes: a state store's append-only log, which grows after the
	// snapshot (the memory store's delta logs).
	Len *int64 `json:"len,omitempty"`
}

// stateSum returns the checksum of a state store's file f, named
// relative to dir: the one the store took as it wrote it, if it did,
// else read from the file.
func (c *hashCache) stateSum(dir string, f engines.StateFile) (fileSum, error) {
	if f.Len < 0 && f.SHA256 == "" {
		return c.fileSum(dir, f.Path)
	}
	rel, err := filepath.Rel(dir, f.Path)
	if err != nil {
		return fileSum{}, err
	}
	out := fileSum{Path: filepath.ToSlash(rel), SHA256: f.SHA256}
	if f.Len >= 0 {
		n := f.Len
		out.Len = &n
	}
	if out.SHA256 == "" {
		if out.SHA256, err = hashPrefix(f.Path, f.Len, false); err != nil {
			return fileSum{}, err
		}
	}
	return out, nil
}

// fileID identifies a file's content within a process: a file written
// again gets a new inode (every write in a checkpoint is a rename of a new
// file), and a changed one a new size or modification time.
type fileID struct {
	dev, ino    uint64
	size, mtime int64
}

// hashCache remembers the checksums of the files a job's snapshots record,
// so that each snapshot hashes only the files written since the last one:
// Pebble's checkpoints hard-link the same immutable sstables, and the
// memory store's snapshot file is written once. It only serves snapshots;
// a resume hashes every file afresh.
type hashCache struct {
	m    map[fileID]string
	used map[fileID]bool
}

// fileSum returns the checksum of the file at path, named relative to
// dir.
func (c *hashCache) fileSum(dir, path string) (fileSum, error) {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return fileSum{}, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fileSum{}, err
	}
	if !fi.Mode().IsRegular() {
		return fileSum{}, &fileio.NotRegularError{Path: path, Mode: fi.Mode()}
	}
	id, ok := idOf(fi)
	if c.m == nil {
		c.m, c.used = map[fileID]string{}, map[fileID]bool{}
	}
	if sum, hit := c.m[id]; ok && hit {
		c.used[id] = true
		return fileSum{Path: filepath.ToSlash(rel), SHA256: sum}, nil
	}
	sum, err := hashFile(path)
	if err != nil {
		return fileSum{}, err
	}
	if ok {
		c.m[id], c.used[id] = sum, true
	}
	return fileSum{Path: filepath.ToSlash(rel), SHA256: sum}, nil
}

// prune forgets the files no snapshot since the last prune recorded.
func (c *hashCache) prune() {
	for id := range c.m {
		if !c.used[id] {
			delete(c.m, id)
		}
	}
	clear(c.used)
}

func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino, size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}

// hashFile returns the hex SHA-256 of the regular file at path.
func hashFile(path string) (string, error) {
	f, err := fileio.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashPrefix returns the hex SHA-256 of the first n bytes of the regular
// file at path, which must hold at least n bytes (exactly n with exact).
func hashPrefix(path string, n int64, exact bool) (string, error) {
	f, err := fileio.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if fi.Size() < n || exact && fi.Size() != n {
		return "", fmt.Errorf("%s holds %d bytes, %d were written", path, fi.Size(), n)
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, n); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sealPrefix starts the last line of a sealed file.
const sealPrefix = "sha256 "

// seal appends to data a last line with its SHA-256, which unseal checks.
func seal(data []byte) []byte {
	sum := sha256.Sum256(data)
	out := make([]byte, 0, len(data)+len(sealPrefix)+66)
	out = append(out, data...)
	out = append(out, '\n')
	out = append(out, sealPrefix...)
	out = hex.AppendEncode(out, sum[:])
	return append(out, '\n')
}

// unseal returns the content of a sealed file, or an error if its last
// line is missing or does not match.
func unseal(path string, data []byte) ([]byte, error) {
	i := bytes.LastIndex(data, []byte("\n"+sealPrefix))
	if i < 0 {
		return nil, fmt.Errorf("%s: no checksum line: damaged, or not written by this version of dedupsim", path)
	}
	body, last := data[:i], bytes.TrimSuffix(data[i+1+len(sealPrefix):], []byte("\n"))
	sum := sha256.Sum256(body)
	if string(last) != hex.EncodeToString(sum[:]) {
		return nil, fmt.Errorf("%s: checksum mismatch: the file changed after dedupsim wrote it", path)
	}
	return body, nil
}

// readSealedJSON reads the sealed JSON file at path into v. It reports
// false, and no error, when the file does not exist.
func readSealedJSON(path string, v any) (bool, error) {
	data, err := fileio.ReadFile(path, fileio.MaxStateFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	body, err := unseal(path, data)
	if err != nil {
		return false, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return false, fmt.Errorf("%s: %v", path, err)
	}
	return true, nil
}

// checkRunFolder checks that the run checkpoint dir holds only what a run
// writes: run.json, run.lock and a folder per job.
func checkRunFolder(dir string, jobs []Job) error {
	names := map[string]bool{}
	for _, j := range jobs {
		names[j.FileName] = true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if n == runfolder.MetaFile || n == runfolder.LockFile || fileio.IsTemp(n) || names[n] && e.IsDir() {
			continue
		}
		return fmt.Errorf("checkpoint %s: %s: not a file of this run checkpoint; refusing to resume from the folder", dir, filepath.Join(dir, n))
	}
	return nil
}

// checkResume checks, before any job runs and changes its folder, that the
// run checkpoint root can be resumed: no foreign file in it, and for every
// job, the files it resumes from, byte for byte as the job recorded them.
// A finished job: done.json and its part files. An unfinished job with a
// snapshot: job.state, the part files up to the snapshot, the query
// checkpoint files and every state store file the resume reads, the list
// of those files included. It writes nothing. Each error names the file at
// fault.
func checkResume(root string, sc *scenario.Scenario, jobs []Job, backends map[string]stores.Backend, newSource func(*scenario.Scenario) (Source, error)) error {
	if err := checkRunFolder(root, jobs); err != nil {
		return err
	}
	for _, j := range jobs {
		dir := filepath.Join(root, j.FileName)
		if err := checkJob(dir, sc, j, backends[j.Store], newSource); err != nil {
			return fmt.Errorf("resume from %s: %w", dir, err)
		}
	}
	return nil
}

// checkJob checks one job's folder for checkResume; be is the backend of
// the job's store (j.Store).
func checkJob(dir string, sc *scenario.Scenario, j Job, be stores.Backend, newSource func(*scenario.Scenario) (Source, error)) error {
	if err := runfolder.CheckJobFolder(dir); err != nil {
		return err
	}
	done, err := readDone(dir)
	if err != nil {
		return err
	}
	if done != nil {
		if done.Summary.Name != j.Name || done.Summary.Query != j.Query {
			return fmt.Errorf("%s: belongs to query %s, not %s", filepath.Join(dir, runfolder.JobDoneFile), quote(done.Summary.Query), quote(j.Query))
		}
		if err := checkParts(dir, done.Parts, true); err != nil {
			return err
		}
		return checkSparkPart(dir, done.SparkPart, true)
	}
	src, err := newSource(sc)
	if err != nil {
		return err
	}
	r := &jobRun{env: job{jobEnv{sc: sc, jobDir: dir}, j}, src: src, ck: &checkpointer{}}
	resumed, state, err := r.restore()
	if err != nil || !resumed {
		// Without a snapshot the job starts over: nothing is read.
		return err
	}
	snap, err := readSnapshot(dir)
	if err != nil {
		return err
	}
	if err := checkParts(dir, snap.Parts, false); err != nil {
		return err
	}
	if err := checkSparkPart(dir, snap.SparkPart, false); err != nil {
		return err
	}
	for _, f := range snap.QueryFiles {
		if err := checkSum(dir, f); err != nil {
			return err
		}
	}
	qdir := filepath.Join(dir, fmt.Sprintf("query.%d", r.ck.gen))
	_, meta, err := microbatch.OpenCheckpoint(qdir)
	if err != nil {
		return fmt.Errorf("%s resumes query.%d: %w", filepath.Join(dir, runfolder.JobStateFile), r.ck.gen, err)
	}
	if meta.Query != j.Query || meta.Store != j.Store {
		return fmt.Errorf("%s: the checkpoint of query %s on store %s, not %s on %s", filepath.Join(qdir, "metadata"),
			quote(meta.Query), quote(meta.Store), quote(j.Query), j.Store)
	}
	ops := len(j.Plan.Dedups())
	if len(snap.StoreFiles) != ops {
		return fmt.Errorf("%s: the files of %d state stores, the query has %d", filepath.Join(dir, runfolder.JobStateFile), len(snap.StoreFiles), ops)
	}
	for op := range ops {
		var files []engines.StateFile
		for _, sdir := range microbatch.StateDirs(qdir, op, meta.Partitions) {
			f, err := be.Files(sdir, state.NextBatchID)
			if err != nil {
				return fmt.Errorf("operator %d: %w", op, err)
			}
			files = append(files, f...)
		}
		want := snap.StoreFiles[op]
		for i, f := range files {
			p := f.Path
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			if i >= len(want) || filepath.ToSlash(rel) != want[i].Path {
				return fmt.Errorf("%s: not one of the state files %s recorded for version %d", p, filepath.Join(dir, runfolder.JobStateFile), state.NextBatchID)
			}
			if wantLen := want[i].Len; (wantLen == nil) != (f.Len < 0) || wantLen != nil && *wantLen != f.Len {
				return fmt.Errorf("%s: the state of version %d reads %s of it, %s recorded %s", p, state.NextBatchID, lenText(f.Len), filepath.Join(dir, runfolder.JobStateFile), lenText(ptrLen(wantLen)))
			}
		}
		if len(files) < len(want) {
			return fmt.Errorf("%s: missing: %s recorded it for version %d", filepath.Join(dir, filepath.FromSlash(want[len(files)].Path)), filepath.Join(dir, runfolder.JobStateFile), state.NextBatchID)
		}
		for _, f := range want {
			if err := checkSum(dir, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkParts checks a job's part files against their marks: the first
// Len bytes of each hash as recorded (exactly Len bytes for a finished
// job).
func checkParts(dir string, marks [2]partMark, exact bool) error {
	for i, name := range []string{runfolder.TimeseriesPart, runfolder.ProgressPart} {
		p := filepath.Join(dir, name)
		sum, err := hashPrefix(p, marks[i].Len, exact)
		if err != nil {
			return err
		}
		if sum != marks[i].SHA256 {
			return fmt.Errorf("%s: checksum mismatch: its first %d bytes changed after the job wrote them", p, marks[i].Len)
		}
	}
	return nil
}

// checkSum checks one recorded file.
func checkSum(dir string, f fileSum) error {
	p := filepath.Join(dir, filepath.FromSlash(f.Path))
	if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
		return fmt.Errorf("%s: a recorded file outside the job's folder: %s", filepath.Join(dir, runfolder.JobStateFile), quote(f.Path))
	}
	if f.Batch != nil {
		return checkLogSum(dir, p, f)
	}
	if f.Len != nil {
		sum, err := hashPrefix(p, *f.Len, false)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: missing, yet the job snapshot %s resumes from it: this checkpoint cannot be resumed; move it aside and run again", p, filepath.Join(dir, runfolder.JobStateFile))
		}
		if err != nil {
			return err
		}
		if sum != f.SHA256 {
			return fmt.Errorf("%s: checksum mismatch: its first %d bytes changed after the job snapshot recorded them", p, *f.Len)
		}
		return nil
	}
	sum, err := hashFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: missing, yet the job snapshot %s resumes from it: this checkpoint cannot be resumed; move it aside and run again", p, filepath.Join(dir, runfolder.JobStateFile))
	}
	if err != nil {
		return err
	}
	if sum != f.SHA256 {
		return fmt.Errorf("%s: checksum mismatch: the file changed after the job snapshot recorded it", p)
	}
	return nil
}

// checkLogSum checks the records of one batch of a query checkpoint's
// log at p.
func checkLogSum(dir, p string, f fileSum) error {
	if filepath.Base(p) != microbatch.LogName {
		return fmt.Errorf("%s: a recorded batch log that is not a query checkpoint's %s: %s", filepath.Join(dir, runfolder.JobStateFile), microbatch.LogName, quote(f.Path))
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: missing, yet the job snapshot %s resumes from it: this checkpoint cannot be resumed; move it aside and run again", p, filepath.Join(dir, runfolder.JobStateFile))
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &fileio.NotRegularError{Path: p, Mode: fi.Mode()}
	}
	_, recs, ok, err := microbatch.BatchRecords(filepath.Dir(p), *f.Batch)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: no records of batch %d, yet the job snapshot %s resumes from them: this checkpoint cannot be resumed; move it aside and run again", p, *f.Batch, filepath.Join(dir, runfolder.JobStateFile))
	}
	sum := sha256.Sum256(recs)
	if hex.EncodeToString(sum[:]) != f.SHA256 {
		return fmt.Errorf("%s: checksum mismatch: the records of batch %d changed after the job snapshot recorded them", p, *f.Batch)
	}
	return nil
}

// lenText describes how much of a file is read: all of it (n < 0) or its
// first n bytes.
func lenText(n int64) string {
	if n < 0 {
		return "all"
	}
	return fmt.Sprintf("the first %d bytes", n)
}

func ptrLen(n *int64) int64 {
	if n == nil {
		return -1
	}
	return *n
}
