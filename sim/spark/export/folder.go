package export

import "github.com/dedupsim/dedupsim/engines/fileio"

// MarkerFile marks a folder as an export dedupsim wrote. It is written
// last, just before the folder is swapped in; only a folder that has it
// (or an empty one) may be replaced by a new export.
const MarkerFile = ".dedupsim-export"

// exportFolder is the kind of an export folder: how it is checked, staged
// and published (fileio.Folder); its batch and expected folders are
// synced before the swap.
func exportFolder() *fileio.Folder {
	return &fileio.Folder{
		Noun:    "export folder",
		A:       "an export folder",
		Ours:    "dedupsim export",
		Example: "export-NAME",
		Marker:  MarkerFile,
		MarkerText: "This folder is an export written by dedupsim (simulate export). dedupsim\n" +
			"replaces it when asked to export here again; it never replaces a folder without this file.\n",
		StagingKind: "dedupsim-export-staging",
		Sync:        []string{batchesDir, expectedDir},
	}
}

// CheckOut reports whether an export may be written at path: when nothing
// is there, when it is an empty folder, or when it is an export dedupsim
// wrote (it holds MarkerFile). Anything else (a file, a symlink, someone
// else's folder, a results folder, the root folder) is refused with one
// line, and nothing is touched.
func CheckOut(path string) error { return exportFolder().Check(path) }

// RemoveForeign deletes from the export folder path everything dedupsim
// did not write there and returns it (fileio.RemoveForeign); anything but
// an export folder is left alone. It is what export --force does.
func RemoveForeign(path string) ([]string, error) {
	return fileio.RemoveForeign(path, exportFolder())
}
