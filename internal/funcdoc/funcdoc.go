package funcdoc

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/internal/eval"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/planner"
)

// Function describes one function of the registry.
type Function struct {
	Name string
	// Type is SCALAR, AGGREGATE or TABLE.
	Type string
	// Category is ksqlDB's category of the function (MATHEMATICAL,
	// STRING, ..., AGGREGATE, TABLE).
	Category    string
	Description string
	// Signatures are the argument lists the function accepts, one a line,
	// e.g. ABS(INTEGER|BIGINT|DOUBLE|DECIMAL).
	Signatures []string
	// TableSource, for an aggregate, says it also aggregates tables (it
	// can undo a row).
	TableSource bool
}

// All returns every function: the scalar ones, the aggregates, then the
// table functions, each sorted by name. It fails when a function's
// arguments cannot be told, so that none is left undocumented.
func All() ([]Function, error) {
	var out []Function
	var missing []string
	add := func(f Function) {
		if f.Signatures == nil {
			missing = append(missing, f.Name)
		}
		out = append(out, f)
	}
	for _, n := range eval.FuncNames() {
		f, _ := eval.LookupFunc(n)
		add(Function{Name: n, Type: "SCALAR", Category: category(n), Description: f.Description,
			Signatures: probe(n, func(args []*types.Type) error { _, err := f.Check(args); return err })})
	}
	for _, n := range eval.AggregateNames() {
		a, _ := eval.LookupAggregate(n)
		add(Function{Name: n, Type: "AGGREGATE", Category: "AGGREGATE", Description: a.Description, TableSource: a.Retractable,
			Signatures: probe(n, func(args []*types.Type) error { _, err := a.Check(args); return err })})
	}
	tf := planner.TableFunctions()
	names := make([]string, 0, len(tf))
	for n := range tf {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		add(Function{Name: n, Type: "TABLE", Category: "TABLE", Description: tf[n], Signatures: signatures[n]})
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("no arguments known for %s: add them to the signatures table", strings.Join(missing, ", "))
	}
	return out, nil
}

// Lookup returns the function named name (case-insensitive).
func Lookup(name string) (Function, bool) {
	all, _ := All()
	for _, f := range all {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return Function{}, false
}

// signatures are the arguments of the functions whose Check errors do not
// list them.
var signatures = map[string][]string{
	"AS_VALUE":     {"AS_VALUE(T)"},
	"COALESCE":     {"COALESCE(T, T, ...)"},
	"COUNT":        {"COUNT(*)", "COUNT(ANY)"},
	"EXPLODE":      {"EXPLODE(ARRAY<T>)"},
	"CUBE_EXPLODE": {"CUBE_EXPLODE(ARRAY<T>)"},
	"GREATEST":     {"GREATEST(T, T, ...) where T is a number, STRING, BYTES, DATE, TIME or TIMESTAMP"},
	"IFNULL":       {"IFNULL(T, T)"},
	"LEAST":        {"LEAST(T, T, ...) where T is a number, STRING, BYTES, DATE, TIME or TIMESTAMP"},
	"NULLIF":       {"NULLIF(T, T)"},
	"TOPK": {"TOPK(T, INTEGER k) where T is a number, STRING, BYTES, DATE, TIME or TIMESTAMP",
		"TOPK(T, ANY, ..., INTEGER k)"},
	"TOPKDISTINCT": {"TOPKDISTINCT(T, INTEGER k) where T is a number, STRING, BYTES, DATE, TIME or TIMESTAMP"},
}

// probes are argument lists no function accepts: none, and more arguments
// than any fixed signature takes.
var probes = [][]*types.Type{
	{},
	{types.BooleanType, types.BooleanType, types.BooleanType, types.BooleanType, types.BooleanType, types.BooleanType, types.BooleanType},
}

// probe returns the signatures of function name: from the signatures
// table, or from the alternatives its check's errors list.
func probe(name string, check func([]*types.Type) error) []string {
	if s, ok := signatures[name]; ok {
		return s
	}
	for _, args := range probes {
		err := check(args)
		if err == nil {
			continue
		}
		if s := alternatives(name, err); s != nil {
			return s
		}
	}
	return nil
}

// alternatives reads the accepted arguments out of a check's error, in
// either of the registry's two forms: ksqlDB's "Valid alternatives are:"
// followed by calls, or "; expected" followed by argument lists.
func alternatives(name string, err error) []string {
	msg := err.Error()
	if i := strings.Index(msg, "Valid alternatives are:"); i >= 0 {
		rest := strings.TrimSpace(msg[i+len("Valid alternatives are:"):])
		// One alternative a line, or all on one line separated by commas.
		calls := strings.Split(rest, "\n")
		if len(calls) == 1 {
			calls = splitCalls(name, rest)
		}
		var out []string
		for _, call := range calls {
			if call = strings.TrimSpace(call); call != "" {
				out = append(out, upperName(name, call))
			}
		}
		return out
	}
	if i := strings.LastIndex(msg, "; expected "); i >= 0 {
		rest := msg[i+len("; expected "):]
		if strings.HasPrefix(rest, "(") {
			return splitLists(name, rest)
		}
		return []string{name + ": " + rest}
	}
	return nil
}

// splitLists turns "(A), (B, C) or (D) where ..." into NAME(A), NAME(B, C)
// and NAME(D) where ...; a list it cannot split stays one line.
func splitLists(name, s string) []string {
	var out []string
	depth, start := 0, -1
	for i, r := range s {
		switch r {
		case '(', '<':
			if depth == 0 && r == '(' {
				start = i
			}
			depth++
		case ')', '>':
			depth--
			if depth == 0 && r == ')' && start >= 0 {
				out = append(out, name+s[start:i+1])
				start = -1
				rest := strings.TrimSpace(s[i+1:])
				rest = strings.TrimPrefix(rest, ",")
				rest = strings.TrimSpace(rest)
				if strings.HasPrefix(rest, "where ") {
					// A condition on the types applies to the whole list.
					return []string{name + strings.TrimSpace(s)}
				}
			}
		}
	}
	if depth != 0 || len(out) == 0 {
		return []string{name + strings.TrimSpace(s)}
	}
	return out
}

// splitCalls splits "f(A), f(B)" into its calls: at each comma followed
// by the function's name and a parenthesis.
func splitCalls(name, s string) []string {
	var out []string
	sep := ", " + strings.ToLower(name) + "("
	for {
		i := strings.Index(strings.ToLower(s), sep)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+2:]
	}
}

// upperName writes the function name of a call in upper case, as the
// rest of the reference does.
func upperName(name, call string) string {
	if len(call) >= len(name) && strings.EqualFold(call[:len(name)], name) {
		return name + call[len(name):]
	}
	return call
}
