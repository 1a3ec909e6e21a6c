package houserules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRESTRendersOnly checks that the REST facade is a renderer over the
// engine's typed results: it depends on neither the SQL parser nor the
// catalog, not even through another package.
func TestRESTRendersOnly(t *testing.T) {
	for _, rel := range moduleDeps(t, "./server/rest") {
		for _, banned := range []string{"parser", "catalog", "engine", "planner", "exec"} {
			if rel == banned || strings.HasPrefix(rel, banned+"/") && !(banned == "engine" && rel == "engine/api") {
				t.Errorf("server/rest depends on %s%s: it renders the engine's results (engine/api) and needs no %s", module, rel, banned)
			}
		}
	}
}

// module is the path of this module, with the slash that follows it.
const module = "github.com/sluice-sql/sluice/"

// moduleDeps returns the packages of this module that pkg depends on, pkg
// included and tests excluded, by their path below the module's, as go
// list -deps finds them. It skips t when there is no go command.
func moduleDeps(t *testing.T, pkg string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not on PATH: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-deps", pkg)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var deps []string
	for dep := range strings.FieldsSeq(string(out)) {
		if rel, ok := strings.CutPrefix(dep, module); ok {
			deps = append(deps, rel)
		}
	}
	return deps
}

// TestEngineHasNoTextTable checks that the engine answers with typed
// values, not a table of strings for its callers to pick apart: no type
// of package engine or engine/api is named Table or is a struct with both
// Columns []string and Rows [][]string.
func TestEngineHasNoTextTable(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, dir := range []string{"engine", filepath.Join("engine", "api")} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				name := filepath.ToSlash(file[len(root)+1:]) + ": type " + ts.Name.Name
				if strings.EqualFold(ts.Name.Name, "Table") {
					t.Errorf("%s: the engine's results are typed values, not tables of text", name)
				}
				if st, ok := ts.Type.(*ast.StructType); ok && hasField(st, "Columns", "[]string") && hasField(st, "Rows", "[][]string") {
					t.Errorf("%s holds Columns []string and Rows [][]string: the engine's results are typed values, not tables of text", name)
				}
				return true
			})
		}
	}
}

// hasField reports whether st has a field name of the type spelled typ.
func hasField(st *ast.StructType, name, typ string) bool {
	for _, f := range st.Fields.List {
		if spell(f.Type) != typ {
			continue
		}
		for _, n := range f.Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}

// spell writes a type expression of slices and names: [][]string.
func spell(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.ArrayType:
		if e.Len == nil {
			return "[]" + spell(e.Elt)
		}
	case *ast.StarExpr:
		return "*" + spell(e.X)
	}
	return ""
}
