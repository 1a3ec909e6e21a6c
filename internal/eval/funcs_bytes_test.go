package eval_test

import (
	"testing"
)

func TestBytesFuncs(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: "ENCODE('4578616d706C6521', 'hex', 'utf8')", want: "Example!"},
		{text: "ENCODE('0x578616d706C6521', 'hex', 'base64')", want: "BXhhbXBsZSE="},
		{text: "ENCODE('X''4578''', 'hex', 'ascii')", want: "Ex"},
		{text: "ENCODE('578616d706C6521', 'hex', 'utf8')", want: nil, wantErr: true},
		{text: "ENCODE('ce95', 'hex', 'ascii')", want: "\ufffd\ufffd"},
		{text: "ENCODE('Ελ', 'ascii', 'hex')", want: "3f3f"},
		{text: "ENCODE('Ελ', 'utf8', 'hex')", want: "ce95cebb"},
		{text: "ENCODE('RXhhbXBsZSE=', 'BASE64', 'UTF8')", want: "Example!"},
		{text: "ENCODE('x', 'utf8', 'utf8')", want: nil, wantErr: true},
		{text: "ENCODE('x', 'utf8', 'null')", want: nil, wantErr: true},
		{text: "ENCODE(S, 'utf8', 'hex')", row: withCol(4, nil), want: nil},

		{text: "TO_BYTES('1aB2', 'hex')", want: []byte{0x1a, 0xb2}},
		{text: "TO_BYTES('abc', 'hex')", want: nil, wantErr: true},
		{text: "TO_BYTES('IQ==', 'base64')", want: []byte{'!'}},
		{text: "TO_BYTES('é', 'ascii')", want: []byte{'?'}},
		{text: "TO_BYTES('é', 'utf8')", want: []byte("é")},
		{text: "TO_BYTES('x', 'ebcdic')", want: nil, wantErr: true},
		{text: "FROM_BYTES(BS, 'hex')", want: "0AFF"},
		{text: "FROM_BYTES(BS, 'base64')", want: "Cv8="},
		{text: "FROM_BYTES(BS, 'utf8')", want: "\n\ufffd"},
		{text: "FROM_BYTES(BS, 'ascii')", want: "\n\ufffd"},
		{text: "FROM_BYTES(BS, NULL)", want: nil},

		{text: "INT_FROM_BYTES(TO_BYTES('AAAH5Q==', 'base64'))", want: int32(2021)},
		{text: "INT_FROM_BYTES(TO_BYTES('5QcAAA==', 'base64'), 'LITTLE_ENDIAN')", want: int32(2021)},
		{text: "INT_FROM_BYTES(BS)", want: nil, wantErr: true},
		{text: "INT_FROM_BYTES(TO_BYTES('AAAH5Q==', 'base64'), 'MIDDLE')", want: nil, wantErr: true},
		{text: "BIGINT_FROM_BYTES(TO_BYTES('AAAAASoF8gA=', 'base64'))", want: int64(5000000000)},
		{text: "DOUBLE_FROM_BYTES(TO_BYTES('QICm/ZvJ9YI=', 'base64'))", want: 532.8738323},
		{text: "DOUBLE_FROM_BYTES(TO_BYTES('gvXJm/2mgEA=', 'base64'), 'LITTLE_ENDIAN')", want: 532.8738323},
	})
}
