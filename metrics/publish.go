package metrics

import "github.com/dedupsim/dedupsim/engines/fileio"

// MarkerFile is the file that marks a folder as a results folder dedupsim
// wrote. It is written last, just before the folder is swapped in, so a
// folder that has it is complete; only a folder that has it (or an empty
// folder) may be replaced by a new one.
const MarkerFile = ".dedupsim-results"

// resultsFolder is the kind of a results folder: how it is checked,
// staged and published (fileio.Folder).
func resultsFolder() *fileio.Folder {
	return &fileio.Folder{
		Noun:    "results folder",
		A:       "a results folder",
		Ours:    "dedupsim results folder",
		Example: "results/NAME",
		Marker:  MarkerFile,
		MarkerText: "This folder was written by dedupsim. dedupsim replaces it when asked to\n" +
			"write results here again; it never replaces a folder without this file.\n",
		StagingKind: "dedupsim-staging",
	}
}

// Stage checks that target may be replaced by a results folder
// (CheckReplaceable) and stages one beside it (fileio.Folder.Stage).
func Stage(target string) (*fileio.Staging, error) { return resultsFolder().Stage(target) }

// CheckReplaceable reports whether dedupsim may replace the folder path
// with a new results folder: when nothing is there, when it is an empty
// folder, or when it is a results folder dedupsim wrote (it holds
// MarkerFile). Anything else is refused with one line, and nothing is
// touched.
func CheckReplaceable(path string) error { return resultsFolder().Check(path) }

// IsResultsFolder reports whether dir carries the results marker.
func IsResultsFolder(dir string) bool { return resultsFolder().Has(dir) }

// RemoveForeign deletes from the results folder path everything dedupsim
// did not write there (what its marker does not list) and returns it,
// relative to path; anything but a results folder is left alone. It is
// what --force does before a command replaces the folder.
func RemoveForeign(path string) ([]string, error) {
	return fileio.RemoveForeign(path, resultsFolder())
}
