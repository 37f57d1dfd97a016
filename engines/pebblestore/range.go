package pebblestore

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/dedupsim/dedupsim/engines"
)

// Range calls fn with every key and its expiry in ascending byte order of
// the keys, including the current batch's Adds and without its Evicts,
// until fn returns false. key is only valid during the call, and fn must
// not call the store.
//
// A key has at most one live copy (an Add stores a key only where no live
// copy is), so Range merges the live entries of the overlay, the NoExpiry
// keys and every live flush, each in key order, without comparing copies.
func (s *Store) Range(fn func(key []byte, expiresAt int64) bool) (err error) {
	if s.err != nil {
		return s.err
	}
	defer s.recoverFatal("range", &err)
	if err := s.waitFlush(); err != nil {
		s.err = fmt.Errorf("pebblestore %s: range: flush: %s", s.dir, oneLine(err.Error()))
		return s.err
	}
	items := s.ov.sortedByKey(func(i int) bool {
		e := &s.ov.ents[i]
		return !s.evl.dead(e.exp, e.epoch)
	})
	cs := make([]*cursor, 0, len(s.flushes)+1)
	defer func() {
		for _, c := range cs {
			if cerr := c.it.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("pebblestore %s: range: %w", s.dir, cerr)
			}
		}
	}()
	open := func(lo, hi []byte, f *flushState) error {
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return fmt.Errorf("pebblestore %s: range: %w", s.dir, err)
		}
		c := &cursor{it: it, f: f, skip: 1}
		if f != nil {
			c.skip = flushHeaderLen + 1
		}
		cs = append(cs, c)
		c.ok = it.First()
		return c.settle(s)
	}
	if err := open([]byte{foreverPrefix}, []byte{foreverPrefix + 1}, nil); err != nil {
		return err
	}
	for _, f := range s.flushes {
		if f.dropping {
			continue
		}
		lo := append(appendFlush(nil, f.id), entryKind)
		hi := append(appendFlush(nil, f.id), entryKind+1)
		if err := open(lo, hi, f); err != nil {
			return err
		}
	}
	next := 0 // the next overlay item
	for {
		var best *cursor
		for _, c := range cs {
			if c.ok && (best == nil || bytes.Compare(c.key, best.key) < 0) {
				best = c
			}
		}
		if next < len(items) {
			k := s.ov.key(int(items[next].idx))
			if best == nil || bytes.Compare(k, best.key) < 0 {
				if !fn(k, s.ov.ents[items[next].idx].exp) {
					return nil
				}
				next++
				continue
			}
		}
		if best == nil {
			return nil
		}
		if !fn(best.key, best.exp) {
			return nil
		}
		best.ok = best.it.Next()
		if err := best.settle(s); err != nil {
			return err
		}
	}
}

// cursor is one sorted source of Range: the NoExpiry keys (f nil) or one
// flush's entries, positioned on a live entry (ok) or exhausted.
type cursor struct {
	it   *pebble.Iterator
	f    *flushState
	skip int // bytes of the Pebble key before the key
	ok   bool
	key  []byte
	exp  int64
}

// settle moves c forward to its first live entry and decodes it.
func (c *cursor) settle(s *Store) error {
	for ; c.ok; c.ok = c.it.Next() {
		c.key = c.it.Key()[c.skip:]
		if c.f == nil {
			c.exp = engines.NoExpiry
			return nil
		}
		v := c.it.Value()
		if len(v) != 8 {
			return fmt.Errorf("pebblestore %s: range: flush %d: a %d-byte value, want 8", s.dir, c.f.id, len(v))
		}
		c.exp = int64(binary.BigEndian.Uint64(v))
		if !s.evl.dead(c.exp, c.f.epoch) {
			return nil
		}
	}
	return c.it.Error()
}
