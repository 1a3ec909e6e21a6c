package eval_test

import (
	"testing"
)

func TestJSONFuncs(t *testing.T) {
	doc := `'{"name": "cdc", "n": 1.23450, "@type": "UDF", "a": [1, {"b": null}], "o": {"x": "q\"\u00e9"}}'`
	runEvalCases(t, []evalCase{
		{text: "EXTRACTJSONFIELD(" + doc + ", '$.name')", want: "cdc"},
		{text: "EXTRACTJSONFIELD(" + doc + ", '$.n')", want: "1.23450"},
		{text: "EXTRACTJSONFIELD(" + doc + ", '$.@type')", want: "UDF"},
		{text: "EXTRACTJSONFIELD(" + doc + ", '$.a[0]')", want: "1"},
		{text: "EXTRACTJSONFIELD(" + doc + ", '$.a[1].b')", want: "null"},
		{text: "EXTRACTJSONFIELD(" + doc + ", '$.a[-1]')", want: nil},
		{text: "EXTRACTJSONFIELD(" + doc + ", '$.a[2]')", want: nil},
		{text: "EXTRACTJSONFIELD(" + doc + ", '$.a.x')", want: nil},
		{text: "EXTRACTJSONFIELD(" + doc + ", '$[\"o\"]')", want: `{"x":"q\"é"}`},
		{text: "EXTRACTJSONFIELD(" + doc + ", '$.missing')", want: nil},
		{text: "EXTRACTJSONFIELD(" + doc + ", '$')", want: `{"name":"cdc","n":1.23450,"@type":"UDF","a":[1,{"b":null}],"o":{"x":"q\"é"}}`},
		{text: `EXTRACTJSONFIELD('{"a": 1}}', '$.a')`, want: "1"},
		{text: "EXTRACTJSONFIELD('not json', '$.a')", want: nil, wantErr: true},
		{text: "EXTRACTJSONFIELD('{}', 'a')", want: nil, wantErr: true},
		{text: "EXTRACTJSONFIELD('', '$.a')", want: nil},
		{text: "EXTRACTJSONFIELD(S, '$.a')", row: withCol(4, nil), want: nil},

		{text: "IS_JSON_STRING('[1, 2]')", want: true},
		{text: `IS_JSON_STRING('"abc"')`, want: true},
		{text: "IS_JSON_STRING('abc')", want: false},
		{text: "IS_JSON_STRING('')", want: false},
		{text: "IS_JSON_STRING(S)", row: withCol(4, nil), want: false},

		{text: "JSON_ARRAY_LENGTH('[1, [2, 3]]')", want: int32(2)},
		{text: "JSON_ARRAY_LENGTH('{}')", want: nil},
		{text: "JSON_ARRAY_LENGTH('')", want: nil},
		{text: "JSON_ARRAY_LENGTH('[')", want: nil, wantErr: true},

		{text: `JSON_KEYS('{"b": 1, "a": 2, "b": 3}')`, want: []any{"b", "a"}},
		{text: "JSON_KEYS('[]')", want: nil},
		{text: `JSON_RECORDS('{"a": "x", "b": [1], "c": null}')`, want: mapOf("a", "x", "b", "[1]", "c", "null")},
		{text: "JSON_RECORDS('1')", want: nil},

		{text: `JSON_CONCAT('{"a": 1}', '{"b": 2, "a": 3}')`, want: `{"a":3,"b":2}`},
		{text: `JSON_CONCAT('[1, 2]', '[3]')`, want: `[1,2,3]`},
		{text: `JSON_CONCAT('{"a": 1}', '[3]', '"s"')`, want: `[{"a":1},3,"s"]`},
		{text: `JSON_CONCAT('1', NULL)`, want: nil},
		{text: `JSON_CONCAT('1', '')`, want: nil},
		{text: `JSON_CONCAT('1', 'x')`, want: nil, wantErr: true},

		{text: "TO_JSON_STRING(I)", want: "7"},
		{text: "TO_JSON_STRING(I)", row: withCol(0, nil), want: "null"},
		{text: "TO_JSON_STRING(D)", want: "2.5"},
		{text: "TO_JSON_STRING(CAST(1 AS DOUBLE))", want: "1.0"},
		{text: "TO_JSON_STRING(M)", want: "1.50"},
		{text: "TO_JSON_STRING(S)", want: `"hello"`},
		{text: "TO_JSON_STRING(T)", want: "true"},
		{text: "TO_JSON_STRING(BS)", want: `"Cv8="`},
		{text: "TO_JSON_STRING(TS)", want: `"1970-01-02T00:00:00.100"`},
		{text: "TO_JSON_STRING(DT)", want: `"1970-01-11"`},
		{text: "TO_JSON_STRING(TM)", want: `"01:02:03.004"`},
		{text: "TO_JSON_STRING(STRS)", want: `["a",null,"c"]`},
		{text: "TO_JSON_STRING(MP)", row: withCol(13, mapOf("z", int32(1), "a", int32(2))), want: `{"a":2,"z":1}`},
		{text: "TO_JSON_STRING(ST)", want: `{"X":5,"Y":"y"}`},
		{text: "TO_JSON_STRING(AST)", want: `[{"C":"ste","D":2},{"C":"q","D":0}]`},
		{text: "TO_JSON_STRING('a\"\\\n')", want: `"a\"\\\n"`},
	})
}
