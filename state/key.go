package state

import (
	"encoding/binary"
	"fmt"
)

// Key layout (see doc.go):
//
//	's' | uvarint(len q) q | uint32be(partition) | 't' | uvarint(len name) name | key
//	's' | uvarint(len q) q | uint32be(partition) | 'o' | uvarint(len name) name  -> int64be offset
//
// Uvarint length prefixes are prefix-free, so no query, partition or table
// prefix is a prefix of another one's, whatever bytes the names contain.
const (
	nsState    = 's'
	kindTable  = 't'
	kindOffset = 'o'
)

func appendSegment(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// queryPrefix returns the prefix of every key of query.
func queryPrefix(query string) []byte {
	return appendSegment([]byte{nsState}, query)
}

// partitionPrefix returns the prefix of every key of one partition of query.
func partitionPrefix(query string, partition int32) []byte {
	return binary.BigEndian.AppendUint32(queryPrefix(query), uint32(partition))
}

// tablePrefix returns the prefix of every data key of one state table.
func tablePrefix(query string, partition int32, name string) []byte {
	b := append(partitionPrefix(query, partition), kindTable)
	return appendSegment(b, name)
}

// offsetsPrefix returns the prefix of the changelog offset keys of a partition.
func offsetsPrefix(query string, partition int32) []byte {
	return append(partitionPrefix(query, partition), kindOffset)
}

// offsetKey returns the key holding the changelog offset of one state table.
func offsetKey(query string, partition int32, table string) []byte {
	return appendSegment(offsetsPrefix(query, partition), table)
}

// prefixEnd returns the smallest key greater than every key starting with p,
// or nil when there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// decodeSegment reads one length-prefixed segment from the front of b.
func decodeSegment(b []byte) (string, []byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return "", nil, fmt.Errorf("state: corrupt key segment %q", b)
	}
	return string(b[w : w+int(n)]), b[w+int(n):], nil
}
