package registry

import (
	"encoding/binary"
	"runtime"
	"testing"
	"time"
)

// TestScenarioOperatorsMemoryFollowsLiveState feeds each Kafka Streams
// and Beam operator a steady stream (100 new ids a second, every tenth row
// a copy of an id 5 s old) for one hour and for four, with a one-minute
// horizon: the live state is the same, so the heap the operator holds
// after a GC must be too. Keeping each expired key would hold 1e6 more
// keys after four hours, tens of MB.
func TestScenarioOperatorsMemoryFollowsLiveState(t *testing.T) {
	if testing.Short() {
		t.Skip("feeds 1.8 million rows per engine")
	}
	for _, c := range []struct {
		engine string
		spec   QuerySpec
	}{
		{"kafka-streams", QuerySpec{Window: dur(2 * time.Minute)}},
		{"kafka-streams", QuerySpec{Window: dur(2 * time.Minute), Time: "record"}},
		{"beam", QuerySpec{Duration: dur(time.Minute)}},
		{"beam", QuerySpec{Duration: dur(time.Minute), TimeDomain: "event"}},
	} {
		held := func(hours int) (uint64, int64, ScenarioOperator) {
			sq, err := ScenarioQueryFor(c.engine, c.spec)
			if err != nil {
				t.Fatal(err)
			}
			op, err := sq.NewOperator()
			if err != nil {
				t.Fatal(err)
			}
			key := make([]byte, 8)
			const start = 1_700_000_000_000
			n := hours * 3600 * 100
			for i := range n {
				id := uint64(i)
				if i%10 == 9 {
					id = uint64(i - 500)
				}
				binary.BigEndian.PutUint64(key, id)
				ms := start + int64(i)*10
				op.Process(key, nil, ms, ms)
			}
			_, physical := op.State(start + int64(n)*10)
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return m.HeapAlloc, physical, op
		}
		h1, p1, op1 := held(1)
		runtime.KeepAlive(op1)
		op1 = nil
		h4, p4, op4 := held(4)
		runtime.KeepAlive(op4)
		name := c.engine + " " + c.spec.Time + c.spec.TimeDomain
		t.Logf("%s: heap %d B after 1 h, %d B after 4 h; physical state %d, %d", name, h1, h4, p1, p4)
		if p4 > p1+p1/10 || h4 > h1+2<<20 {
			t.Errorf("%s: heap %d B and physical state %d after 4 h, %d B and %d after 1 h: memory grows with the run", name, h4, p4, h1, p1)
		}
	}
}
