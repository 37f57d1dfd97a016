package statereader

import (
	"bytes"
	"container/heap"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// Listing an operator's keys takes two passes over its stores when every
// key is listed (a negative Options.Limit), so that the memory it takes
// does not grow with the number of keys of a store that ranges in key
// order:
//
//  1. Read opens each store in turn, counts its keys, checks each key's
//     layout and partition, notes whether the store yields its keys in key
//     order, and closes it. A state that fails a check fails Read, before
//     anything is printed.
//  2. Operator.EachRow opens the operator's stores again and merges them
//     into key order (generators.KeyLayout.SortKey order): a Pebble store
//     yields its keys in ascending byte order (engines/pebblestore/range.go),
//     which is key order unless an 8-byte column holds negative values
//     (SortKey flips their sign bit), so each such store is read through
//     as it goes, holding one key at a time. A store whose keys come in
//     another order (a memory store ranges in hash order; a Pebble store
//     with negative integers, which generated rows never have) is copied
//     into one flat buffer of its keys, which is sorted: for a memory
//     store, whose whole state is loaded in memory anyway, that is one
//     more copy of its keys, without a per-key allocation, made while the
//     store is loaded and kept once it is closed. So is a small store in
//     key order (see copyStoresBelow): its keys take less room than the
//     store held open. Beyond the stores copied whole (a memory store,
//     whose state is loaded whole anyway, or a Pebble store with negative
//     integers), the memory held is thus at most about a megabyte per
//     partition, whatever the number of keys.
//
// A limited listing (Limit 0 or more) takes one pass, keeping only the
// first Limit keys.

// source is one store of an operator: its folder, its partition (-1 for a
// store per operator), and whether the first pass saw its keys come in key
// order.
type source struct {
	dir     string
	part    int
	ordered bool
}

// readOperator reads the state of one dedup operator at version from its
// stores' folders dirs: dir itself for a store per operator, else one
// folder per partition. It lists the first limit keys in the operator's
// Rows, or, for a negative limit, checks every key and leaves the listing
// to EachRow.
func readOperator(dir string, dirs []string, be stores.Backend, version int64, node chain.Node, limit int) (*Operator, error) {
	o := &Operator{
		Name:         node.Operator,
		KeyColumns:   node.KeyNames,
		HasExpiresAt: node.Op.Kind == chain.DropDuplicatesWithinWatermark || node.EventTimeInKeys && node.WatermarkReaches,
		StateDir:     dir,
		Rows:         []Row{},
	}
	if version > 0 {
		b := version - 1
		o.BatchID = &b
	}
	partitions := 0
	if len(dirs) > 1 || dirs[0] != dir {
		partitions = len(dirs)
	}
	sc := &scanner{node: node, partitions: partitions, limit: limit}
	var srcs []source
	var notes []string
	for p, d := range dirs {
		src := source{dir: d, part: p}
		if partitions == 0 {
			src.part = -1
		}
		empty, err := isEmptyDir(d)
		if err != nil {
			return nil, err
		}
		if empty {
			if version > 0 {
				return nil, fmt.Errorf("%s: missing: the commit log ends at batch %d", d, version-1)
			}
			continue
		}
		st, err := be.Read(d, version)
		if err != nil {
			return nil, err
		}
		n := st.Store.Len()
		err = sc.scan(st.Store, &src)
		if cerr := st.Store.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: %w", d, cerr)
		}
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, src)
		o.NumRows += int64(n)
		// A store that keeps only its latest state (Pebble) may be a
		// batch ahead of the commit log: what it holds is what is shown.
		if st.HasBatch == (version > 0) && (!st.HasBatch || st.Batch == version-1) {
			continue
		}
		have := "no batch"
		if st.HasBatch {
			have = fmt.Sprintf("batch %d", st.Batch)
		}
		if partitions > 0 {
			notes = append(notes, fmt.Sprintf("partition %d holds the state of %s", p, have))
			continue
		}
		o.BatchID = nil
		if st.HasBatch {
			last := st.Batch
			o.BatchID = &last
		}
		o.Note = fmt.Sprintf("the store holds the state of %s, the commit log ends at batch %d", have, version-1)
	}
	if len(notes) > 0 {
		o.Note = fmt.Sprintf("%s; the commit log ends at batch %d", strings.Join(notes, ", "), version-1)
	}
	if limit < 0 {
		if sc.seen {
			o.Rows = nil
			o.lister = &lister{
				be: be, version: version, node: node, hasExpiry: o.HasExpiresAt,
				partitions: partitions, l: sc.l, srcs: srcs,
				byteOrder: be.Name == stores.Pebble, copyBelow: copyStoresBelow,
			}
		}
		return o, nil
	}
	slices.SortFunc(sc.top, func(a, b entry) int { return bytes.Compare(a.sort, b.sort) })
	for _, e := range sc.top {
		r, err := makeRow(sc.l, node, o.HasExpiresAt, partitions, e.key, e.exp, e.src.part)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.src.dir, err)
		}
		o.Rows = append(o.Rows, r)
	}
	return o, nil
}

