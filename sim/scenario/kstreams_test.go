package scenario

import "testing"

// TestKafkaStreamsPartitions checks a kafka-streams query's partitions
// key: taken and handed to the engine, refused below 1 in one line naming
// the key, refused on another engine's query, and left out of the
// resolved JSON when unset (so earlier scenarios resolve as before).
func TestKafkaStreamsPartitions(t *testing.T) {
	s, err := parseDoc(t, base+kstreamsQuery+"    partitions: 4\n")
	if err != nil {
		t.Fatal(err)
	}
	q := s.Queries[len(s.Queries)-1]
	if spec := q.Spec(); spec.Partitions == nil || *spec.Partitions != 4 {
		t.Errorf("spec %+v", spec)
	}
	wantError(t, base+kstreamsQuery+"    partitions: 0\n", "queries[1].partitions", "must be from 1 to 65536", "one task each", "got 0")
	wantError(t, base+kstreamsQuery+"    partitions: -3\n", "queries[1].partitions", "got -3")
	wantError(t, base+kstreamsQuery+"    partitions: two\n", "queries[1].partitions", "a whole number of partitions")
	wantError(t, base+beamQuery+"    partitions: 2\n", "queries[1].partitions", "must be left out for a beam query (it takes timeDomain, duration, window and allowedLateness)")
	wantError(t, base+kstreamsQuery+"    duration: 1m\n", "queries[1].duration", "(it takes window, time, partitions, mode, form and punctuate)")
	s, err = parseDoc(t, base+kstreamsQuery)
	if err != nil {
		t.Fatal(err)
	}
	if q := s.Queries[len(s.Queries)-1]; q.Partitions != nil {
		t.Errorf("partitions %d filled in for a query without it", *q.Partitions)
	}
}
