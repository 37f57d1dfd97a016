package memstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"sync/atomic"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// A background snapshot reads the arena through a frozen view: the slabs
// as they were at the snapshot's version, and a copy of their live-record
// bitmaps. The records themselves are never copied: an arena record is
// written once and not changed until its slab is reused, and while a view
// may read them (the arena is pinned) no slab that held a live record at
// the freeze is reused. The store goes on adding (into fresh space, which
// the view's bitmaps do not mark) and evicting (which clears the live
// bitmaps, not the view's copy) as the snapshot is written.
//
// Freezing costs a copy of the bitmaps, one bit per 8 bytes of arena
// (about 0.75 bytes per key: 7.5 MB at 1e7 keys), on the commit that
// starts the snapshot; the walk, the encoding and the write run on the
// snapshot's goroutine.

// view is a frozen arena: what a snapshot file is written from.
type view struct {
	slabs [][]byte
	// bits[i] is the copy of slab i's live bitmap, nil for a slab without
	// a live record.
	bits [][]uint64
}

// uvarintSize is the length of x as a uvarint.
func uvarintSize(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// encSize is the length of the snapshot (and delta) record that puts an
// n-byte key with expiry exp: the op, the key's length, the key, the
// expiry as a varint.
func encSize(n int, exp int64) int64 {
	zz := uint64(exp<<1) ^ uint64(exp>>63)
	return int64(1 + uvarintSize(uint64(n)) + n + uvarintSize(zz))
}

// freeze returns a view of the arena's live records and pins the arena.
// buf is reused for the bitmap copies when it is large enough.
func (a *arena) freeze(buf []uint64) (view, []uint64) {
	words := 0
	for i, b := range a.bits {
		if a.live[i] > 0 {
			words += len(b)
		}
	}
	if cap(buf) < words {
		buf = make([]uint64, words)
	}
	buf = buf[:words]
	v := view{slabs: make([][]byte, len(a.slabs)), bits: make([][]uint64, len(a.slabs))}
	copy(v.slabs, a.slabs)
	off := 0
	for i, b := range a.bits {
		if a.live[i] == 0 {
			continue
		}
		v.bits[i] = buf[off : off+len(b) : off+len(b)]
		copy(v.bits[i], b)
		off += len(b)
	}
	a.pinned = true
	return v, buf
}

// unpin ends the pinning of the last freeze: the slabs that emptied since
// are recycled. The view must no longer be read.
func (a *arena) unpin() {
	a.pinned = false
	a.free = append(a.free, a.pending...)
	a.pending = a.pending[:0]
}

// errCancelled is what a snapshot cancelled by Abort returns.
var errCancelled = errors.New("snapshot cancelled")

// snapBufSize is the encoding buffer of a snapshot's writer.
const snapBufSize = 1 << 20

// writeView writes the view's records as the snapshot file path, in arena
// order (slab, then offset), with the same format and trailer as every
// state file, through a temporary file that is synced and renamed into
// place, then the folder synced: once it returns nil the snapshot is
// durable; until then no reader sees it (a killed process leaves at most
// the temporary file, which readers skip). want is the file's size as the
// store counted it when it froze the view; a different size is an error.
// A cancel observed between slabs abandons the file. hook, if not nil, is
// called before each slab is read (tests).
func writeView(dir, path string, v view, want int64, cancel *atomic.Bool, hook func()) error {
	f, err := fileio.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	buf := make([]byte, 0, snapBufSize)
	crc := uint32(0)
	var written int64
	flush := func() error {
		crc = crc32.Update(crc, crc32.IEEETable, buf)
		written += int64(len(buf))
		_, err := f.Write(buf)
		buf = buf[:0]
		return err
	}
	buf = append(buf, snapshotMagic...)
	for i, bm := range v.bits {
		if bm == nil {
			continue
		}
		if hook != nil {
			hook()
		}
		if cancel.Load() {
			return errCancelled
		}
		slab := v.slabs[i]
		for w, word := range bm {
			for word != 0 {
				u := w<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				off := u * recAlign
				n := int(binary.LittleEndian.Uint32(slab[off:]))
				if len(buf)+n+1+2*binary.MaxVarintLen64 > cap(buf) {
					if err := flush(); err != nil {
						return err
					}
				}
				buf = append(buf, recPut)
				buf = binary.AppendUvarint(buf, uint64(n))
				buf = append(buf, slab[off+recHeader:off+recHeader+n]...)
				buf = binary.AppendVarint(buf, int64(binary.LittleEndian.Uint64(slab[off+4:])))
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if written+4 != want {
		return fmt.Errorf("snapshot of %d bytes, the store counted %d", written+4, want)
	}
	buf = binary.BigEndian.AppendUint32(buf, crc)
	if _, err := f.Write(buf); err != nil {
		return err
	}
	if cancel.Load() {
		return errCancelled
	}
	if err := f.Commit(); err != nil {
		return err
	}
	return fileio.SyncDir(dir)
}
