package eval

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/types"
)

// Conversions between strings and bytes in the encodings hex, utf8, ascii
// and base64, as ENCODE, TO_BYTES and FROM_BYTES use them, and decoding of
// numbers from bytes.

var errEncodings = errors.New("Supported input and output encodings are: hex, utf8, ascii and base64")

func unknownEncoding(name string) error {
	return fmt.Errorf("Unknown encoding type '%s'. Supported formats are 'hex', 'utf8', 'ascii', and 'base64'.", name)
}

// decodeHex decodes hex digits of either case.
func decodeHex(s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return nil, errors.New("Odd number of characters.")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("Illegal hexadecimal character in %q", s)
	}
	return b, nil
}

// stripHex removes a 0x prefix (left-padding an odd number of digits with
// 0) or the X'...' quoting of a hex string, as ENCODE accepts them.
func stripHex(s string) string {
	switch {
	case strings.HasPrefix(s, "0x"):
		if len(s)%2 != 0 {
			return "0" + s[2:]
		}
		return s[2:]
	case len(s) >= 3 && (s[0] == 'x' || s[0] == 'X') && s[1] == '\'' && s[len(s)-1] == '\'':
		return s[2 : len(s)-1]
	}
	return s
}

// asciiString decodes b as US-ASCII: bytes above 0x7F become U+FFFD.
func asciiString(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for _, c := range b {
		if c < utf8.RuneSelf {
			sb.WriteByte(c)
		} else {
			sb.WriteRune(utf8.RuneError)
		}
	}
	return sb.String()
}

// asciiBytes encodes s as US-ASCII: other characters become '?'.
func asciiBytes(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			out = append(out, byte(r))
		} else {
			out = append(out, '?')
		}
	}
	return out
}

// utf8String decodes b as UTF-8, replacing each invalid byte with U+FFFD.
func utf8String(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, w := utf8.DecodeRune(b)
		sb.WriteRune(r)
		b = b[w:]
	}
	return sb.String()
}

// lenientBase64 decodes base64 ignoring characters outside the alphabet and
// stopping at the first '=', as Java's MIME decoder and Commons Codec do.
func lenientBase64(s string) ([]byte, error) {
	if i := strings.IndexByte(s, '='); i >= 0 {
		s = s[:i]
	}
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			clean = append(clean, c)
		}
	}
	if len(clean)%4 == 1 {
		return nil, errors.New("Last unit does not have enough valid bits")
	}
	return base64.RawStdEncoding.DecodeString(string(clean))
}

// mimeBase64 encodes b as Java's MIME encoder does: lines of 76
// characters separated by CRLF.
func mimeBase64(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	if len(s) <= 76 {
		return s
	}
	var sb strings.Builder
	for len(s) > 76 {
		sb.WriteString(s[:76])
		sb.WriteString("\r\n")
		s = s[76:]
	}
	sb.WriteString(s)
	return sb.String()
}

// toBytes implements TO_BYTES(s, encoding).
func toBytes(s, encoding string) ([]byte, error) {
	switch strings.ToLower(encoding) {
	case "hex":
		return decodeHex(s)
	case "utf8":
		return []byte(s), nil
	case "ascii":
		return asciiBytes(s), nil
	case "base64":
		return lenientBase64(s)
	}
	return nil, unknownEncoding(encoding)
}

// fromBytes implements FROM_BYTES(b, encoding).
func fromBytes(b []byte, encoding string) (string, error) {
	switch strings.ToLower(encoding) {
	case "hex":
		return strings.ToUpper(hex.EncodeToString(b)), nil
	case "utf8":
		return utf8String(b), nil
	case "ascii":
		return asciiString(b), nil
	case "base64":
		return mimeBase64(b), nil
	}
	return "", unknownEncoding(encoding)
}

