package metrics

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

const accountantMagic = "DDSACC03"

// MarshalBinary encodes the accountant's counters and the events still in
// flight, so that a resumed run continues its accounting exactly.
func (a *Accountant) MarshalBinary() ([]byte, error) {
	b := []byte(accountantMagic)
	for _, v := range a.counters() {
		b = binary.AppendVarint(b, *v)
	}
	b = binary.AppendUvarint(b, a.win.base)
	b = binary.AppendUvarint(b, uint64(a.win.n))
	for i := 0; i < a.win.n; i++ {
		b = appendEvent(b, a.win.buf[(a.win.start+i)&(len(a.win.buf)-1)])
	}
	// Stragglers in event order, so equal states encode equally.
	ids := make([]uint64, 0, len(a.win.stragglers))
	for e := range a.win.stragglers {
		ids = append(ids, e)
	}
	slices.Sort(ids)
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, e := range ids {
		b = binary.AppendUvarint(b, e)
		b = appendEvent(b, *a.win.stragglers[e])
	}
	return b, nil
}

func appendEvent(b []byte, s eventState) []byte {
	known := uint64(0)
	if s.known {
		known = 1
	}
	b = binary.AppendUvarint(b, known)
	b = binary.AppendUvarint(b, uint64(s.seen))
	b = binary.AppendUvarint(b, uint64(s.late))
	b = binary.AppendUvarint(b, uint64(s.emitted))
	return binary.AppendUvarint(b, uint64(s.copies))
}

// UnmarshalBinary restores an accountant encoded by MarshalBinary.
func (a *Accountant) UnmarshalBinary(data []byte) error {
	if len(data) < len(accountantMagic) || string(data[:len(accountantMagic)]) != accountantMagic {
		return errors.New("accountant state: bad header")
	}
	p := data[len(accountantMagic):]
	bad := errors.New("accountant state: truncated or corrupt")
	varint := func() (int64, error) {
		v, n := binary.Varint(p)
		if n <= 0 {
			return 0, bad
		}
		p = p[n:]
		return v, nil
	}
	uvarint := func() (uint64, error) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, bad
		}
		p = p[n:]
		return v, nil
	}
	var fresh Accountant
	for _, v := range fresh.counters() {
		x, err := varint()
		if err != nil {
			return err
		}
		*v = x
	}
	base, err := uvarint()
	if err != nil {
		return err
	}
	n, err := uvarint()
	if err != nil || n > uint64(len(p)) {
		return bad
	}
	fresh.win.base = base
	if n > 0 {
		fresh.win.grow(int(n))
		fresh.win.n = int(n)
	}
	event := func() (eventState, error) {
		var f [5]uint64
		for k := range f {
			var err error
			if f[k], err = uvarint(); err != nil {
				return eventState{}, err
			}
		}
		return eventState{known: f[0] == 1, seen: uint32(f[1]), late: uint32(f[2]), emitted: uint32(f[3]), copies: uint32(f[4])}, nil
	}
	for i := 0; i < int(n); i++ {
		if fresh.win.buf[i], err = event(); err != nil {
			return err
		}
	}
	ns, err := uvarint()
	if err != nil || ns > uint64(len(p)) {
		return bad
	}
	for i := uint64(0); i < ns; i++ {
		e, err := uvarint()
		if err != nil || e >= base {
			return bad
		}
		s, err := event()
		if err != nil {
			return err
		}
		if fresh.win.stragglers == nil {
			fresh.win.stragglers = map[uint64]*eventState{}
		}
		fresh.win.stragglers[e] = &s
	}
	if len(p) != 0 {
		return fmt.Errorf("accountant state: %d trailing bytes", len(p))
	}
	*a = fresh
	return nil
}

func (a *Accountant) counters() []*int64 {
	return []*int64{&a.InputRows, &a.LogicalEvents, &a.TrueDuplicates, &a.EmittedRows, &a.MissedDuplicates,
		&a.FalseDrops, &a.FalseDropsLate, &a.FalseDropsBadClock, &a.FalseDropsCollide, &a.DroppedByWatermark, &a.DroppedDuplicates}
}
