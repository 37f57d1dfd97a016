//go:build race

package pebblestore

// raceEnabled is true under the race detector, which makes sync.Pool drop
// items at random, so Pebble's pooled iterators allocate.
const raceEnabled = true
