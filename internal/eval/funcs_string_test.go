package eval_test

import (
	"regexp"
	"testing"
)

func TestStringFuncs(t *testing.T) {
	nullS := withCol(4, nil)
	runEvalCases(t, []evalCase{
		{text: "CONCAT_WS('-', 'a', NULL, 'b')", want: "a-b"},
		{text: "CONCAT_WS(NULL, 'a', 'b')", want: nil},
		{text: "CONCAT_WS(', ', S, S)", want: "hello, hello"},
		{text: "CONCAT_WS(', ', S, 'x')", row: nullS, want: "x"},
		{text: "CONCAT_WS(BS, BS, BS)", want: []byte{0x0a, 0xff, 0x0a, 0xff, 0x0a, 0xff}},
		{text: "CONCAT_WS(BS, CAST(NULL AS BYTES))", want: []byte{}},
		{text: "CONCAT(BS, NULL, BS)", want: []byte{0x0a, 0xff, 0x0a, 0xff}},

		{text: "INITCAP('the QUICK  brown')", want: "The Quick  Brown"},
		{text: "INITCAP('  lead')", want: "Lead"},
		{text: "INITCAP(S)", row: nullS, want: nil},

		{text: "INSTR('CORPORATE FLOOR', 'OR')", want: int32(2)},
		{text: "INSTR('CORPORATE FLOOR', 'OR', 3)", want: int32(5)},
		{text: "INSTR('CORPORATE FLOOR', 'OR', 3, 2)", want: int32(14)},
		{text: "INSTR('CORPORATE FLOOR', 'OR', -3)", want: int32(5)},
		{text: "INSTR('CORPORATE FLOOR', 'OR', -3, 2)", want: int32(2)},
		{text: "INSTR('CORPORATE FLOOR', 'MISSING')", want: int32(0)},
		{text: "INSTR('CORPORATE FLOOR', 'OR', 100)", want: int32(0)},
		{text: "INSTR(S, 'l')", row: nullS, want: int32(0)},
		{text: "INSTR('abc', 'b', CAST(NULL AS INT))", want: nil},

		{text: "LPAD('foo', 7, 'Bar')", want: "BarBfoo"},
		{text: "LPAD('foo', 2, 'Bar')", want: "fo"},
		{text: "LPAD('foo', -1, 'Bar')", want: nil},
		{text: "LPAD('foo', 5, '')", want: nil},
		{text: "RPAD('foo', 7, 'Bar')", want: "fooBarB"},
		{text: "RPAD('', 4, 'ab')", want: "abab"},
		{text: "RPAD('foo', 7, NULL)", want: nil},
		{text: "LPAD(BS, 4, BS)", want: []byte{0x0a, 0xff, 0x0a, 0xff}},
		{text: "RPAD(BS, 3, TO_BYTES('00', 'hex'))", want: []byte{0x0a, 0xff, 0}},
		{text: "LPAD(BS, 1, BS)", want: []byte{0x0a}},

		{text: "MASK('AbCd#$123xYz')", want: "XxXx--nnnxXx"},
		{text: "MASK('AbCd#$123xYz', '*', '-', '.', NULL)", want: "*-*-#$...-*-"},
		{text: "MASK('AbCd', 'XX', NULL, NULL, NULL)", want: nil, wantErr: true},
		{text: "MASK_KEEP_LEFT('AbCd#$123xYz', 5)", want: "AbCd#-nnnxXx"},
		{text: "MASK_KEEP_RIGHT('AbCd#$123xYz', 5)", want: "XxXx--n23xYz"},
		{text: "MASK_LEFT('AbCd#$123xYz', 5)", want: "XxXx-$123xYz"},
		{text: "MASK_RIGHT('AbCd#$123xYz', 5)", want: "AbCd#$1nnxXx"},
		{text: "MASK_LEFT('Ab', 5)", want: "Xx"},
		{text: "MASK_RIGHT('Ab', 5, NULL, '*', NULL, NULL)", want: "A*"},
		{text: "MASK_LEFT('Ab', -1)", want: nil, wantErr: true},
		{text: "MASK_LEFT(S, 1)", row: nullS, want: nil},

		{text: "REPLACE('anaconda', 'a', 'o')", want: "onocondo"},
		{text: "REPLACE('abc', '', '-')", want: "-a-b-c-"},
		{text: "REPLACE(S, NULL, 'o')", want: nil},

		{text: "SPLIT('a.b.c', '.')", want: []any{"a", "b", "c"}},
		{text: "SPLIT('..a..', '.')", want: []any{"", "", "a", "", ""}},
		{text: "SPLIT('abc', '')", want: []any{"a", "b", "c"}},
		{text: "SPLIT('', '')", want: []any{""}},
		{text: "SPLIT('a$$b', '$$')", want: []any{"a", "b"}},
		{text: "SPLIT(S, NULL)", want: nil},
		{text: "SPLIT(BS, TO_BYTES('ff', 'hex'))", want: []any{[]byte{0x0a}, []byte{}}},
		{text: "SPLIT(BS, TO_BYTES('', 'hex'))", want: []any{[]byte{0x0a}, []byte{0xff}}},
		{text: "SPLIT(TO_BYTES('', 'hex'), BS)", want: []any{[]byte{}}},

		{text: "SPLIT_TO_MAP('a=1;b=2;;c;a=3', ';', '=')", want: mapOf("a", "3", "b", "2")},
		{text: "SPLIT_TO_MAP('a=1', ';', ';')", want: nil},
		{text: "SPLIT_TO_MAP('a=1', '', '=')", want: nil},
		{text: "SPLIT_TO_MAP(S, NULL, '=')", want: nil},

		{text: "CHR(75)", want: "K"},
		{text: "CHR(22909)", want: "好"},
		{text: "CHR(-1)", want: nil},
		{text: "CHR('\\u004b')", want: "K"},
		{text: "CHR('\\ud83d\\ude00')", want: "😀"},
		{text: "CHR('004b')", want: nil},
		{text: "CHR('\\uzzzz')", want: nil, wantErr: true},
		{text: "CHR(CAST(NULL AS INT))", want: nil},

		{text: "ELT(2, 'a', 'b', 'c')", want: "b"},
		{text: "ELT(0, 'a')", want: nil},
		{text: "ELT(3, 'a', 'b')", want: nil},
		{text: "FIELD('b', 'a', 'b')", want: int32(2)},
		{text: "FIELD('z', 'a', 'b')", want: int32(0)},
		{text: "FIELD(S, 'a', NULL)", row: nullS, want: int32(0)},

		{text: "UUID(TO_BYTES('0123456789abcdef0123456789abcdef', 'hex'))", want: "01234567-89ab-cdef-0123-456789abcdef"},
		{text: "UUID(BS)", want: nil, wantErr: true},
	})
}

