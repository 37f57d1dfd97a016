package reports

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics"
)

// Rerender redraws the report of the results folder dir in place, with the
// guarantees of a run's results: the folder's files are linked into a
// staging folder beside it, the report is rendered there, and the staging
// folder replaces dir in one step, so a failure or a kill leaves dir as it
// was. dir must be a results folder dedupsim wrote (it holds
// metrics.MarkerFile).
func Rerender(dir string) error {
	// Checked before anything is staged; streamed, so that the check
	// holds no more than the report does.
	if _, err := loadResults(dir); err != nil {
		return err
	}
	if !metrics.IsResultsFolder(dir) {
		return fmt.Errorf("%s: not a results folder dedupsim wrote (it has no %s file); refusing to rewrite it (run the scenario again to get one)", dir, metrics.MarkerFile)
	}
	st, err := metrics.Stage(dir)
	if err != nil {
		return err
	}
	defer st.Discard()
	if err := linkTree(dir, st.Dir); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := Render(st.Dir); err != nil {
		return err
	}
	return st.Publish()
}

// linkTree recreates the files of src in the empty folder dst, as hard
// links where the file system allows (renders replace files by rename, so
// the originals are never written through a link) and as copies elsewhere.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(to, 0o777)
		case d.Type().IsRegular():
			if err := os.Link(path, to); err == nil {
				return nil
			}
			return fileio.CopyFile(path, to)
		default:
			return fmt.Errorf("%s: not a regular file or folder; a results folder holds none", path)
		}
	})
}