// encode implements ENCODE(s, from, to).
func encode(s, from, to string) (any, error) {
	from, to = strings.ToLower(from), strings.ToLower(to)
	if from == to || !validEncoding(from) || !validEncoding(to) {
		return nil, errEncodings
	}
	var b []byte
	switch from {
	case "hex":
		var err error
		if b, err = decodeHex(stripHex(s)); err != nil {
			return nil, err
		}
	case "utf8":
		b = []byte(s)
	case "ascii":
		b = asciiBytes(s)
	case "base64":
		b, _ = lenientBase64(s)
	}
	switch to {
	case "hex":
		return hex.EncodeToString(b), nil
	case "utf8":
		return utf8String(b), nil
	case "ascii":
		return asciiString(b), nil
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

func validEncoding(e string) bool {
	switch e {
	case "hex", "utf8", "ascii", "base64":
		return true
	}
	return false
}

// byteOrder reads the byte-order argument of the *_FROM_BYTES functions.
func byteOrder(s string) (binary.ByteOrder, error) {
	switch strings.ToUpper(s) {
	case "BIG_ENDIAN":
		return binary.BigEndian, nil
	case "LITTLE_ENDIAN":
		return binary.LittleEndian, nil
	}
	return nil, fmt.Errorf("Byte order must be BIG_ENDIAN or LITTLE_ENDIAN. Unknown byte order '%s'.", s)
}

func fromBytesFunc(name, typ string, ret *types.Type, size int, conv func([]byte, binary.ByteOrder) any) *Func {
	return &Func{
		Name: name, Description: name + "(bytes[, byteOrder]): the " + typ + " encoded in " + fmt.Sprint(size) + " bytes, BIG_ENDIAN (default) or LITTLE_ENDIAN.",
		Check: arities(name, "(BYTES[, STRING])", ret, []int{1, 2}, []types.Kind{types.Bytes}, kString),
		Build: buildStrict(func(a []any) (any, error) {
			order := binary.ByteOrder(binary.BigEndian)
			if len(a) == 2 {
				var err error
				if order, err = byteOrder(a[1].(string)); err != nil {
					return nil, err
				}
			}
			b := a[0].([]byte)
			if len(b) != size {
				return nil, fmt.Errorf("Number of bytes must be equal to %d, but found %d", size, len(b))
			}
			return conv(b, order), nil
		}),
	}
}

func init() {
	Register(&Func{
		Name: "ENCODE", Description: "ENCODE(s, inputEncoding, outputEncoding): re-encodes s between hex, utf8, ascii and base64.",
		Check: fixed("ENCODE", "(STRING, STRING, STRING)", types.StringType, kString, kString, kString),
		Build: buildStrict(func(a []any) (any, error) {
			return encode(a[0].(string), a[1].(string), a[2].(string))
		}),
	})
	Register(&Func{
		Name: "TO_BYTES", Description: "TO_BYTES(s, encoding): the bytes of s read in encoding hex, utf8, ascii or base64.",
		Check: fixed("TO_BYTES", "(STRING, STRING)", types.BytesType, kString, kString),
		Build: buildStrict(func(a []any) (any, error) {
			b, err := toBytes(a[0].(string), a[1].(string))
			if err != nil {
				return nil, err
			}
			return b, nil
		}),
	})
	Register(&Func{
		Name: "FROM_BYTES", Description: "FROM_BYTES(bytes, encoding): bytes written as a string in encoding hex, utf8, ascii or base64.",
		Check: fixed("FROM_BYTES", "(BYTES, STRING)", types.StringType, []types.Kind{types.Bytes}, kString),
		Build: buildStrict(func(a []any) (any, error) {
			s, err := fromBytes(a[0].([]byte), a[1].(string))
			if err != nil {
				return nil, err
			}
			return s, nil
		}),
	})
	Register(fromBytesFunc("INT_FROM_BYTES", "INTEGER", types.IntType, 4, func(b []byte, o binary.ByteOrder) any {
		return int32(o.Uint32(b))
	}))
	Register(fromBytesFunc("BIGINT_FROM_BYTES", "BIGINT", types.BigintType, 8, func(b []byte, o binary.ByteOrder) any {
		return int64(o.Uint64(b))
	}))
	Register(fromBytesFunc("DOUBLE_FROM_BYTES", "DOUBLE", types.DoubleType, 8, func(b []byte, o binary.ByteOrder) any {
		return math.Float64frombits(o.Uint64(b))
	}))
}