// EachRow calls fn with every row the operator lists, in key order, and
// stops at the first error fn returns, which it returns. For a Read with a
// negative Options.Limit, Rows is nil and EachRow reads the operator's
// stores again, holding a key at a time of each store that ranges in key
// order (see the comment at the top of list.go); each call reads them
// anew, and closes every store it opened before it returns. Otherwise it
// lists Rows.
//
// The first pass (Read) checked every key: an error here means the
// checkpoint changed between the two reads.
func (o *Operator) EachRow(fn func(Row) error) error {
	if o.lister == nil {
		for _, r := range o.Rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
	return o.lister.each(fn)
}

// Listed returns the number of rows EachRow lists: every key for a Read
// with a negative Options.Limit, else len(Rows).
func (o *Operator) Listed() int64 {
	if o.lister != nil {
		return o.NumRows
	}
	return int64(len(o.Rows))
}

// makeRow decodes the key of an entry of a store of the partition part.
func makeRow(l generators.KeyLayout, node chain.Node, hasExpiry bool, partitions int, key []byte, exp int64, part int) (Row, error) {
	vals := l.Decode(key)
	p, err := keyPartition(node.KeyColumns, vals, part, partitions)
	if err != nil {
		return Row{}, err
	}
	r := Row{Key: decodeValues(node, vals), Partition: p}
	if hasExpiry && exp != engines.NoExpiry {
		r.ExpiresAt = formatMicros(exp)
	}
	return r, nil
}

// decode turns a key's columns, as generators.KeyLayout decodes them,
// into the values shown: timestamps in RFC 3339 (TimeLayout).
func decode(l generators.KeyLayout, node chain.Node, key []byte) Key {
	return decodeValues(node, l.Decode(key))
}

// decodeValues is decode of the values l.Decode returned.
func decodeValues(node chain.Node, vals []any) Key {
	cols := generators.Columns()
	k := make(Key, len(vals))
	for i, v := range vals {
		if n, ok := v.(int64); ok && cols[node.KeyColumns[i]].Timestamp {
			v = formatMicros(n)
		}
		k[i] = Column{Name: node.KeyNames[i], Value: v}
	}
	return k
}

func formatMicros(us int64) string { return time.UnixMicro(us).UTC().Format(TimeLayout) }

// entry is one key kept for a limited listing, with the store it was read
// from.
type entry struct {
	sort []byte
	key  []byte
	exp  int64
	src  source
}

// topN keeps the limit smallest entries by sort key: a max-heap, so that
// listing the first rows of a state of millions of keys holds only those.
type topN []entry

func (h topN) Len() int           { return len(h) }
func (h topN) Less(i, j int) bool { return bytes.Compare(h[i].sort, h[j].sort) > 0 }
func (h topN) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topN) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *topN) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// scanner is Read's pass over the stores of one operator: it checks that
// every key has the layout of the first, and, when every key is listed
// (limit negative), that each is in the partition Spark's hash puts it
// in; for a limited listing it keeps the first limit keys.
type scanner struct {
	node       chain.Node
	partitions int
	limit      int
	l          generators.KeyLayout
	seen       bool
	top        topN
	cur, prev  []byte // sort keys of the current and the previous key
}

