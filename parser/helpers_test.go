package parser

import (
	"reflect"
	"testing"

	"github.com/sluice-sql/sluice/parser/ast"
)

var (
	posType    = reflect.TypeOf(ast.Pos{})
	sourceType = reflect.TypeOf(ast.Source{})
)

// clearPos zeroes every ast.Pos and ast.Source inside v, so tests compare
// structure only.
func clearPos(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			clearPos(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == posType || v.Type() == sourceType {
			if v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			clearPos(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			clearPos(v.Index(i))
		}
	}
}

func stripped[T any](x T) T {
	clearPos(reflect.ValueOf(&x))
	return x
}

// mustParse parses one statement.
func mustParse(t *testing.T, sql string) ast.Statement {
	t.Helper()
	st, err := ParseOne(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return st
}

func i64(n int64) *int64 { return &n }

func col(name string) *ast.ColumnRef { return &ast.ColumnRef{Name: name} }
func qcol(q, name string) *ast.ColumnRef {
	return &ast.ColumnRef{Qualifier: q, Name: name}
}
func intLit(s string) *ast.Literal { return &ast.Literal{Kind: ast.IntLit, Text: s} }
func strLit(s string) *ast.Literal { return &ast.Literal{Kind: ast.StringLit, Text: s} }
