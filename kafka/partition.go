package kafka

// KeyPartition returns the partition of n that Kafka's default partitioner
// (the Java client's, franz-go's and sarama's murmur2 partitioners) gives a
// record with a non-nil key: toPositive(murmur2(key)) % n. Sluice uses it
// to place rows it rekeys exactly where a producer of the partner topic
// would have put the same key.
func KeyPartition(key []byte, n int32) int32 {
	if n <= 0 {
		return 0
	}
	return int32(murmur2(key)&0x7fffffff) % n
}

// murmur2 is the 32-bit MurmurHash2 with Kafka's seed, over the key's bytes
// read as little-endian words.
func murmur2(b []byte) uint32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	h := seed ^ uint32(len(b))
	for len(b) >= 4 {
		k := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
		b = b[4:]
	}
	switch len(b) {
	case 3:
		h ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(b[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
