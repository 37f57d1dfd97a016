package runner

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"github.com/dedupsim/dedupsim/sim/runfolder"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// A run checkpoint (Options.CheckpointDir) is laid out as sim/runfolder
// says. A run opens it in this order, and stops at the first problem with
// one line naming the folder or the file: the folder must be missing,
// empty or dedupsim's own (run.json, or only the lock and temporary files
// of a run killed while it claimed the folder), which it checks without
// changing anything; then it takes the lock, so that nothing is read or
// written while another run uses the folder; then it refuses any symlink
// or special file inside the folder (a link would let a resume write
// outside it); then it checks run.json against the run; and then every
// job's files (checkResume), before any job writes.

// runInputs lists the inputs that make a run what it is: the resolved
// scenario (its JSON form, with the seed, the sweep and every default),
// the values of every empirical distribution (read from CSV files the
// JSON form names but does not hold), and the stores (runStores).
func runInputs(s *scenario.Scenario, store string) ([]runfolder.Input, error) {
	scJSON, err := json.Marshal(fingerprintView(s))
	if err != nil {
		return nil, err
	}
	sum := func(b []byte) string {
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:])
	}
	out := []runfolder.Input{{What: "scenario", SHA256: sum(scJSON)}}
	for _, d := range empiricalDists(reflect.ValueOf(s).Elem(), "") {
		buf := make([]byte, 0, 8*len(d.dist.Samples)+1)
		if d.dist.Counts {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
		for _, v := range d.dist.Samples {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
		out = append(out, runfolder.Input{What: fmt.Sprintf("%s (empirical file %s)", d.path, d.dist.File), SHA256: sum(buf)})
	}
	out = append(out, runfolder.Input{What: "store", SHA256: sum([]byte(store))})
	return out, nil
}

type keyedDist struct {
	path string
	dist *randvar.Spec
}

// empiricalDists finds every empirical randvar.Spec under v, with its key
// path (by JSON names), in field order.
func empiricalDists(v reflect.Value, path string) []keyedDist {
	var out []keyedDist
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, empiricalDists(v.Elem(), path)...)
		}
	case reflect.Struct:
		if d, ok := v.Addr().Interface().(*randvar.Spec); ok {
			if d.Kind == randvar.KindEmpirical {
				out = append(out, keyedDist{path, d})
			}
			return out
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			out = append(out, empiricalDists(v.Field(i), p)...)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			out = append(out, empiricalDists(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return out
}

// fingerprint combines the inputs' checksums.
func fingerprint(inputs []runfolder.Input) string {
	h := sha256.New()
	for _, in := range inputs {
		h.Write([]byte(in.What))
		h.Write([]byte{0})
		h.Write([]byte(in.SHA256))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// runFolder is a run checkpoint folder this process holds the lock of.
type runFolder struct {
	dir  string
	lock *fileio.Lock
	// prev is the lock file as it was before the lock wrote this process's
	// pid in it (nil if there was none), and wrote is set once the run
	// writes anything else: a run refused before that puts the lock file
	// back, so that it leaves the folder as it found it.
	prev  *lockFileState
	wrote bool
}

// lockFileState is a lock file's content and times.
type lockFileState struct {
	data         []byte
	atime, mtime time.Time
}

// openRunFolder checks that dir may be used as a run checkpoint, creates
// it if needed and takes its lock. A foreign folder is refused untouched;
// a folder another run holds is refused naming that run's pid.
func openRunFolder(dir string) (*runFolder, error) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
		}
	case err != nil:
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		// A link to a folder is the user's choice of where the folder
		// is; follow it once, here, and nowhere below.
		if fi, err = os.Stat(dir); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
		}
		fallthrough
	default:
		if !fi.IsDir() {
			return nil, fmt.Errorf("checkpoint %s: not a folder", dir)
		}
		if err := checkOwnFolder(dir); err != nil {
			return nil, err
		}
	}
	lockPath := filepath.Join(dir, runfolder.LockFile)
	var prev *lockFileState
	if fi, err := os.Lstat(lockPath); err == nil && fi.Mode().IsRegular() {
		if data, err := fileio.ReadFile(lockPath, 64); err == nil {
			prev = &lockFileState{data: data, atime: atime(fi), mtime: fi.ModTime()}
		}
	}
	lock, err := fileio.TryLockNoFollow(lockPath)
	if err != nil {
		var le *fileio.LockedError
		if errors.As(err, &le) {
			holder := "another process"
			if le.PID > 0 {
				holder = fmt.Sprintf("process %d", le.PID)
			}
			return nil, fmt.Errorf("checkpoint %s: in use by %s (it holds %s); wait for that run to end, or use another folder", dir, holder, le.Path)
		}
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	rf := &runFolder{dir: dir, lock: lock, prev: prev}
	if err := checkTree(dir); err != nil {
		rf.unlock()
		return nil, err
	}
	return rf, nil
}

// unlock releases the folder; if the run wrote nothing, the lock file is
// first put back as it was (or removed if there was none).
func (rf *runFolder) unlock() error {
	if !rf.wrote {
		p := filepath.Join(rf.dir, runfolder.LockFile)
		if rf.prev == nil {
			os.Remove(p)
		} else if err := os.WriteFile(p, rf.prev.data, 0o666); err == nil {
			os.Chtimes(p, rf.prev.atime, rf.prev.mtime)
		}
	}
	return rf.lock.Unlock()
}

// checkOwnFolder checks, without writing, that the existing folder dir is
// empty or dedupsim's: it holds run.json, or nothing but the lock and
// temporary files of a run killed while it claimed the folder.
func checkOwnFolder(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	for _, e := range ents {
		if e.Name() == runfolder.MetaFile {
			if !e.Type().IsRegular() {
				return fmt.Errorf("checkpoint %s: %s: not a regular file; refusing to use the folder", dir, filepath.Join(dir, runfolder.MetaFile))
			}
			return nil
		}
	}
	for _, e := range ents {
		if n := e.Name(); !(n == runfolder.LockFile && e.Type().IsRegular()) && !(fileio.IsTemp(n) && e.Type().IsRegular()) {
			return fmt.Errorf("checkpoint %s: folder is not empty and holds no %s (found %s); refusing to use it", dir, runfolder.MetaFile, quote(n))
		}
	}
	return nil
}

// checkTree refuses a symlink, or anything but folders and regular files,
// anywhere inside the run checkpoint dir: a resume writes inside the
// folder, and a link planted there would make it write elsewhere.
func checkTree(dir string) error {
	root := dir
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// The folder itself may be a link (see openRunFolder); walk what
		// it points to.
		if root, err = filepath.EvalSymlinks(dir); err != nil {
			return fmt.Errorf("checkpoint %s: %w", dir, err)
		}
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", dir, err)
		}
		if path == root {
			return nil
		}
		if rel, err := filepath.Rel(root, path); err == nil {
			path = filepath.Join(dir, rel)
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			return fmt.Errorf("checkpoint %s: %s is a symlink; a checkpoint holds only folders and regular files, refusing to use it", dir, path)
		case !t.IsDir() && !t.IsRegular():
			return fmt.Errorf("checkpoint %s: %s is not a regular file or a folder; refusing to use the checkpoint", dir, path)
		}
		return nil
	})
}

