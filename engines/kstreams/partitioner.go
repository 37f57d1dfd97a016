package kstreams

// Murmur2 is Kafka's 32-bit murmur2 hash of data
// (org.apache.kafka.common.utils.Utils.murmur2: seed 0x9747b28c, the
// bytes read four at a time, little-endian, the tail mixed in from its
// last byte down), as Java's int: Go's int32 arithmetic wraps the same way
// and its >> on a uint32 is Java's >>>.
func Murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	n := len(data)
	h := seed ^ uint32(n)
	i := 0
	for ; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch n - i {
	case 3:
		h ^= uint32(data[i+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[i+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[i])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// PartitionForKey is the partition the producer's default partitioner
// (BuiltInPartitioner.partitionForKey) sends a record with the serialized
// key to, among n >= 1 partitions: Utils.toPositive(murmur2(key)) % n,
// where toPositive clears the sign bit (it is not Math.abs: murmur2 =
// MinInt32 goes to partition 0).
func PartitionForKey(key []byte, n int) int {
	return int(uint32(Murmur2(key))&0x7fffffff) % n
}
