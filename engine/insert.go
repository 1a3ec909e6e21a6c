package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

// noColumns is the scope of INSERT VALUES expressions: constants only.
type noColumns struct{}

func (noColumns) Resolve(string, string) (int, *types.Type, bool) { return 0, nil, false }

func (e *Engine) insertValues(ctx context.Context, st *ast.InsertValues) (Result, error) {
	src, ok := e.cat.Source(st.Target)
	if !ok {
		return Result{}, userError(st.TargetPos, "Cannot insert values into an unknown stream/table: `%s`%s", st.Target, e.didYouMean(st.Target))
	}
	if err := e.checkInsertTarget(st.TargetPos, src); err != nil {
		return Result{}, err
	}
	if err := checkNoHeaderColumns(st, src); err != nil {
		return Result{}, err
	}
	names := st.Columns
	if len(names) == 0 {
		writable := src.Columns()[:len(src.Key)+len(src.Value)]
		if len(st.Values) != len(writable) {
			return Result{}, userError(st.Pos, "%s has %d columns but %d values were given; list the columns: INSERT INTO %s (col, ...) VALUES (...)", st.Target, len(writable), len(st.Values), st.Target)
		}
		for _, c := range writable {
			names = append(names, c.Name)
		}
	} else if len(names) != len(st.Values) {
		return Result{}, userError(st.Pos, "%d columns but %d values were given; give one value per column", len(names), len(st.Values))
	}
	vals := make([]constValue, len(names))
	for i := range names {
		vals[i] = constValue{x: st.Values[i], pos: st.Values[i].Position()}
	}
	return e.insertRow(ctx, st.Target, st.TargetPos, st.Pos, names, vals)
}

// checkNoHeaderColumns refuses INSERT VALUES st into src when it would
// write header columns, which are read from records' headers: those named
// in its column list, or, without a list (values for every column), all
// of src's.
func checkNoHeaderColumns(st *ast.InsertValues, src *catalog.Source) error {
	var named []string
	pos := st.TargetPos
	if len(st.Columns) == 0 {
		for _, c := range src.Headers {
			named = append(named, c.Name)
		}
	} else {
		for i, name := range st.Columns {
			for _, c := range src.Headers {
				if c.Name == name {
					if len(named) == 0 && i < len(st.Values) {
						pos = st.Values[i].Position()
					}
					named = append(named, name)
				}
			}
		}
	}
	if len(named) == 0 {
		return nil
	}
	hint := "List the key and value columns only: header columns are read from the records' headers, and a record written by INSERT VALUES has none."
	if len(st.Columns) == 0 {
		hint = "Without a column list the values are for every column, header columns included; list the key and value columns: INSERT INTO " + st.Target + " (col, ...) VALUES (...)."
	}
	return userError(pos, "Cannot insert into HEADER columns: %s\n%s", strings.Join(named, ", "), hint)
}

// checkInsertTarget refuses rows for a source that statements may not
// write: a windowed one, the processing log, a CREATE SOURCE one, or one
// over a protected topic.
func (e *Engine) checkInsertTarget(pos ast.Pos, src *catalog.Source) error {
	if src.Window != nil {
		return userError(pos, "Cannot insert values into windowed stream/table!\n%s has windowed keys (WINDOW_TYPE %s): rows written here would need a window; insert into the unwindowed source its windows are computed from.", src.Name, src.Window.Type)
	}
	if err := e.checkTopic(pos, useInsertValues, src.Topic); err != nil {
		return err
	}
	if src.IsSource {
		return userError(pos, "Cannot insert values into read-only %s: %s\nIt was created with CREATE SOURCE, which makes it read-only; create a stream over the topic with CREATE STREAM to write it.", kindWord(src.Kind), src.Name)
	}
	return nil
}

// CheckInsert reports whether rows can be inserted into the stream or
// table target, with the error Insert would give: for the API's inserts,
// which refuse a target before they read rows.
func (e *Engine) CheckInsert(target string) error {
	stmt := fmt.Sprintf("INSERT INTO %s VALUES (...)", target)
	src, ok := e.cat.Source(target)
	if !ok {
		return apiStatementError(stmt, userError(ast.Pos{}, "Cannot insert values into an unknown stream/table: `%s`%s", target, e.didYouMean(target)))
	}
	if err := e.checkInsertTarget(ast.Pos{}, src); err != nil {
		return apiStatementError(stmt, err)
	}
	return nil
}

// constValue is a value to insert: a constant expression x to evaluate, or
// a value v of type t given as is; pos locates it for errors.
type constValue struct {
	x   ast.Expr
	v   any
	t   *types.Type
	pos ast.Pos
}

