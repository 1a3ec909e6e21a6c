package engine

import (
	"context"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser/ast"
)

// noColumns is the scope of INSERT VALUES expressions: constants only.
type noColumns struct{}

func (noColumns) Resolve(string, string) (int, *types.Type, bool) { return 0, nil, false }

func (e *Engine) insertValues(ctx context.Context, st *ast.InsertValues) (Result, error) {
	src, ok := e.cat.Source(st.Target)
	if !ok {
		return Result{}, userError(st.TargetPos, "Cannot insert values into an unknown stream/table: `%s`%s", st.Target, e.didYouMean(st.Target))
	}
	if src.IsSource {
		return Result{}, userError(st.TargetPos, "cannot insert into read-only source %s (created with CREATE SOURCE)", st.Target)
	}
	cols := src.Columns()
	names := st.Columns
	if len(names) == 0 {
		// Header columns are read from records, never written.
		writable := cols[:len(src.Key)+len(src.Value)]
		if len(st.Values) != len(writable) {
			return Result{}, userError(st.Pos, "%s has %d columns but %d values were given; list the columns: INSERT INTO %s (col, ...) VALUES (...)", st.Target, len(writable), len(st.Values), st.Target)
		}
		for _, c := range writable {
			names = append(names, c.Name)
		}
	} else if len(names) != len(st.Values) {
		return Result{}, userError(st.Pos, "%d columns but %d values were given; give one value per column", len(names), len(st.Values))
	}
	row := make([]any, len(cols))
	ts := e.cfg.Now().UnixMilli()
	seen := map[string]bool{}
	for i, name := range names {
		if seen[name] {
			return Result{}, userError(st.Values[i].Position(), "column %s is given twice", name)
		}
		seen[name] = true
		v, t, err := e.constant(st.Values[i])
		if err != nil {
			return Result{}, err
		}
		if name == topology.RowPartition || name == topology.RowOffset {
			return Result{}, userError(st.Values[i].Position(), "Inserting into column `%s` is not allowed.", name)
		}
		if name == topology.RowTime {
			c, err := expr.Coerce(v, t, types.BigintType)
			if err != nil || c == nil {
				return Result{}, userError(st.Values[i].Position(), "ROWTIME must be a BIGINT number of milliseconds")
			}
			ts = c.(int64)
			continue
		}
		idx := -1
		for j, c := range cols {
			if c.Name == name {
				idx = j
			}
		}
		if idx < 0 {
			return Result{}, userError(st.Values[i].Position(), "%s has no column %s; its columns are %s", st.Target, name, columnNames(cols))
		}
		if idx >= len(src.Key)+len(src.Value) {
			return Result{}, userError(st.Values[i].Position(), "Cannot insert into HEADER columns: %s reads record headers", name)
		}
		c, err := expr.Coerce(v, t, cols[idx].Type)
		if err != nil {
			return Result{}, userError(st.Values[i].Position(), "value for column %s: %v", name, err)
		}
		row[idx] = c
	}
	if src.Timestamp != "" {
		for j, c := range cols {
			if c.Name == src.Timestamp && row[j] != nil {
				t, err := exec.RecordTime(row[j], src.Timestamp, src.TimestampFormat)
				if err != nil {
					return Result{}, userError(st.Pos, "%v", err)
				}
				ts = t
			}
		}
	}
	keyCodec, err := format.NewKeyCodecProps(src.KeyFormat, src.Key, src.KeyProps)
	if err != nil {
		return Result{}, internal("%v", err)
	}
	valueCodec, err := format.NewValueCodec(src.ValueFormat, src.Value, src.ValueProps)
	if err != nil {
		return Result{}, internal("%v", err)
	}
	key, err := keyCodec.Encode(nil, row[:len(src.Key)])
	if err != nil {
		return Result{}, userError(st.Pos, "cannot encode the key: %v", err)
	}
	value, err := valueCodec.Encode(nil, row[len(src.Key):len(src.Key)+len(src.Value)])
	if err != nil {
		return Result{}, userError(st.Pos, "cannot encode the value: %v", err)
	}
	rec := &kafka.Record{Topic: src.Topic, Partition: -1, Key: key, Value: value, Timestamp: time.UnixMilli(ts)}
	if err := e.produce(ctx, []*kafka.Record{rec}); err != nil {
		return Result{}, internal("cannot write to topic %s: %v", src.Topic, err)
	}
	return Result{Kind: ResultMessage}, nil
}

// constant evaluates an expression that may use no columns.
func (e *Engine) constant(x ast.Expr) (any, *types.Type, error) {
	var ref *ast.ColumnRef
	ast.Walk(x, func(n ast.Expr) bool {
		if c, ok := n.(*ast.ColumnRef); ok && ref == nil {
			ref = c
		}
		return true
	})
	if ref != nil && ref.Qualifier != "" {
		return nil, nil, userError(ref.Pos, "'%s' is not a valid stream/table name or alias. VALUES takes constants only.", ref.Qualifier)
	}
	if ref != nil {
		return nil, nil, userError(ref.Pos, "VALUES takes constants only; '%s' is a column reference", ref.Name)
	}
	if err := expr.ResolveTypes(x, e.cat.Type); err != nil {
		return nil, nil, err
	}
	b, err := expr.Bind(x, noColumns{})
	if err != nil {
		return nil, nil, err
	}
	ev, err := expr.Compile(b)
	if err != nil {
		return nil, nil, err
	}
	v, err := ev.Eval(nil)
	if err != nil {
		return nil, nil, userError(x.Position(), "cannot evaluate %s: %v", b, err)
	}
	return v, b.Type, nil
}

func columnNames(cols []types.Column) string {
	s := ""
	for i, c := range cols {
		if i > 0 {
			s += ", "
		}
		s += c.Name
	}
	return s
}