// scan passes over the keys of one store, src, noting whether they come
// in key order.
func (sc *scanner) scan(store engines.Ranger, src *source) error {
	var bad error
	first := true
	src.ordered = true
	err := store.Range(func(key []byte, exp int64) bool {
		if !sc.seen {
			if sc.l, bad = generators.NewKeyLayout(sc.node.KeyColumns, len(key)); bad != nil {
				return false
			}
			sc.seen = true
		}
		if len(key) != sc.l.Size() {
			bad = fmt.Errorf("keys of %d and %d bytes: not one encoding of columns %s", sc.l.Size(), len(key), strings.Join(sc.node.KeyNames, ", "))
			return false
		}
		sc.cur = sc.l.SortKey(sc.cur, key)
		if !first && bytes.Compare(sc.prev, sc.cur) >= 0 {
			src.ordered = false
		}
		first = false
		sc.prev, sc.cur = sc.cur, sc.prev
		sortKey := sc.prev
		switch {
		case sc.limit < 0:
			if _, bad = keyPartition(sc.node.KeyColumns, sc.l.Decode(key), src.part, sc.partitions); bad != nil {
				return false
			}
		case sc.limit > 0:
			if len(sc.top) == sc.limit {
				if bytes.Compare(sortKey, sc.top[0].sort) >= 0 {
					return true
				}
				heap.Pop(&sc.top)
			}
			heap.Push(&sc.top, entry{sort: slices.Clone(sortKey), key: slices.Clone(key), exp: exp, src: *src})
		}
		return true
	})
	if err != nil {
		return err
	}
	if bad != nil {
		return fmt.Errorf("%s: %w", src.dir, bad)
	}
	return nil
}

// lister lists every key of an operator in key order: Operator.EachRow's
// second pass.
type lister struct {
	be         stores.Backend
	version    int64
	node       chain.Node
	hasExpiry  bool
	partitions int
	l          generators.KeyLayout
	srcs       []source
	// byteOrder is set when the backend's stores range in ascending byte
	// order of their keys (Pebble's do).
	byteOrder bool
	// copyBelow is the size under which a store's keys are copied, sorted
	// and the store closed even if it ranges in key order: see
	// copyStoresBelow.
	copyBelow int64
}

// copyStoresBelow is the room (in bytes, a key and 12 bytes of expiry and
// index each) under which the keys of a store in key order are copied
// rather than read as the merge goes: a Pebble store held open for the
// merge costs far more than a small store's keys (BENCHMARKS.md, "Numbers
// behind the code's comments"), so that a listing over many small
// partitions holds their keys, less, instead of their stores.
const copyStoresBelow = 1 << 20

// each opens the operator's stores and calls fn with their keys merged in
// key order.
func (ls *lister) each(fn func(Row) error) (err error) {
	var all []*cursor
	defer func() {
		for _, c := range all {
			if cerr := c.close(); err == nil && cerr != nil {
				err = fmt.Errorf("%s: %w", c.src.dir, cerr)
			}
		}
	}()
	var live cursors
	for _, src := range ls.srcs {
		st, err := ls.be.Read(src.dir, ls.version)
		if err != nil {
			return err
		}
		c := &cursor{src: src, size: ls.l.Size(), store: st.Store}
		all = append(all, c)
		n := st.Store.Len()
		if ls.byteOrder && src.ordered && int64(n)*int64(ls.l.Size()+12) >= ls.copyBelow {
			c.pull()
		} else if err := c.collect(ls.l, n); err != nil {
			return err
		}
		ok, err := c.advance(ls.l)
		if err != nil {
			return err
		}
		if ok {
			live = append(live, c)
		}
	}
	heap.Init(&live)
	for len(live) > 0 {
		c := live[0]
		r, err := makeRow(ls.l, ls.node, ls.hasExpiry, ls.partitions, c.key, c.exp, c.src.part)
		if err != nil {
			return fmt.Errorf("%s: %w", c.src.dir, err)
		}
		if err := fn(r); err != nil {
			return err
		}
		ok, err := c.advance(ls.l)
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&live, 0)
		} else {
			heap.Pop(&live)
		}
	}
	return nil
}