// insertRow writes one record into the stream or table target: the named
// columns take vals, the others are NULL. targetPos and pos locate the
// target and the statement for errors.
func (e *Engine) insertRow(ctx context.Context, target string, targetPos, pos ast.Pos, names []string, vals []constValue) (Result, error) {
	src, ok := e.cat.Source(target)
	if !ok {
		return Result{}, userError(targetPos, "Cannot insert values into an unknown stream/table: `%s`%s", target, e.didYouMean(target))
	}
	if err := e.checkInsertTarget(targetPos, src); err != nil {
		return Result{}, err
	}
	cols := src.Columns()
	row := make([]any, len(cols))
	ts := e.cfg.Now().UnixMilli()
	seen := map[string]bool{}
	for i, name := range names {
		if seen[name] {
			return Result{}, userError(vals[i].pos, "column %s is given twice", name)
		}
		seen[name] = true
		v, t := vals[i].v, vals[i].t
		if vals[i].x != nil {
			var err error
			if v, t, err = e.constant(vals[i].x); err != nil {
				return Result{}, err
			}
		}
		if name == topology.RowPartition || name == topology.RowOffset {
			return Result{}, userError(vals[i].pos, "Inserting into column `%s` is not allowed.", name)
		}
		if name == topology.RowTime {
			c, err := assignValue(v, t, types.BigintType)
			if err != nil || c == nil {
				return Result{}, userError(vals[i].pos, "ROWTIME must be a BIGINT number of milliseconds")
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
			return Result{}, userError(vals[i].pos, "%s has no column %s; its columns are %s", target, name, columnNames(cols))
		}
		if idx >= len(src.Key)+len(src.Value) {
			return Result{}, userError(vals[i].pos, "Cannot insert into HEADER columns: %s\nHeader columns are read from the records' headers; list the key and value columns only.", name)
		}
		c, err := assignValue(v, t, cols[idx].Type)
		if err != nil {
			return Result{}, userError(vals[i].pos, "value for column %s: %v", name, err)
		}
		row[idx] = c
	}
	if src.Timestamp != "" {
		for j, c := range cols {
			if c.Name == src.Timestamp && row[j] != nil {
				t, err := exec.RecordTime(row[j], src.Timestamp, src.TimestampFormat)
				if err != nil {
					return Result{}, userError(pos, "%v", err)
				}
				ts = t
			}
		}
	}
	if err := e.checkRegistry(pos, src.KeyFormat, src.ValueFormat); err != nil {
		return Result{}, err
	}
	sr := format.SR{Registry: e.cfg.Registry, Topic: src.Topic}
	keyCodec, err := format.NewKeyCodecSR(src.KeyFormat, src.Key, src.KeyProps, sr)
	if err != nil {
		return Result{}, internal("%v", err)
	}
	valueCodec, err := format.NewValueCodecSR(src.ValueFormat, src.Value, src.ValueProps, sr)
	if err != nil {
		return Result{}, internal("%v", err)
	}
	key, err := keyCodec.Encode(nil, row[:len(src.Key)])
	if err != nil {
		return Result{}, userError(pos, "cannot encode the key: %v", err)
	}
	value, err := valueCodec.Encode(nil, row[len(src.Key):len(src.Key)+len(src.Value)])
	if err != nil {
		return Result{}, userError(pos, "cannot encode the value: %v", err)
	}
	rec := &kafka.Record{Topic: src.Topic, Partition: -1, Key: key, Value: value, Timestamp: time.UnixMilli(ts)}
	// A record handed to Kafka may be written whatever its caller does
	// next: the statement commits.
	if ctx, err = commit(ctx); err != nil {
		return Result{}, err
	}
	if err := e.produce(ctx, []*kafka.Record{rec}); err != nil {
		return Result{}, internal("cannot write to topic %s: %v", src.Topic, err)
	}
	return Result{Kind: ResultStatus}, nil
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
		return nil, nil, userError(ref.Pos, "Failed to prepare statement: '%s' is not a valid stream/table name or alias. VALUES takes constants only.", ref.Qualifier)
	}
	if ref != nil {
		return nil, nil, userError(ref.Pos, "VALUES takes constants only; '%s' is a column reference", ref.Name)
	}
	if err := bind.ResolveTypes(x, e.cat.Type); err != nil {
		return nil, nil, err
	}
	b, err := bind.Bind(x, noColumns{})
	if err != nil {
		return nil, nil, err
	}
	ev, err := eval.Compile(b)
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
