package registry

import (
	"encoding/binary"
	"testing"
	"time"
)

// BenchmarkScenarioOperator feeds each row engine a steady stream: 1,000
// rows a second of event and processing time, one copy of an earlier id in
// ten, a state of about a minute of ids.
func BenchmarkScenarioOperator(b *testing.B) {
	for _, c := range []struct {
		name string
		spec QuerySpec
	}{
		{"kafka-streams", QuerySpec{Window: dur(2 * time.Minute)}},
		{"beam", QuerySpec{Duration: dur(time.Minute)}},
		{"beam-event", QuerySpec{Duration: dur(time.Minute), TimeDomain: "event"}},
	} {
		b.Run("engine="+c.name, func(b *testing.B) {
			sq, err := ScenarioQueryFor(map[bool]string{true: "beam", false: c.name}[c.name == "beam-event"], c.spec)
			if err != nil {
				b.Fatal(err)
			}
			op, err := sq.NewOperator()
			if err != nil {
				b.Fatal(err)
			}
			key := make([]byte, 8)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				id := uint64(i)
				if i%10 == 9 {
					id = uint64(i - 5000)
				}
				binary.BigEndian.PutUint64(key, id)
				ms := 1_700_000_000_000 + int64(i)
				op.Process(key, nil, ms, ms)
				if i%10_000 == 0 {
					op.State(ms)
				}
			}
		})
	}
}
