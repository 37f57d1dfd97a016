package pebblestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The Pebble key layout (see the package documentation).
const (
	// flushPrefix starts the keys of a flush: 'f' + be64(flush id), then
	// entryKind + key for an entry or metaKind for the flush's metadata.
	flushPrefix byte = 'f'
	// foreverPrefix starts the keys stored with engines.NoExpiry:
	// 'n' + key, with an empty value.
	foreverPrefix byte = 'n'
	entryKind     byte = 'k'
	metaKind      byte = 'm'
	// flushHeaderLen is the length of a flush's key prefix.
	flushHeaderLen = 1 + 8
)

// appendFlush appends the prefix of flush id's keys to dst.
func appendFlush(dst []byte, id uint64) []byte {
	dst = append(dst, flushPrefix)
	return binary.BigEndian.AppendUint64(dst, id)
}

// appendEntry appends the Pebble key of key in flush id to dst.
func appendEntry(dst []byte, id uint64, key []byte) []byte {
	dst = append(appendFlush(dst, id), entryKind)
	return append(dst, key...)
}

// appendForever appends the Pebble key of the NoExpiry key key to dst.
func appendForever(dst, key []byte) []byte {
	dst = append(dst, foreverPrefix)
	return append(dst, key...)
}

// flushID returns the flush id of a Pebble key of the flush space.
func flushID(k []byte) (uint64, bool) {
	if len(k) < flushHeaderLen || k[0] != flushPrefix {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

// metaFormat is the version of a flush's metadata record; a store written
// with an unknown version is refused rather than misread.
const metaFormat = 2

// flushRef is what a flush's metadata says about one live flush.
type flushRef struct {
	id uint64
	// epoch is the store's evict epoch when the flush was written: its
	// entries die by the evictions recorded after it.
	epoch uint64
	// maxExp is the largest expiry among the flush's entries (MinInt64
	// without any): once a watermark reaches it, the flush holds only dead
	// entries and is dropped whole.
	maxExp int64
	// entries is the number of entries the flush wrote.
	entries int64
}

// meta is the metadata written with every flush: the state of the store
// when the flush was cut, which recovery starts from before it replays the
// changelogs of the batches committed after it.
type meta struct {
	// hasBatch reports whether any batch was committed; batchID is the last.
	hasBatch bool
	batchID  int64
	// n is the number of keys in the store.
	n int64
	// evicts is the evict log (see evictLog).
	evicts evictLog
	// nextID is the id of the next flush.
	nextID uint64
	// live are the flushes whose entries the state reads, oldest first,
	// this one included.
	live []flushRef
}

// version returns the state version of m: the number of committed batches.
func (m *meta) version() int64 {
	if !m.hasBatch {
		return 0
	}
	return m.batchID + 1
}

// append appends the encoding of m to dst.
func (m *meta) append(dst []byte) []byte {
	var flags byte
	if m.hasBatch {
		flags = 1
	}
	dst = append(dst, metaFormat, flags)
	dst = binary.AppendVarint(dst, m.batchID)
	dst = binary.AppendUvarint(dst, uint64(m.n))
	dst = binary.AppendUvarint(dst, m.nextID)
	dst = m.evicts.append(dst)
	dst = binary.AppendUvarint(dst, uint64(len(m.live)))
	for _, f := range m.live {
		dst = binary.AppendUvarint(dst, f.id)
		dst = binary.AppendUvarint(dst, f.epoch)
		dst = binary.AppendVarint(dst, f.maxExp)
		dst = binary.AppendUvarint(dst, uint64(f.entries))
	}
	return dst
}

var errShortMeta = errors.New("truncated")

// decodeMeta decodes a flush's metadata record.
func decodeMeta(v []byte) (meta, error) {
	var m meta
	if len(v) < 2 {
		return m, errShortMeta
	}
	if v[0] != metaFormat {
		return m, fmt.Errorf("metadata format %d, this build reads format %d", v[0], metaFormat)
	}
	if v[1]&^1 != 0 {
		return m, fmt.Errorf("metadata flags %#x unknown", v[1])
	}
	m.hasBatch = v[1]&1 != 0
	r := reader{b: v[2:]}
	m.batchID = r.varint()
	n := r.uvarint()
	m.nextID = r.uvarint()
	if r.err == nil {
		m.evicts, r.err = readEvictLog(&r)
	}
	live := r.uvarint()
	if r.err == nil && live > uint64(len(r.b)) {
		r.err = errShortMeta
	}
	for i := uint64(0); r.err == nil && i < live; i++ {
		f := flushRef{id: r.uvarint(), epoch: r.uvarint(), maxExp: r.varint()}
		f.entries = int64(r.uvarint())
		m.live = append(m.live, f)
	}
	if r.err != nil {
		return meta{}, r.err
	}
	if len(r.b) != 0 {
		return meta{}, fmt.Errorf("%d bytes after the record", len(r.b))
	}
	if n > math.MaxInt64 {
		return meta{}, fmt.Errorf("key count %d out of range", n)
	}
	m.n = int64(n)
	return m, nil
}

// reader decodes varints from a byte slice, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = errShortMeta
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.err = errShortMeta
		return 0
	}
	r.b = r.b[k:]
	return v
}

// bytes returns the next n bytes.
func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errShortMeta
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}