// cursor is one store's keys in key order, positioned on one of them (key,
// its expiry exp, its sort key sort): pulled from the store's Range as
// the merge goes (next), or copied from it and sorted (keys, exps,
// order).
type cursor struct {
	src   source
	size  int
	store interface { // nil once closed
		engines.Ranger
		Close() error
	}
	// A store ranging in key order.
	next     func() ([]byte, int64, bool)
	stop     func()
	rangeErr error
	started  bool
	// A store ranging in another order: the sort keys of its keys back to
	// back, their expiries, the order of the keys, the next one of it.
	keys  []byte
	exps  []int64
	order []uint32
	i     int
	kb    []byte
	// The current key.
	key, sort, prev []byte
	exp             int64
}

// pull reads the store's keys as the merge goes: key is then the store's
// own, valid until the next advance.
func (c *cursor) pull() {
	r := c.store
	seq := func(yield func([]byte, int64) bool) {
		c.rangeErr = r.Range(func(key []byte, exp int64) bool { return yield(key, exp) })
	}
	c.next, c.stop = iter.Pull2(iter.Seq2[[]byte, int64](seq))
}

// collect copies the keys of the store, n of them, as sort keys, sorts
// them and closes the store.
func (c *cursor) collect(l generators.KeyLayout, n int) error {
	if n >= math.MaxUint32 {
		return fmt.Errorf("%s: %d keys: too many to sort", c.src.dir, n)
	}
	c.keys = make([]byte, 0, n*c.size)
	c.exps = make([]int64, 0, n)
	var bad error
	err := c.store.Range(func(key []byte, exp int64) bool {
		if len(key) != c.size {
			bad = fmt.Errorf("%s: a key of %d bytes, the others have %d: the state changed since it was read", c.src.dir, len(key), c.size)
			return false
		}
		c.kb = l.SortKey(c.kb, key)
		c.keys = append(c.keys, c.kb...)
		c.exps = append(c.exps, exp)
		return true
	})
	if err == nil {
		err = bad
	}
	cerr := c.store.Close()
	c.store = nil
	if err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("%s: %w", c.src.dir, cerr)
	}
	c.order = make([]uint32, len(c.exps))
	for i := range c.order {
		c.order[i] = uint32(i)
	}
	slices.SortFunc(c.order, func(a, b uint32) int { return bytes.Compare(c.at(a), c.at(b)) })
	return nil
}

// at returns the sort key of the collected key i.
func (c *cursor) at(i uint32) []byte {
	off := int(i) * c.size
	return c.keys[off : off+c.size]
}

// advance moves to the next key and reports whether there is one.
func (c *cursor) advance(l generators.KeyLayout) (bool, error) {
	if c.next == nil {
		if c.i == len(c.order) {
			return false, nil
		}
		i := c.order[c.i]
		c.i++
		c.sort, c.exp = c.at(i), c.exps[i]
		c.kb = l.SortKey(c.kb, c.sort) // SortKey undoes itself
		c.key = c.kb
		return true, nil
	}
	key, exp, ok := c.next()
	if !ok {
		if c.rangeErr != nil {
			return false, fmt.Errorf("%s: %w", c.src.dir, c.rangeErr)
		}
		return false, nil
	}
	if len(key) != c.size {
		return false, fmt.Errorf("%s: a key of %d bytes, the others have %d: the state changed since it was read", c.src.dir, len(key), c.size)
	}
	c.prev, c.sort = c.sort, l.SortKey(c.prev, key)
	if c.started && bytes.Compare(c.prev, c.sort) >= 0 {
		return false, fmt.Errorf("%s: keys out of key order: the state changed since it was read", c.src.dir)
	}
	c.started = true
	c.key, c.exp = key, exp
	return true, nil
}

// close ends the store's Range, if pulled, and closes the store.
func (c *cursor) close() error {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	if c.store == nil {
		return nil
	}
	err := c.store.Close()
	c.store = nil
	return err
}

// cursors is a min-heap of cursors by their current sort key.
type cursors []*cursor

func (h cursors) Len() int           { return len(h) }
func (h cursors) Less(i, j int) bool { return bytes.Compare(h[i].sort, h[j].sort) < 0 }
func (h cursors) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)        { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
