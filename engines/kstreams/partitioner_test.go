package kstreams

import (
	"bufio"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPartitionerVectors checks Murmur2 and PartitionForKey against
// testdata/partitioner.tsv: keys serialized as Kafka's StringSerializer
// (UTF-8) and LongSerializer (8 bytes big-endian) serialize them, with
// the murmur2 and the partitions for 1..8 partitions that Kafka 4.4.0's
// Utils.murmur2, BuiltInPartitioner and Streams' DefaultStreamPartitioner
// give (oracles/kafka-streams checks the file against them). Among them
// are the vectors of Kafka's own UtilsTest.testMurmur2 ("21",
// "foobar", "a-little-bit-long-string", ...).
func TestPartitionerVectors(t *testing.T) {
	f, err := os.Open("testdata/partitioner.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 4 {
			t.Fatalf("%q: want 4 tab-separated fields", line)
		}
		var key []byte
		switch fields[0] {
		case "string":
			key = []byte(fields[1])
		case "long":
			v, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			key = binary.BigEndian.AppendUint64(nil, uint64(v))
		default:
			t.Fatalf("%q: serde %q", line, fields[0])
		}
		want, err := strconv.ParseInt(fields[2], 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		if got := Murmur2(key); int64(got) != want {
			t.Errorf("murmur2(%s %q) = %d, Kafka %d", fields[0], fields[1], got, want)
		}
		for i, ps := range strings.Split(fields[3], ",") {
			p, _ := strconv.Atoi(ps)
			if got := PartitionForKey(key, i+1); got != p {
				t.Errorf("partition(%s %q, %d) = %d, Kafka %d", fields[0], fields[1], i+1, got, p)
			}
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 30 {
		t.Fatalf("%d vectors, want at least 30", n)
	}
}

// TestPartitionForKeyIsToPositive checks that a negative hash loses only
// its sign bit (Utils.toPositive, not Math.abs): "a" hashes to
// -1563381124 (0xa2d0b27c), whose low 31 bits are 584102524, so among 7
// partitions it goes to 584102524 % 7 = 5, where abs would give
// 1563381124 % 7 = 4.
func TestPartitionForKeyIsToPositive(t *testing.T) {
	if h := Murmur2([]byte("a")); h != -1563381124 {
		t.Fatalf("murmur2(a) = %d, want -1563381124", h)
	}
	if p := PartitionForKey([]byte("a"), 7); p != 5 {
		t.Errorf("partition(a, 7) = %d, want 5 (toPositive), not 4 (abs)", p)
	}
}
