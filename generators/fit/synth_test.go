package fit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// synthParams are the known parameters of a log made outside dedupsim's
// generator (synthLog): Poisson counts per 100 ms slot with uniform
// positions in the slot (not exponential gaps), lognormal delays,
// re-stamped retries with one or two copies, and bad-clock rows at fixed
// times.
type synthParams struct {
	seed      uint64
	start     time.Time
	segments  []synthSeg
	delayMu   float64 // ln seconds
	delaySig  float64
	resend    float64 // share of events resent
	twoCopies float64 // share of resent events with two extra copies (else one)
	gapMu     float64
	gapSig    float64
	badAt     []time.Duration // bad-clock rows: arrival offsets
	badSkew   time.Duration
	customers int
	// mode is how copies' event time is set: "restamp" (default),
	// "same" or "jitter" (uniform in +-jitter).
	mode   string
	jitter time.Duration
	// badShare is a share of rows (originals and copies, each on its
	// own) given a clock ahead by a uniform skew in [badMin, badMax].
	badShare       float64
	badMin, badMax time.Duration
}

type synthSeg struct {
	length time.Duration
	rate   float64
}

func defaultSynth() synthParams {
	return synthParams{
		seed:  7,
		start: time.Date(2026, 3, 1, 0, 0, 3, 500_000_000, time.UTC),
		segments: []synthSeg{
			{10 * time.Minute, 30},
			{4 * time.Minute, 0},
			{8 * time.Minute, 60},
		},
		delayMu: math.Log(2), delaySig: 0.8,
		resend: 0.15, twoCopies: 0.3,
		gapMu: math.Log(20), gapSig: 0.5,
		badAt:     []time.Duration{3 * time.Minute, 5*time.Minute + 250*time.Millisecond, 16 * time.Minute, 20 * time.Minute},
		badSkew:   45 * time.Minute,
		customers: 300,
	}
}

// synthLog makes the rows of p, sorted by arrival.
func synthLog(p synthParams) []Record {
	rng := rand.New(rand.NewPCG(p.seed, 99))
	src := rand.NewPCG(p.seed, 100)
	var rows []Record
	id := func() string {
		a, b := rng.Uint64(), rng.Uint64()
		a = a&^0xf000 | 0x4000
		b = b&^(0xc<<60) | 0x8<<60
		return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, (a>>16)&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
	}
	t0 := p.start.UnixMicro()
	off := int64(0)
	const slot = 100_000 // µs
	for _, s := range p.segments {
		for t := off; t < off+s.length.Microseconds(); t += slot {
			n := 0
			if s.rate > 0 {
				n = int(distuv.Poisson{Lambda: s.rate * slot / 1e6, Src: src}.Rand())
			}
			for range n {
				arr := t0 + t + rng.Int64N(slot)
				delay := math.Exp(p.delayMu + p.delaySig*rng.NormFloat64())
				evt := arr - int64(delay*1e6)
				ev := id()
				cust := fmt.Sprint(rng.IntN(p.customers))
				rows = append(rows, Record{ID: []byte(ev), EventTime: evt, Arrival: arr, Customer: []byte(cust)})
				if rng.Float64() < p.resend {
					k := 1
					if rng.Float64() < p.twoCopies {
						k = 2
					}
					at := arr
					for range k {
						at += int64(math.Exp(p.gapMu+p.gapSig*rng.NormFloat64()) * 1e6)
						e := evt + (at - arr)
						switch p.mode {
						case "same":
							e = evt
						case "jitter":
							j := p.jitter.Microseconds()
							e = evt + rng.Int64N(2*j+1) - j
						}
						rows = append(rows, Record{ID: []byte(ev), EventTime: e, Arrival: at, Customer: []byte(cust)})
					}
				}
			}
		}
		off += s.length.Microseconds()
	}
	for _, at := range p.badAt {
		arr := t0 + at.Microseconds()
		rows = append(rows, Record{ID: []byte(id()), EventTime: arr + p.badSkew.Microseconds(), Arrival: arr, Customer: []byte("0")})
	}
	if p.badShare > 0 {
		for i := range rows {
			if rng.Float64() < p.badShare {
				lo, hi := p.badMin.Microseconds(), p.badMax.Microseconds()
				rows[i].EventTime = rows[i].Arrival + lo + rng.Int64N(hi-lo+1)
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b Record) int { return cmpInt(a.Arrival, b.Arrival) })
	return rows
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
