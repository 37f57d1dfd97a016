//go:build ignore

// make_log writes a large event log for BENCHMARKS.md ("Event logs") with
// the traffic of make_log.sh, fast enough for 1e8 rows: its own code and
// random numbers (math/rand/v2's ChaCha8), not dedupsim's generator.
//
//	go run experiments/log-scale/make_log.go ROWS > log.csv
//
// Rows arrive as a Poisson process of 50,000 rows/s from
// 2026-03-01T00:00:00Z; each new event's event time is its arrival less an
// exponential delay (mean 2 s); 10% of events are resent once, 1 to 2 x
// 20 s of rows later (uniform over the rows between), the copy re-stamped
// (its own arrival less an exponential delay); uuid v4 ids; 1,000
// customers. Columns: event_id, customer_id, event_time, arrival (epoch
// microseconds); rows in arrival order.
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
)

func main() {
	n := int64(1_000_000)
	if len(os.Args) > 1 {
		v, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil || v < 1 || v > 1e12 {
			fmt.Fprintf(os.Stderr, "make_log: ROWS %q: want a count such as 1e8\n", os.Args[1])
			os.Exit(2)
		}
		n = int64(v)
	}
	const rate = 50000.0
	const gapRows = 20 * rate
	rng := rand.New(rand.NewChaCha8([32]byte{20, 26, 12, 7}))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	w.WriteString("event_id,customer_id,event_time,arrival\n")
	type resend struct {
		id   [36]byte
		cust int64
	}
	pend := map[int64]resend{}
	t := float64(1772323200) * 1e6 // microseconds
	var line []byte
	for i := int64(0); i < n; i++ {
		t += rng.ExpFloat64() * 1e6 / rate
		r, ok := pend[i]
		if ok {
			delete(pend, i)
		} else {
			var b [16]byte
			for j := 0; j < 16; j += 8 {
				v := rng.Uint64()
				for k := 0; k < 8; k++ {
					b[j+k] = byte(v >> (8 * k))
				}
			}
			b[6] = b[6]&0x0f | 0x40 // version 4
			b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
			hex.Encode(r.id[0:8], b[0:4])
			r.id[8] = '-'
			hex.Encode(r.id[9:13], b[4:6])
			r.id[13] = '-'
			hex.Encode(r.id[14:18], b[6:8])
			r.id[18] = '-'
			hex.Encode(r.id[19:23], b[8:10])
			r.id[23] = '-'
			hex.Encode(r.id[24:36], b[10:16])
			r.cust = rng.Int64N(1000)
			if rng.Float64() < 0.1 {
				g := i + 1 + int64(rng.Float64()*2*gapRows)
				for {
					if _, taken := pend[g]; !taken {
						break
					}
					g++
				}
				pend[g] = r
			}
		}
		et := math.Round(t - rng.ExpFloat64()*2e6)
		line = append(line[:0], r.id[:]...)
		line = append(line, ',')
		line = strconv.AppendInt(line, r.cust, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(et), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(math.Round(t)), 10)
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			fmt.Fprintln(os.Stderr, "make_log:", err)
			os.Exit(1)
		}
	}
}