// claim checks that the locked folder belongs to this run, or makes it
// this run's: a new folder gets run.json; a folder of the same scenario,
// empirical values, seed and store is resumed; anything else is refused,
// naming the input that differs.
func (rf *runFolder) claim(s *scenario.Scenario, store string) error {
	dir := rf.dir
	inputs, err := runInputs(s, store)
	if err != nil {
		return err
	}
	want := runfolder.Meta{Format: runfolder.Format, Scenario: s.Name, Fingerprint: fingerprint(inputs), Inputs: inputs}
	path := filepath.Join(dir, runfolder.MetaFile)
	data, err := fileio.ReadFile(path, fileio.MaxStateFileBytes)
	switch {
	case err == nil:
		var have runfolder.Meta
		if err := json.Unmarshal(data, &have); err != nil || !strings.HasPrefix(have.Format, "dedupsim-run/") {
			return fmt.Errorf("checkpoint %s: %s is not a dedupsim run checkpoint; refusing to use the folder", dir, path)
		}
		if have.Format != want.Format {
			return fmt.Errorf("checkpoint %s: made by another version of dedupsim (%s, this one writes %s); resume it with that version, or use a new folder", dir, quote(have.Format), runfolder.Format)
		}
		if have.Fingerprint == want.Fingerprint {
			return nil
		}
		return fmt.Errorf("checkpoint %s: belongs to another run: %s; use a new folder", dir, inputDiff(have, want))
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	data, _ = json.MarshalIndent(want, "", "  ")
	rf.wrote = true
	if err := fileio.WriteFile(path, append(data, '\n')); err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return nil
}

// inputDiff says which input of a run differs from the folder's.
func inputDiff(have, want runfolder.Meta) string {
	if have.Scenario != want.Scenario {
		return fmt.Sprintf("it is scenario %s's, not %s's", quote(have.Scenario), quote(want.Scenario))
	}
	haveSum := map[string]string{}
	for _, in := range have.Inputs {
		haveSum[in.What] = in.SHA256
	}
	for _, in := range want.Inputs {
		old, ok := haveSum[in.What]
		switch {
		case !ok && strings.Contains(in.What, "empirical"):
			return fmt.Sprintf("the run it holds had no %s", in.What)
		case !ok:
			continue
		case old == in.SHA256:
			continue
		case in.What == "scenario":
			return "the scenario differs (a setting, the seed or the sweep)"
		case in.What == "store":
			return "it was made with another state store (the scenario's, a query's or --store)"
		default:
			return fmt.Sprintf("the values of %s differ from the run's", in.What)
		}
	}
	return "its inputs differ (scenario, seed, empirical files or store)"
}

// runStores names the state stores the jobs run on, for a run's
// fingerprint: the one backend's name when every job runs on it (so a
// checkpoint written before queries had stores of their own still
// matches), else each job's "file=store", in job order.
func runStores(jobs []Job) string {
	one := true
	for _, j := range jobs {
		one = one && j.Store == jobs[0].Store
	}
	if one && len(jobs) > 0 {
		return jobs[0].Store
	}
	parts := make([]string, len(jobs))
	for i, j := range jobs {
		parts[i] = j.FileName + "=" + j.Store
	}
	return strings.Join(parts, ",")
}

// quote renders a name read from a file or a folder for an error message:
// quoted, control characters escaped, at most about 80 characters.
func quote(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strconv.Quote(s)
}
