package eval_test

import (
	"testing"

	"github.com/sluice-sql/sluice/internal/types"
)

func TestCollectionTypes(t *testing.T) {
	runTypeCases(t, []typeCase{
		{"ARRAY_LENGTH(A)", "INTEGER"}, {"ARRAY_CONTAINS(A, 1)", "BOOLEAN"}, {"ARRAY_REMOVE(STRS, 'a')", "ARRAY<STRING>"},
		{"ARRAY_DISTINCT(AA)", "ARRAY<ARRAY<INTEGER>>"}, {"ARRAY_UNION(A, ARRAY[B])", "ARRAY<BIGINT>"},
		{"ARRAY_CONCAT(A, A)", "ARRAY<INTEGER>"}, {"ARRAY_JOIN(A)", "STRING"}, {"ARRAY_MAX(STRS)", "STRING"},
		{"ARRAY_MIN(A)", "INTEGER"}, {"ARRAY_SORT(A, 'desc')", "ARRAY<INTEGER>"},
		{"AS_MAP(STRS, A)", "MAP<STRING, INTEGER>"}, {"ENTRIES(MP, true)", "ARRAY<STRUCT<`K` STRING, `V` INTEGER>>"},
		{"GENERATE_SERIES(1, I)", "ARRAY<INTEGER>"}, {"GENERATE_SERIES(B, 3, 2)", "ARRAY<BIGINT>"},
		{"MAP_KEYS(MA)", "ARRAY<STRING>"}, {"MAP_VALUES(MA)", "ARRAY<ARRAY<INTEGER>>"}, {"MAP_UNION(MP, MP)", "MAP<STRING, INTEGER>"},
	})
}

func TestCollectionBindErrors(t *testing.T) {
	runBindErrors(t, []typeCase{
		{"ARRAY_LENGTH(S)", "Function 'array_length' does not accept parameters (STRING)."},
		{"ARRAY_CONTAINS(A, 'x')", "Function 'array_contains' does not accept parameters (ARRAY<INTEGER>, STRING)."},
		{"ARRAY_CONCAT(A, STRS)", "Function 'array_concat' does not accept parameters"},
		{"ARRAY_UNION(A)", "Function 'array_union' does not accept parameters (ARRAY<INTEGER>)."},
		{"ARRAY_EXCEPT(NULL, NULL)", "cannot infer"},
		{"ARRAY_JOIN(AA)", "Function 'array_join' does not accept parameters (ARRAY<ARRAY<INTEGER>>)."},
		{"ARRAY_JOIN(A, 1)", "Function 'array_join' does not accept parameters"},
		{"ARRAY_MAX(AST)", "Function 'array_max' does not accept parameters"},
		{"ARRAY_SORT(MP)", "Function 'array_sort' does not accept parameters"},
		{"ENTRIES(MP)", "Function 'entries' does not accept parameters (MAP<STRING, INTEGER>)."},
		{"GENERATE_SERIES(1, D)", "Function 'generate_series' does not accept parameters (INTEGER, DOUBLE)."},
		{"MAP_KEYS(A)", "Function 'map_keys' does not accept parameters (ARRAY<INTEGER>)."},
		{"MAP_UNION(MP, MA)", "Function 'map_union' does not accept parameters"},
		{"AS_MAP(S, A)", "Function 'as_map' does not accept parameters"},
	})
}

func strs(vs ...any) []any { return vs }

