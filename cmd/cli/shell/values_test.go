package shell

import (
	"context"
	"io"
	"math"
	"testing"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
)

// rowsEngine answers every statement with a push query of the given
// columns and rows.
type rowsEngine struct {
	api.Unimplemented
	cols []types.Column
	rows [][]any
}

func (e *rowsEngine) Execute(context.Context, *api.Session, string, ...api.Options) ([]api.Result, error) {
	i := 0
	st := api.NewStream("transient_3", api.Columns(e.cols, 0), func(context.Context) ([]any, error) {
		if i == len(e.rows) {
			return nil, io.EOF
		}
		i++
		return e.rows[i-1], nil
	}, func() {}, func() api.EndReason { return api.EndLimit })
	return []api.Result{{Kind: api.ResultRows, Stream: st}}, nil
}

// TestPushQueryValues checks how the shell prints values of each type: as
// ksqlDB's CLI does, and as the engine's own types.FormatValue does.
func TestPushQueryValues(t *testing.T) {
	point := types.StructOf(types.Field{Name: "X", Type: types.IntType}, types.Field{Name: "LABEL", Type: types.StringType})
	for _, tc := range []struct {
		name      string
		termWidth int
		cols      []types.Column
		rows      [][]any
		want      string
	}{
		{
			name: "scalars",
			cols: []types.Column{
				{Name: "B", Type: types.BooleanType}, {Name: "I", Type: types.IntType}, {Name: "D", Type: types.DoubleType},
				{Name: "DEC", Type: types.DecimalOf(4, 2)}, {Name: "S", Type: types.StringType}, {Name: "BY", Type: types.BytesType},
				{Name: "TS", Type: types.TimestampType}, {Name: "DT", Type: types.DateType}, {Name: "TM", Type: types.TimeType},
			},
			rows: [][]any{
				{true, int32(-42), 1.5e10, types.NewDec(1250, 2), `say "hi"`, []byte("hi"),
					types.TimestampValue(1_700_000_000_123), types.DateValue(19000), types.TimeValue(3_723_000)},
				{false, int32(0), 0.25, types.NewDec(-5, 2), "", []byte{}, types.TimestampValue(0), types.DateValue(0), types.TimeValue(1)},
				{nil, nil, math.NaN(), nil, nil, nil, nil, nil, nil},
			},
			want: `+------+------+--------+-------+----------+------+-------------------------+------------+----------+
| B    | I    | D      | DEC   | S        | BY   | TS                      | DT         | TM       |
+------+------+--------+-------+----------+------+-------------------------+------------+----------+
| true | -42  | 1.5E10 | 12.50 | say "hi" | aGk= | 2023-11-14T22:13:20.123 | 2022-01-08 | 01:02:03 |
+-------+------+--------+-------+----------+------+-------------------------+------------+--------------+
| false | 0    | 0.25   | -0.05 |          |      | 1970-01-01T00:00:00.000 | 1970-01-01 | 00:00:00.001 |
| null  | null | NaN    | null  | null     | null | null                    | null       | null         |
+-------+------+--------+-------+----------+------+-------------------------+------------+--------------+
Limit Reached
`,
		},
		{
			name:      "nested",
			termWidth: 100,
			cols: []types.Column{{Name: "N", Type: types.StructOf(
				types.Field{Name: "ID", Type: types.BigintType},
				types.Field{Name: "TAGS", Type: types.ArrayOf(types.StringType)},
				types.Field{Name: "POS", Type: point},
				types.Field{Name: "PRICES", Type: types.MapOf(types.StringType, types.DecimalOf(6, 2))},
			)}},
			rows: [][]any{
				{types.StructValue{int64(7), []any{"a", nil}, types.StructValue{int32(-1), nil},
					&types.MapValue{Keys: []any{"tea", "cake"}, Values: []any{types.NewDec(350, 2), nil}}}},
				{types.StructValue{nil, []any{}, nil, &types.MapValue{}}},
				{nil},
			},
			want: `+------------------------------------------------------------------------------+
| N                                                                            |
+------------------------------------------------------------------------------+
| {ID=7, TAGS=[a, null], POS={X=-1, LABEL=null}, PRICES={tea=3.50, cake=null}} |
| {ID=null, TAGS=[], POS=null, PRICES={}}                                      |
| null                                                                         |
+------------------------------------------------------------------------------+
Limit Reached
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh, out, errOut := newTestShell(t, &rowsEngine{cols: tc.cols, rows: tc.rows})
			sh.TermWidth = tc.termWidth
			if err := sh.Run(context.Background(), "", "SELECT * FROM s EMIT CHANGES;"); err != nil {
				t.Fatalf("Run = %v (%s)", err, errOut)
			}
			if out.String() != tc.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, tc.want)
			}
		})
	}
}

// tombstoneEngine answers a push query over a table whose second row is
// the delete of its key.
type tombstoneEngine struct{ api.Unimplemented }

func (tombstoneEngine) Execute(context.Context, *api.Session, string, ...api.Options) ([]api.Result, error) {
	rows := []api.Row{{Values: []any{int32(10), int32(110)}}, {Values: []any{int32(10), nil}, Tombstone: true}, {Values: []any{int32(11), nil}}}
	i := 0
	cols := []types.Column{{Name: "K", Type: types.IntType}, {Name: "ID", Type: types.IntType}}
	st := api.NewRowStream("transient_4", api.Columns(cols, 1), func(context.Context) (api.Row, error) {
		if i == len(rows) {
			return api.Row{}, io.EOF
		}
		i++
		return rows[i-1], nil
	}, func() {}, func() api.EndReason { return api.EndLimit })
	return []api.Result{{Kind: api.ResultRows, Stream: st}}, nil
}

// TestPushQueryTombstones checks that the shell shows a delete as ksqlDB's
// CLI does: the columns the delete has no value for read <TOMBSTONE>,
// unlike a row's null; CSV keeps them empty.
func TestPushQueryTombstones(t *testing.T) {
	sh, out, errOut := newTestShell(t, tombstoneEngine{})
	if err := sh.Run(context.Background(), "", "SELECT * FROM t EMIT CHANGES;"); err != nil {
		t.Fatalf("Run = %v (%s)", err, errOut)
	}
	want := `+------+------+
| K    | ID   |
+------+------+
| 10   | 110  |
+------+-------------+
| 10   | <TOMBSTONE> |
| 11   | null        |
+------+-------------+
Limit Reached
`
	if out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	out.Reset()
	sh.Format = FormatCSV
	if err := sh.Run(context.Background(), "", "SELECT * FROM t EMIT CHANGES;"); err != nil {
		t.Fatalf("Run = %v (%s)", err, errOut)
	}
	if want := "K,ID\n10,110\n10,\n11,\n"; out.String() != want {
		t.Errorf("CSV stdout:\n%s\nwant:\n%s", out, want)
	}
}
