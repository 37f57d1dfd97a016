package metrics

import (
	"encoding/binary"
	"errors"
	"fmt"
)

const accountantMagic = "DDSACC01"

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
		s := a.win.buf[(a.win.start+i)&(len(a.win.buf)-1)]
		known := uint64(0)
		if s.known {
			known = 1
		}
		b = binary.AppendUvarint(b, known)
		b = binary.AppendUvarint(b, uint64(s.seen))
		b = binary.AppendUvarint(b, uint64(s.late))
		b = binary.AppendUvarint(b, uint64(s.emitted))
		b = binary.AppendUvarint(b, uint64(s.copies))
	}
	return b, nil
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
	for i := 0; i < int(n); i++ {
		var f [5]uint64
		for k := range f {
			if f[k], err = uvarint(); err != nil {
				return err
			}
		}
		fresh.win.buf[i] = eventState{known: f[0] == 1, seen: uint32(f[1]), late: uint32(f[2]), emitted: uint32(f[3]), copies: uint32(f[4])}
	}
	if len(p) != 0 {
		return fmt.Errorf("accountant state: %d trailing bytes", len(p))
	}
	*a = fresh
	return nil
}

func (a *Accountant) counters() []*int64 {
	return []*int64{&a.InputRows, &a.LogicalEvents, &a.TrueDuplicates, &a.EmittedRows, &a.MissedDuplicates,
		&a.FalseDrops, &a.FalseDropsLate, &a.FalseDropsCollide, &a.DroppedByWatermark, &a.DroppedDuplicates}
}