func TestCollectionEval(t *testing.T) {
	big := make([]any, 40)
	for i := range big {
		big[i] = int32(i % 20)
	}
	firstTwenty := make([]any, 20)
	copy(firstTwenty, big)
	runEvalCases(t, []evalCase{
		{text: "ARRAY_LENGTH(A)", want: int32(3)},
		{text: "ARRAY_LENGTH(AST)", want: int32(2)},
		{text: "ARRAY_LENGTH(A)", row: nullFullRow(), want: nil},

		{text: "ARRAY_CONTAINS(A, 2)", want: true},
		{text: "ARRAY_CONTAINS(A, 5)", want: false},
		{text: "ARRAY_CONTAINS(A, B - 7)", want: true},
		{text: "ARRAY_CONTAINS(A, 2.0)", want: true},
		{text: "ARRAY_CONTAINS(STRS, CAST(NULL AS STRING))", want: true},
		{text: "ARRAY_CONTAINS(A, I)", row: withCol(0, nil), want: false},
		{text: "ARRAY_CONTAINS(A, 1)", row: nullFullRow(), want: false},
		{text: "ARRAY_CONTAINS(AA, ARRAY[3, NULL])", want: true},

		{text: "ARRAY_REMOVE(ARRAY[1, 2, 1, 3], 1)", want: ints(2, 3)},
		{text: "ARRAY_REMOVE(STRS, CAST(NULL AS STRING))", want: strs("a", "c")},
		{text: "ARRAY_REMOVE(A, 9)", want: ints(1, 2, 3)},
		{text: "ARRAY_REMOVE(A, 1)", row: nullFullRow(), want: nil},

		{text: "ARRAY_DISTINCT(ARRAY['foo', 'bar', 'foo'])", want: strs("foo", "bar")},
		{text: "ARRAY_DISTINCT(ARRAY[0, NULL, 1, 0, NULL, -1])", want: ints(0, nil, 1, -1)},
		{text: "ARRAY_DISTINCT(ARRAY[ARRAY[1], ARRAY[1], NULL, ARRAY[2]])", want: []any{ints(1), nil, ints(2)}},
		{text: "ARRAY_DISTINCT(ARRAY[MAP('a' := 1), MAP('a' := 1), MAP('a' := 2)])", want: []any{mapOf("a", int32(1)), mapOf("a", int32(2))}},
		{text: "ARRAY_DISTINCT(ARRAY[1.0, 1.00, 2.5])", want: []any{dec("1.00"), dec("2.50")}},
		{text: "ARRAY_DISTINCT(A)", row: withCol(10, big), want: firstTwenty},
		{text: "ARRAY_DISTINCT(A)", row: withCol(10, []any{}), want: []any{}},
		{text: "ARRAY_DISTINCT(STRS)", want: strs("a", nil, "c")},
		{text: "ARRAY_DISTINCT(A)", row: nullFullRow(), want: nil},

		{text: "ARRAY_EXCEPT(ARRAY[0, 0, 1, 0, -1], ARRAY[1, -2])", want: ints(0, -1)},
		{text: "ARRAY_EXCEPT(ARRAY[0, 0, 1, 0, -1], ARRAY[1, -1, 0])", want: []any{}},
		{text: "ARRAY_EXCEPT(STRS, ARRAY['a'])", want: strs(nil, "c")},
		{text: "ARRAY_EXCEPT(A, A)", row: withCol(10, nil), want: nil},

		{text: "ARRAY_INTERSECT(ARRAY[0, 0, 1, 0, -1], ARRAY[1, -2, 0])", want: ints(0, 1)},
		{text: "ARRAY_INTERSECT(A, ARRAY[7])", want: []any{}},
		{text: "ARRAY_INTERSECT(A, A)", row: withCol(10, nil), want: nil},

		{text: "ARRAY_UNION(ARRAY[0, 0, 1, 0, -1], ARRAY[1, -2, 0])", want: ints(0, 1, -1, -2)},
		{text: "ARRAY_UNION(A, ARRAY[B])", want: []any{int64(1), int64(2), int64(3), int64(10)}},
		{text: "ARRAY_UNION(A, A)", row: withCol(10, nil), want: nil},

		{text: "ARRAY_CONCAT(A, ARRAY[1])", want: ints(1, 2, 3, 1)},
		{text: "ARRAY_CONCAT(A, CAST(NULL AS ARRAY<INT>))", want: ints(1, 2, 3)},
		{text: "ARRAY_CONCAT(CAST(NULL AS ARRAY<INT>), A)", want: ints(1, 2, 3)},
		{text: "ARRAY_CONCAT(A, A)", row: nullFullRow(), want: nil},

		{text: "ARRAY_JOIN(A)", want: "1,2,3"},
		{text: "ARRAY_JOIN(STRS, '|')", want: "a|null|c"},
		{text: "ARRAY_JOIN(ARRAY[1.23, -23.42, 0.0])", want: "1.23,-23.42,0.00"},
		{text: "ARRAY_JOIN(ARRAY[CAST(1.23 AS DOUBLE), 0, 1e10])", want: "1.23,0.0,1.0E10"},
		{text: "ARRAY_JOIN(ARRAY[true, NULL, false], '')", want: "truenullfalse"},
		{text: "ARRAY_JOIN(A, CAST(NULL AS STRING))", want: "123"},
		{text: "ARRAY_JOIN(A)", row: withCol(10, []any{}), want: ""},
		{text: "ARRAY_JOIN(A)", row: nullFullRow(), want: nil},

		{text: "ARRAY_MAX(ARRAY[0, NULL, 1, 0, -1])", want: int32(1)},
		{text: "ARRAY_MIN(ARRAY[0, NULL, 1, 0, -1])", want: int32(-1)},
		{text: "ARRAY_MAX(ARRAY['foo', 'fo', 'Food', NULL, 'F', 'food'])", want: "food"},
		{text: "ARRAY_MIN(ARRAY['foo', 'fo', 'Food', NULL, 'F', 'food'])", want: "F"},
		{text: "ARRAY_MAX(ARRAY[false, true, false])", want: true},
		{text: "ARRAY_MIN(ARRAY[1.0, -9.9, 1.5])", want: dec("-9.9")},
		{text: "ARRAY_MAX(ARRAY[CAST(NULL AS INT)])", want: nil},
		{text: "ARRAY_MIN(A)", row: withCol(10, []any{}), want: nil},
		{text: "ARRAY_MAX(A)", row: nullFullRow(), want: nil},

		{text: "ARRAY_SORT(ARRAY[0, NULL, 1, 0, -1])", want: ints(-1, 0, 0, 1, nil)},
		{text: "ARRAY_SORT(ARRAY[0, NULL, 1, 0, -1], 'desc')", want: ints(1, 0, 0, -1, nil)},
		{text: "ARRAY_SORT(ARRAY['foo', 'fo', 'Food', NULL, 'F', 'food'], 'ASC')", want: strs("F", "Food", "fo", "foo", "food", nil)},
		{text: "ARRAY_SORT(ARRAY[true, NULL, false], 'DESC')", want: strs(true, false, nil)},
		{text: "ARRAY_SORT(A, 'sideways')", want: nil},
		{text: "ARRAY_SORT(A, CAST(NULL AS STRING))", want: nil},
		{text: "ARRAY_SORT(A)", row: withCol(10, []any{}), want: []any{}},
		{text: "ARRAY_SORT(A)", row: nullFullRow(), want: nil},

		{text: "AS_MAP(ARRAY['a', 'b'], ARRAY[1, 2, 3])", want: mapOf("a", int32(1), "b", int32(2))},
		{text: "AS_MAP(ARRAY['a', 'b', 'c'], ARRAY[1, 2])", want: mapOf("a", int32(1), "b", int32(2), "c", nil)},
		{text: "AS_MAP(ARRAY['a', 'a'], ARRAY[1, 2])", want: mapOf("a", int32(2))},
		{text: "AS_MAP(STRS, A)", row: withCol(10, nil), want: nil},

		{text: "ENTRIES(MP, false)", want: []any{types.StructValue{"a", int32(15)}, types.StructValue{"abc", int32(7)}}},
		{text: "ENTRIES(MAP('b' := 1, 'a' := 2), true)", want: []any{types.StructValue{"a", int32(2)}, types.StructValue{"b", int32(1)}}},
		{text: "ENTRIES(MAP('b' := 1, 'a' := 2), false)", want: []any{types.StructValue{"b", int32(1)}, types.StructValue{"a", int32(2)}}},
		{text: "ENTRIES(MP, true)", row: nullFullRow(), want: nil},
		{text: "ENTRIES(MP, T)", row: withCol(5, nil), want: nil},

		{text: "GENERATE_SERIES(0, 3)", want: ints(0, 1, 2, 3)},
		{text: "GENERATE_SERIES(4, 0)", want: ints(4, 3, 2, 1, 0)},
		{text: "GENERATE_SERIES(4, 4)", want: ints(4)},
		{text: "GENERATE_SERIES(-2, 1, 2)", want: ints(-2, 0)},
		{text: "GENERATE_SERIES(1, -2, -2)", want: ints(1, -1)},
		{text: "GENERATE_SERIES(B, 13, 2)", want: []any{int64(10), int64(12)}},
		{text: "GENERATE_SERIES(0, 3, 0)", want: nil, wantErr: true},
		{text: "GENERATE_SERIES(0, 3, -1)", want: nil, wantErr: true},
		{text: "GENERATE_SERIES(0, 2000000000)", want: nil, wantErr: true},
		{text: "GENERATE_SERIES(I, 3)", row: nullFullRow(), want: nil},

		{text: "MAP_KEYS(MP)", want: strs("a", "abc")},
		{text: "MAP_VALUES(MA)", want: []any{ints(2, 14), ints(-4, 35)}},
		{text: "MAP_KEYS(MP)", row: nullFullRow(), want: nil},
		{text: "MAP_VALUES(MP)", row: nullFullRow(), want: nil},

		{text: "MAP_UNION(MP, MAP('a' := 1, 'z' := 2))", want: mapOf("a", int32(1), "abc", int32(7), "z", int32(2))},
		{text: "MAP_UNION(MP, CAST(NULL AS MAP<STRING, INT>))", want: mapOf("a", int32(15), "abc", int32(7))},
		{text: "MAP_UNION(CAST(NULL AS MAP<STRING, INT>), MP)", want: mapOf("a", int32(15), "abc", int32(7))},
		{text: "MAP_UNION(MP, MP)", row: nullFullRow(), want: nil},
	})
}

func TestCollectionsDoNotAlias(t *testing.T) {
	row := fullRow()
	in := row[10].([]any)
	v, err := evalText(t, "ARRAY_SORT(A, 'DESC')", row)
	if err != nil || !deepValueEqual(v, ints(3, 2, 1)) {
		t.Fatalf("ARRAY_SORT = %v, %v", v, err)
	}
	if !deepValueEqual(in, ints(1, 2, 3)) {
		t.Errorf("ARRAY_SORT changed its argument to %v", in)
	}
}
