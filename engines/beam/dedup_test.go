package beam

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

// refDedup is a deliberately naive model of DeduplicateFn in the global
// window: a map of seen keys to their timers, every advance scanning all
// of it.
type refDedup struct {
	event    bool
	d        int64
	seen     map[string]int64
	wm, proc int64
	fired    int64
}

func (r *refDedup) process(key string) engines.Outcome {
	if r.wm > globalGC {
		return engines.DroppedLate
	}
	if _, ok := r.seen[key]; ok {
		return engines.DroppedDuplicate
	}
	if r.event {
		r.seen[key] = min(r.wm+r.d, globalGC)
	} else {
		r.seen[key] = r.proc + r.d
	}
	return engines.Emitted
}

func (r *refDedup) fire(now int64, domain bool) {
	for k, at := range r.seen {
		if domain && now > at || r.wm > globalGC {
			delete(r.seen, k)
			r.fired++
		}
	}
}

// TestGlobalWindowTimersAgainstReference replays random element,
// watermark and processing-time steps through Dedup (whose global window
// fires from a queue) and the naive model, comparing every verdict, the
// seen keys with their timers and the timers fired. A failure prints the
// seed.
func TestGlobalWindowTimersAgainstReference(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 25))
		domain := TimeDomain(rng.IntN(2))
		dur := []int64{1, 5, 100, 10_000}[rng.IntN(4)]
		d, err := NewDedup(domain, dur, 0)
		if err != nil {
			t.Fatal(err)
		}
		ref := &refDedup{event: domain == EventTime, d: dur, seen: map[string]int64{}, wm: MinTimestamp}
		for i := range 300 {
			where := fmt.Sprintf("seed %d, %s time, d %d, step %d", seed, domain, dur, i)
			switch rng.IntN(4) {
			case 0:
				by := 1 + int64(rng.IntN(int(2*dur)))
				d.AdvanceProcessingTime(by)
				ref.proc += by
				ref.fire(ref.proc, !ref.event)
			case 1:
				wm := max(ref.wm, 0) + int64(rng.IntN(int(2*dur)))
				if rng.IntN(50) == 0 {
					wm = globalGC + 1
				}
				d.AdvanceWatermark(wm)
				ref.wm = max(ref.wm, wm)
				ref.fire(ref.wm, ref.event)
			default:
				key := fmt.Sprint(rng.IntN(8))
				if got, want := d.Process(key, int64(rng.IntN(1000))), ref.process(key); got != want {
					t.Fatalf("%s: %s: verdict %v, reference %v", where, key, got, want)
				}
			}
			var want []KeyTimer
			for k, at := range ref.seen {
				want = append(want, KeyTimer{Key: k, Expiry: at})
			}
			slices.SortFunc(want, func(a, b KeyTimer) int { return cmpString(a.Key, b.Key) })
			if got := d.Keys(); !slices.Equal(got, want) {
				t.Fatalf("%s: keys %v, reference %v", where, got, want)
			}
			if d.TimersFired() != ref.fired || d.Len() != len(ref.seen) {
				t.Fatalf("%s: fired %d, len %d; reference %d, %d", where, d.TimersFired(), d.Len(), ref.fired, len(ref.seen))
			}
			if live := len(d.queue) - d.head; live != d.Len() || d.head > 0 && d.head >= live {
				t.Fatalf("%s: queue holds %d keys after %d spent slots, %d are seen", where, live, d.head, d.Len())
			}
		}
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
