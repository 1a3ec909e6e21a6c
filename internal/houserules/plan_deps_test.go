package houserules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// planDerivations are the functions of package exec that derive from a
// plan's steps what the query owns (its topics, its state, the topics its
// stages read). The plan's physical part (topology.Physical) says it now,
// and the engine reads it there.
var planDerivations = map[string]bool{
	"Changelogs":            true,
	"JoinChangelogs":        true,
	"RepartitionTopics":     true,
	"JoinRepartitionTopics": true,
	"ChangelogConfig":       true,
	"HasState":              true,
	"HasJoinState":          true,
	"RepartitionSteps":      true,
	"InputTopics":           true,
	"JoinInputTopics":       true,
}

// TestEngineReadsThePhysicalPlan checks that the engine takes what a
// query owns from its plan's physical part, not from exec's derivations
// of the steps: no non-test file of package engine names one of
// planDerivations from package exec.
func TestEngineReadsThePhysicalPlan(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "engine", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Go files in engine")
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		rel := filepath.ToSlash(file[len(root)+1:])
		for _, name := range execNames(t, rel, f) {
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && planDerivations[sel.Sel.Name] {
					t.Errorf("%s: %s.%s derives from the plan's steps what the plan's physical part says: read the query's topology.Physical (Topics, Stores, Stages)",
						fset.Position(sel.Pos()), name, sel.Sel.Name)
				}
				return true
			})
		}
	}
}

// execNames returns the names file f imports package exec under.
func execNames(t *testing.T, file string, f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil || path != module+"exec" {
			continue
		}
		switch {
		case imp.Name == nil:
			out = append(out, "exec")
		case imp.Name.Name == ".":
			t.Errorf("%s imports package exec into its own scope: import it by name, so that what the engine calls of it can be checked", file)
		case imp.Name.Name != "_":
			out = append(out, imp.Name.Name)
		}
	}
	return out
}
