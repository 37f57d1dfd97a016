package generators

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// stateMagic starts every generator state; the last byte is the format
// version.
const stateMagic = "dedupsim-generator\x02"

// encoder appends the fixed-width little-endian form of a generator's
// position to a buffer.
type encoder struct{ buf []byte }

func (e *encoder) u64(v uint64)  { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }
func (e *encoder) i64(v int64)   { e.u64(uint64(v)) }
func (e *encoder) f64(v float64) { e.u64(math.Float64bits(v)) }

func (e *encoder) flag(b bool) {
	if b {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

func (e *encoder) bytes(b []byte) {
	e.u64(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

// pcg appends a stream's state.
func (e *encoder) pcg(p *rand.PCG) {
	b, err := p.MarshalBinary()
	if err != nil {
		// PCG.MarshalBinary cannot fail; an empty state would be caught
		// by load.
		b = nil
	}
	e.bytes(b)
}

// row appends every field of r.
func (e *encoder) row(r *Row) {
	e.buf = append(e.buf, r.EventID[:]...)
	e.i64(r.EventNum)
	e.i64(r.CustomerID)
	e.i64(r.EventTime)
	e.i64(r.IngestTime)
	e.i64(r.Arrival)
	e.i64(r.Attempt)
	e.i64(r.Payload)
	e.u64(r.Truth.Event)
	e.u64(uint64(r.Truth.Copy))
	e.u64(uint64(r.Truth.Copies))
	e.flag(r.Truth.BadClock)
	e.flag(r.Truth.Heartbeat)
}

// decoder reads what an encoder wrote. The first problem sticks in err;
// later reads return zero values.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.buf) {
		d.err = errors.New("generator state is truncated")
		return nil
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) u64() uint64 {
	b := d.take(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (d *decoder) i64() int64   { return int64(d.u64()) }
func (d *decoder) f64() float64 { return math.Float64frombits(d.u64()) }

func (d *decoder) flag() bool {
	b := d.take(1)
	return b != nil && b[0] == 1
}

func (d *decoder) bytes() []byte {
	n := d.u64()
	if n > uint64(len(d.buf)) {
		d.fail(errors.New("generator state is truncated"))
		return nil
	}
	return d.take(int(n))
}

func (d *decoder) pcg(p *rand.PCG) {
	b := d.bytes()
	if d.err != nil {
		return
	}
	if err := p.UnmarshalBinary(b); err != nil {
		d.fail(fmt.Errorf("random stream: %w", err))
	}
}

func (d *decoder) row(r *Row) {
	copy(r.EventID[:], d.take(len(r.EventID)))
	r.EventNum = d.i64()
	r.CustomerID = d.i64()
	r.EventTime = d.i64()
	r.IngestTime = d.i64()
	r.Arrival = d.i64()
	r.Attempt = d.i64()
	r.Payload = d.i64()
	r.Truth.Event = d.u64()
	r.Truth.Copy = uint32(d.u64())
	r.Truth.Copies = uint32(d.u64())
	r.Truth.BadClock = d.flag()
	r.Truth.Heartbeat = d.flag()
}

// fail records the first problem.
func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}
