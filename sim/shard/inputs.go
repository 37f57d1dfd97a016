package shard

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"reflect"

	"github.com/dedupsim/dedupsim/generators/randvar"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// inputsHash returns the SHA-256 of the values every empirical
// distribution of s read from its file, in the order of the scenario's
// fields: the scenario as run names each file and counts its samples, but
// two machines may hold different files under the same name.
func inputsHash(s *scenario.Scenario) string {
	h := sha256.New()
	walkSpecs(reflect.ValueOf(s), h)
	return hex.EncodeToString(h.Sum(nil))
}

var specType = reflect.TypeFor[randvar.Spec]()

// walkSpecs hashes the samples of every randvar.Spec reachable from v
// through structs, pointers, slices and arrays.
func walkSpecs(v reflect.Value, h hash.Hash) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkSpecs(v.Elem(), h)
		}
	case reflect.Struct:
		if v.Type() == specType {
			sp := v.Interface().(randvar.Spec)
			if sp.File == "" && len(sp.Samples) == 0 {
				return
			}
			var b [8]byte
			h.Write([]byte(sp.File))
			binary.LittleEndian.PutUint64(b[:], uint64(len(sp.Samples)))
			h.Write(b[:])
			for _, x := range sp.Samples {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
				h.Write(b[:])
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkSpecs(v.Field(i), h)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkSpecs(v.Index(i), h)
		}
	}
}