func TestUUIDRandom(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, _ := evalText(t, "UUID()", fullRow())
	b, _ := evalText(t, "UUID()", fullRow())
	if !re.MatchString(a.(string)) || a == b {
		t.Errorf("UUID() = %v, %v; want two distinct random UUIDs", a, b)
	}
}

func TestRegexpFuncs(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: "REGEXP_EXTRACT('test.', 'some_test_string')", want: "test_"},
		{text: "REGEXP_EXTRACT('test.', 'nothing')", want: nil},
		{text: "REGEXP_EXTRACT('(.*) (.*)', 'steven zhang', 2)", want: "zhang"},
		{text: "REGEXP_EXTRACT('(.*) (.*)', 'steven zhang', 3)", want: nil},
		{text: "REGEXP_EXTRACT('(a)|b', 'b', 1)", want: nil},
		{text: "REGEXP_EXTRACT('(', 'x')", want: nil, wantErr: true},
		{text: "REGEXP_EXTRACT('\\p{Upper}+', 'abCDe')", want: "CD"},
		{text: "REGEXP_EXTRACT(S, 'x')", row: withCol(4, nil), want: nil},
		{text: "REGEXP_EXTRACT_ALL('test.', 'test_testa')", want: []any{"test_", "testa"}},
		{text: "REGEXP_EXTRACT_ALL('(\\w+) (\\w*)', 'apurva mehta agavra ', 2)", want: []any{"mehta", ""}},
		{text: "REGEXP_EXTRACT_ALL('x', 'abc')", want: []any{}},
		{text: "REGEXP_REPLACE('baababaa', '(ab)+', 'cat')", want: "bacataa"},
		{text: "REGEXP_REPLACE('John Smith', '(\\w+) (\\w+)', '$2, $1')", want: "Smith, John"},
		{text: "REGEXP_REPLACE('ab', '(a)', '$10')", want: "a0b"},
		{text: "REGEXP_REPLACE('ab', '(?<x>a)', '[${x}]\\$')", want: "[a]$b"},
		{text: "REGEXP_REPLACE('ab', 'a', '$2')", want: nil, wantErr: true},
		{text: "REGEXP_REPLACE('abc', 'x*', '-')", want: "-a-b-c-"},
		{text: "REGEXP_SPLIT_TO_ARRAY('aabcda', '(ab|cd)')", want: []any{"a", "", "a"}},
		{text: "REGEXP_SPLIT_TO_ARRAY('zxy', '(ab|cd)')", want: []any{"zxy"}},
		{text: "REGEXP_SPLIT_TO_ARRAY('abc', '')", want: []any{"a", "b", "c"}},
		{text: "REGEXP_SPLIT_TO_ARRAY('', '')", want: []any{""}},
		{text: "REGEXP_SPLIT_TO_ARRAY('baa', 'a*')", want: []any{"b"}},
		{text: "REGEXP_SPLIT_TO_ARRAY('a', '[')", want: nil, wantErr: true},
	})
}
