package memstore

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeltaLogZeroTailIsTorn: a crash can leave a log's end as zeros (the
// file system extended the file, the data never reached the disk). Zeros
// after the last record, or in place of the last record, of any length,
// read as a torn tail: the records before them read, the zeros are not
// part of the valid length, Load reads the last complete version and
// Open cuts the zeros off. Lengths 1 to 7 are shorter than a frame
// header; 8 is a header of length 0; 9 and more hold a zero length
// followed by zeros, which is not a record whose checksum fails at the
// end of the file.
func TestDeltaLogZeroTailIsTorn(t *testing.T) {
	dir, data, recs, states := threeDeltas(t)
	path := filepath.Join(dir, "1.log")
	for _, n := range []int{1, 7, 8, 9, 17, 100, 4096} {
		for _, keep := range []int{3, 2} {
			// keep records, then n zeros (in place of record 3 when keep
			// is 2).
			valid := recs[keep-1].end
			bad := append(bytes.Clone(data[:valid]), make([]byte, n)...)
			got, v, err := parseLog(path, bad, 1)
			if err != nil || len(got) != keep || v != valid {
				t.Fatalf("%d records then %d zeros: %d records, %d valid bytes (%v); want %d records, %d bytes", keep, n, len(got), v, err, keep, valid)
			}
			writeFileOrFail(t, path, bad)
			s, err := Load(dir, int64(keep))
			if err != nil {
				t.Fatalf("%d records then %d zeros: Load of version %d: %v", keep, n, keep, err)
			}
			if !maps.Equal(contents(t, s), states[int64(keep)]) {
				t.Fatalf("%d records then %d zeros: version %d differs", keep, n, keep)
			}
			s.Close()
			c, err := Open(dir, int64(keep), Options{SnapshotEvery: 100})
			if err != nil {
				t.Fatalf("%d records then %d zeros: Open at version %d: %v", keep, n, keep, err)
			}
			c.Close()
			if fi, err := os.Stat(path); err != nil || fi.Size() != valid {
				t.Fatalf("%d records then %d zeros: Open left the log at %v bytes (%v), want %d", keep, n, fi.Size(), err, valid)
			}
		}
	}
}

// TestDeltaLogVersionSkipIsDamage: a record whose version is not the one
// after the record before it (here record 2 cut out, so that the record
// at its byte offset, intact and checksummed, holds version 3 where
// version 2 belongs) is refused in one line naming the log, the byte
// offset and both versions; it is not read as version 2.
func TestDeltaLogVersionSkipIsDamage(t *testing.T) {
	dir, data, recs, _ := threeDeltas(t)
	path := filepath.Join(dir, "1.log")
	bad := append(bytes.Clone(data[:recs[1].off]), data[recs[2].off:]...)
	_, _, err := parseLog(path, bad, 1)
	want := fmt.Sprintf("the record at byte %d holds version 3, want 2", recs[1].off)
	if err == nil || !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a log skipping from version 1 to 3: %v; want one line naming %s and %q", err, path, want)
	}
	writeFileOrFail(t, path, bad)
	if _, err := Load(dir, 2); err == nil {
		t.Fatal("Load of version 2 read a log whose second record holds version 3")
	}
	if err := Check(dir, 3); err == nil {
		t.Fatal("Check of version 3 passed a log without version 2")
	}
}
