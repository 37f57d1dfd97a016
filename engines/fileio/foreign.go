package fileio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The marker of a folder dedupsim publishes lists, after its text, every
// file and folder dedupsim put in the folder, one quoted path a line
// (folders end with "/"), under a line "files:". A folder holding anything
// else (a user's notes.txt or analysis/ folder put there since) is not
// replaced: Check refuses it naming the first such entry, and
// RemoveForeign removes them when the user asks (--force). A marker
// without the list (written before it existed) vouches for the whole
// folder, as every marker did then.

// manifestHeader is the line that starts the list of entries in a marker.
const manifestHeader = "files:"

// maxMarker bounds the marker read back: a list of every entry of a large
// sweep's results is a few hundred kilobytes.
const maxMarker = 64 << 20

// ForeignError is Check's error for a folder of the kind that holds
// entries dedupsim did not write.
type ForeignError struct {
	// Path is the folder, as given.
	Path string
	// Noun names the folder's kind: "results folder".
	Noun string
	// Entries are the foreign entries, relative to the folder, in lexical
	// order; a foreign folder is one entry ("analysis/"), its contents not
	// listed.
	Entries []string
}

func (e *ForeignError) Error() string {
	more := ""
	if n := len(e.Entries) - 1; n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("%s: this %s holds %s%s, which dedupsim did not write; refusing to replace it (move it out first, or give --force to delete it with the folder)", ShowPath(e.Path), e.Noun, Show(e.Entries[0]), more)
}

// manifest lists the entries of dir (relative, lexical order, folders with
// a trailing "/"), leaving out the marker itself.
func (k *Folder) manifest(dir string) ([]string, error) {
	var out []string
	err := k.walkEntries(dir, func(rel string, _ bool) bool {
		out = append(out, rel)
		return false
	})
	return out, err
}

// walkEntries calls visit for every entry of dir but the marker, in
// lexical order, with its relative slash-separated name (a folder's with a
// trailing "/"); visit returns true to leave a folder's entries out.
func (k *Folder) walkEntries(dir string, visit func(rel string, isDir bool) (skip bool)) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." || rel == k.Marker {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		if visit(rel, d.IsDir()) && d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
}

// markerContent is the marker to write into the complete folder dir: the
// kind's text and the list of every entry dir holds.
func (k *Folder) markerContent(dir string) ([]byte, error) {
	entries, err := k.manifest(dir)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(k.MarkerText)
	if !strings.HasSuffix(k.MarkerText, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(manifestHeader + "\n")
	for _, e := range entries {
		b.WriteString(strconv.Quote(e))
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// written returns the entries the marker of dir lists, and false when the
// marker carries no list (a marker of before the list, which vouches for
// the whole folder).
func (k *Folder) written(dir string) (map[string]bool, bool, error) {
	data, err := ReadFile(filepath.Join(dir, k.Marker), maxMarker)
	if err != nil {
		return nil, false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	listed, inList := map[string]bool{}, false
	for sc.Scan() {
		line := sc.Text()
		if !inList {
			inList = line == manifestHeader
			continue
		}
		name, err := strconv.Unquote(line)
		if err != nil {
			return nil, false, fmt.Errorf("%s: line %s is not a quoted path", k.Marker, Quote(line))
		}
		listed[name] = true
	}
	return listed, inList, sc.Err()
}

// Foreign returns the entries of dir, a folder of the kind (it holds the
// marker), that dedupsim did not write: what its marker does not list, in
// lexical order, a foreign folder as one entry ("analysis/"). It is empty
// for a marker without a list. A folder published into dir since (plan
// --out DIR/review inside a run's DIR) is dedupsim's when it holds the
// kind's marker and nothing foreign itself.
func (k *Folder) Foreign(dir string) ([]string, error) {
	listed, ok, err := k.written(dir)
	if err != nil || !ok {
		return nil, err
	}
	var out []string
	var inner error
	err = k.walkEntries(dir, func(rel string, isDir bool) bool {
		if listed[rel] {
			return false
		}
		if isDir {
			sub := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(rel, "/")))
			if k.Has(sub) {
				f, err := k.Foreign(sub)
				if err != nil {
					inner = err
					return true
				}
				if len(f) == 0 {
					return true // published by dedupsim, whole
				}
			}
		}
		out = append(out, rel)
		return isDir // a foreign folder is one entry
	})
	if err == nil {
		err = inner
	}
	return out, err
}

// checkForeign returns a *ForeignError when dir (a folder of the kind,
// given as path) holds entries dedupsim did not write.
func (k *Folder) checkForeign(path, dir string) error {
	foreign, err := k.Foreign(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// The folder went away while it was read (another publish moved
		// it, outside the publish lock): nothing of anyone's is there
		// to keep; Publish checks again under the lock.
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %s", path, Reason(err))
	}
	if len(foreign) > 0 {
		return &ForeignError{Path: path, Noun: k.Noun, Entries: foreign}
	}
	return nil
}

// RemoveForeign deletes from path, a folder of any of the kinds (it holds
// one of their markers), every entry dedupsim did not write (Foreign),
// and returns them; a path that is not such a folder is left alone
// (nil, nil). It is what --force does before a command replaces the
// folder.
func RemoveForeign(path string, kinds ...*Folder) ([]string, error) {
	for _, k := range kinds {
		fi, err := os.Lstat(path)
		if err != nil || !fi.IsDir() || !k.Has(path) {
			continue
		}
		foreign, err := k.Foreign(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", path, Reason(err))
		}
		for _, e := range foreign {
			if err := os.RemoveAll(filepath.Join(path, filepath.FromSlash(strings.TrimSuffix(e, "/")))); err != nil {
				return nil, fmt.Errorf("%s: removing %s: %s", path, Show(e), Reason(err))
			}
		}
		return foreign, nil
	}
	return nil, nil
}
