package generators

import "encoding/binary"

// KeyNumbering returns how to read back the event number from a state key
// of the columns cols (schema indexes, in key order, as Batch.AppendKey
// encodes them) of rows generated under c, or nil when such keys do not
// hold one: only a key of event_id alone does. With int ids the key is the
// number's 8 big-endian bytes; with uuid ids, the UUID the generator wrote
// for the number under c's seed.
//
// The function it returns is exact for any bytes, not only generated
// ones: it reports false for bytes no event number encodes to, and two
// different keys it accepts never give the same number. A state store may
// therefore hold the accepted keys as numbers (one bit each in a bitmap)
// and the rest as bytes, and still compare keys exactly. It does not
// allocate and is safe for concurrent use.
func KeyNumbering(c Config, cols []int) func(key []byte) (uint64, bool) {
	if len(cols) != 1 || cols[0] != ColEventID {
		return nil
	}
	if c.Workload.IDs != UUIDs {
		return func(key []byte) (uint64, bool) {
			if len(key) != 8 {
				return 0, false
			}
			return binary.BigEndian.Uint64(key), true
		}
	}
	ids := newUUIDCipher(c.Seed)
	return ids.number
}
