package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/types"
)

// avroReader reads Avro binary encoding.
type avroReader struct {
	b   []byte
	pos int
}

var errAvroShort = errors.New("Avro record ends early")

func (r *avroReader) long() (int64, error) {
	var u uint64
	var shift uint
	for {
		if r.pos >= len(r.b) {
			return 0, errAvroShort
		}
		c := r.b[r.pos]
		r.pos++
		if shift >= 64 {
			return 0, errors.New("Avro varint overflows 64 bits")
		}
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
		shift += 7
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

func (r *avroReader) fixed(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, errAvroShort
	}
	b := r.b[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

func (r *avroReader) bytes() ([]byte, error) {
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > int64(len(r.b)-r.pos) {
		return nil, errAvroShort
	}
	return r.fixed(int(n))
}

func (r *avroReader) str() (string, error) {
	b, err := r.bytes()
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", errors.New("Avro string is not valid UTF-8")
	}
	return string(b), nil
}

func (r *avroReader) float() (float64, error) {
	b, err := r.fixed(4)
	if err != nil {
		return 0, err
	}
	return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), nil
}

func (r *avroReader) double() (float64, error) {
	b, err := r.fixed(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// blocks reads the blocks of an array or map, calling item once per item.
func (r *avroReader) blocks(item func() error) error {
	for {
		n, err := r.long()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if n < 0 {
			n = -n
			if _, err := r.long(); err != nil { // block size in bytes
				return err
			}
		}
		if n > 1<<24 {
			return fmt.Errorf("Avro block of %d items is too large", n)
		}
		for ; n > 0; n-- {
			if err := item(); err != nil {
				return err
			}
		}
	}
}

func appendAvroLong(dst []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

func appendAvroBytes(dst, b []byte) []byte {
	return append(appendAvroLong(dst, int64(len(b))), b...)
}

func appendAvroString(dst []byte, s string) []byte {
	return append(appendAvroLong(dst, int64(len(s))), s...)
}

// decimalBytes returns the big-endian two's-complement bytes of d's
// unscaled value at scale.
func decimalBytes(d types.Dec, scale int) []byte {
	d = d.Rescale(scale)
	u := d.BigInt()
	if u.Sign() == 0 {
		return []byte{0}
	}
	if u.Sign() >= 0 {
		b := u.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// two's complement of a negative number: 2^(8n) + u
	n := (u.BitLen() + 8) / 8
	m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	m.Add(m, u)
	b := m.Bytes()
	for len(b) < n {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// decimalFromBytes reads a big-endian two's-complement unscaled value.
func decimalFromBytes(b []byte, scale int) types.Dec {
	u := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return types.DecFromBig(u, scale)
}
