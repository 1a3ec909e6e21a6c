package eval

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/types"
)

// Func is a scalar function known to Bind and Compile.
type Func struct {
	// Name is the upper-case SQL name.
	Name string
	// Description is one line for SHOW FUNCTIONS and DESCRIBE FUNCTION.
	Description string
	// Check validates the argument types of a call (nil for an untyped
	// NULL argument) and returns the result type, or an error saying which
	// arguments are accepted.
	Check func(args []*types.Type) (*types.Type, error)
	// Coerce, when set, returns the type argument i is converted to before
	// the call (nil leaves it as is); COALESCE uses it to widen every
	// argument to the result type.
	Coerce func(args []*types.Type, i int, ret *types.Type) *types.Type
	// Build returns the implementation of a call with these argument types
	// (after Coerce) and result type. Compile calls it once per call site.
	Build func(args []*types.Type, ret *types.Type) (Impl, error)
	// LambdaParams, set for higher-order functions, reports whether
	// argument i must be a lambda, given the types of the arguments before
	// it, and if so returns the types of the lambda's parameters. Check then
	// sees the type of a lambda's body as the type of its argument, and
	// Coerce, for a lambda argument, converts the body.
	LambdaParams func(args []*types.Type, i int) (params []*types.Type, isLambda bool, err error)
	// BuildHigher replaces Build for higher-order functions: lambdas holds
	// the compiled lambda of each lambda argument (nil for the others,
	// whose ArgFunc is then nil in the Impl's args).
	BuildHigher func(args []*types.Type, ret *types.Type, lambdas []*Lambda) (Impl, error)
	// UnitArgs lists the argument positions that take a time unit
	// (DAYS, MILLISECONDS, ...): an unqualified name there that is a unit
	// binds as a STRING literal holding the unit's plural name.
	UnitArgs []int
}

// Impl evaluates one call over a row. args evaluate the call's arguments;
// an Impl evaluates only those it needs, so COALESCE stops at the first
// non-null argument. An Impl follows the contract of Evaluator.Eval: it
// returns the call's ksqlDB result, and the first failure met, whether of
// an argument (whose value is then null and the call goes on with it) or of
// the function itself, in which case the result is null. Impls must be safe
// for concurrent use.
type Impl func(row []any, args []ArgFunc) (any, error)

var (
	funcsMu sync.RWMutex
	funcs   = map[string]*Func{}
)

// Register adds f to the function registry, replacing any function of the
// same name. It is meant for package initialization.
func Register(f *Func) {
	funcsMu.Lock()
	defer funcsMu.Unlock()
	funcs[strings.ToUpper(f.Name)] = f
}

// LookupFunc returns the function named name (case-insensitive).
func LookupFunc(name string) (*Func, bool) {
	funcsMu.RLock()
	defer funcsMu.RUnlock()
	f, ok := funcs[strings.ToUpper(name)]
	return f, ok
}

// FuncNames returns the names of all registered functions, sorted.
func FuncNames() []string {
	funcsMu.RLock()
	defer funcsMu.RUnlock()
	out := make([]string, 0, len(funcs))
	for n := range funcs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Strict adapts fn, which takes already evaluated non-null arguments, into
// an Impl that returns null as soon as any argument is null. The argument
// slice passed to fn is only valid during the call.
func Strict(fn func(args []any) (any, error)) Impl {
	return func(row []any, args []ArgFunc) (any, error) {
		var buf [4]any
		vals := buf[:0]
		var err error
		for _, a := range args {
			v, e := a(row)
			keep(&err, e)
			if v == nil {
				return nil, err
			}
			vals = append(vals, v)
		}
		r, e := fn(vals)
		if e != nil {
			keep(&err, e)
			return nil, err
		}
		return r, err
	}
}

// Strict1 adapts a one-argument function; null in gives null out.
func Strict1(fn func(a any) (any, error)) Impl {
	return func(row []any, args []ArgFunc) (any, error) {
		v, err := args[0](row)
		if v == nil {
			return nil, err
		}
		r, e := fn(v)
		if e != nil {
			keep(&err, e)
			return nil, err
		}
		return r, err
	}
}

func typeList(ts []*types.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		if t == nil {
			s[i] = "NULL"
		} else {
			s[i] = t.String()
		}
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func badArgs(name string, ts []*types.Type, want string) error {
	return fmt.Errorf("Function '%s' does not accept parameters %s; expected %s", name, typeList(ts), want)
}

// sig checks a fixed signature where each argument must be one of the
// listed kinds (an untyped NULL matches anything).
func sig(name, want string, ts []*types.Type, kinds ...[]types.Kind) error {
	if len(ts) != len(kinds) {
		return badArgs(name, ts, want)
	}
	for i, t := range ts {
		if t == nil {
			continue
		}
		ok := false
		for _, k := range kinds[i] {
			if t.Kind == k {
				ok = true
			}
		}
		if !ok {
			return badArgs(name, ts, want)
		}
	}
	return nil
}

var (
	kString  = []types.Kind{types.String}
	kInts    = []types.Kind{types.Int, types.Bigint}
	kStrByte = []types.Kind{types.String, types.Bytes}
)

func stringFunc(name, desc string, fn func(string) any) *Func {
	return &Func{
		Name: name, Description: desc,
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := sig(name, "(STRING)", ts, kString); err != nil {
				return nil, err
			}
			return types.StringType, nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict1(func(a any) (any, error) { return fn(a.(string)), nil }), nil
		},
	}
}

func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// substringBounds returns the [start, end) rune range of SUBSTRING(s, pos,
// len) for a value of n runes: pos is 1-based and counts from the end when
// negative.
func substringBounds(n int, pos int64, length int64, hasLen bool) (int, int) {
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
	case pos < 0:
		start = int64(n) + pos
	}
	start = max(0, min(start, int64(n)))
	end := int64(n)
	if hasLen {
		end = max(start, min(start+max(length, 0), int64(n)))
	}
	return int(start), int(end)
}

func init() {
	Register(stringFunc("UCASE", "Upper-cases a string.", func(s string) any { return strings.ToUpper(s) }))
	Register(stringFunc("LCASE", "Lower-cases a string.", func(s string) any { return strings.ToLower(s) }))
	Register(stringFunc("TRIM", "Removes leading and trailing whitespace.", func(s string) any { return javaTrim(s) }))
	Register(&Func{
		Name: "LEN", Description: "Length of a string in characters, or of bytes.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if err := sig("LEN", "(STRING|BYTES)", ts, kStrByte); err != nil {
				return nil, err
			}
			return types.IntType, nil
		},
		Build: func([]*types.Type, *types.Type) (Impl, error) {
			return Strict1(func(a any) (any, error) {
				if b, ok := a.([]byte); ok {
					return int32(len(b)), nil
				}
				return int32(utf8.RuneCountInString(a.(string))), nil
			}), nil
		},
	})
	Register(&Func{
		Name: "CONCAT", Description: "Concatenates strings or bytes, skipping nulls.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			var k types.Kind
			for _, t := range ts {
				if t == nil {
					continue
				}
				if (t.Kind != types.String && t.Kind != types.Bytes) || (k != 0 && t.Kind != k) {
					return nil, badArgs("CONCAT", ts, "(STRING, ...) or (BYTES, ...)")
				}
				k = t.Kind
			}
			if len(ts) == 0 {
				return nil, badArgs("CONCAT", ts, "(STRING, ...) or (BYTES, ...)")
			}
			if k == types.Bytes {
				return types.BytesType, nil
			}
			return types.StringType, nil
		},
		Build: func(_ []*types.Type, ret *types.Type) (Impl, error) {
			if ret.Kind == types.Bytes {
				return func(row []any, args []ArgFunc) (any, error) {
					var out []byte
					var err error
					for _, a := range args {
						v, e := a(row)
						keep(&err, e)
						if v != nil {
							out = append(out, v.([]byte)...)
						}
					}
					if out == nil {
						out = []byte{}
					}
					return out, err
				}, nil
			}
			return func(row []any, args []ArgFunc) (any, error) {
				var b strings.Builder
				var err error
				for _, a := range args {
					v, e := a(row)
					keep(&err, e)
					if v != nil {
						b.WriteString(v.(string))
					}
				}
				return b.String(), err
			}, nil
		},
	})
	Register(&Func{
		Name: "SUBSTRING", Description: "SUBSTRING(s, pos[, len]): 1-based; a negative pos counts from the end.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			want := "(STRING|BYTES, INTEGER[, INTEGER])"
			var err error
			switch len(ts) {
			case 2:
				err = sig("SUBSTRING", want, ts, kStrByte, kInts)
			case 3:
				err = sig("SUBSTRING", want, ts, kStrByte, kInts, kInts)
			default:
				err = badArgs("SUBSTRING", ts, want)
			}
			if err != nil {
				return nil, err
			}
			if ts[0] == nil {
				return types.StringType, nil
			}
			return ts[0], nil
		},
		Build: func(ts []*types.Type, _ *types.Type) (Impl, error) {
			return Strict(func(a []any) (any, error) {
				var length int64
				if len(a) == 3 {
					length = toInt64(a[2])
				}
				if b, ok := a[0].([]byte); ok {
					s, e := substringBounds(len(b), toInt64(a[1]), length, len(a) == 3)
					return append([]byte{}, b[s:e]...), nil
				}
				str := a[0].(string)
				rs := []rune(str)
				s, e := substringBounds(len(rs), toInt64(a[1]), length, len(a) == 3)
				return string(rs[s:e]), nil
			}), nil
		},
	})
	nullFunc := func(name string, minArgs, maxArgs int, desc string, impl func(cmp func(a, b any) bool) Impl) *Func {
		return &Func{
			Name: name, Description: desc,
			Check: func(ts []*types.Type) (*types.Type, error) {
				if len(ts) < minArgs || (maxArgs > 0 && len(ts) > maxArgs) {
					if len(ts) == 0 {
						return nil, fmt.Errorf("Function '%s' does not accept parameters ()", name)
					}
					return nil, badArgs(name, ts, "arguments of one type")
				}
				t, err := expr.CommonType(ts)
				if err != nil {
					return nil, fmt.Errorf("Function '%s' does not accept parameters %s: %v", name, typeList(ts), err)
				}
				if t == nil {
					return nil, fmt.Errorf("cannot infer the type of %s%s; cast an argument", name, typeList(ts))
				}
				return t, nil
			},
			Coerce: func(_ []*types.Type, _ int, ret *types.Type) *types.Type { return ret },
			Build: func([]*types.Type, *types.Type) (Impl, error) {
				return impl(types.Equal), nil
			},
		}
	}
	firstNonNull := func(func(a, b any) bool) Impl {
		return func(row []any, args []ArgFunc) (any, error) {
			var err error
			for _, a := range args {
				v, e := a(row)
				keep(&err, e)
				if v != nil {
					return v, err
				}
			}
			return nil, err
		}
	}
	Register(nullFunc("COALESCE", 1, 0, "Returns the first non-null argument.", firstNonNull))
	Register(nullFunc("IFNULL", 2, 2, "IFNULL(x, alt): alt when x is null.", firstNonNull))
	Register(nullFunc("NULLIF", 2, 2, "NULLIF(x, y): null when x equals y, else x.", func(eq func(a, b any) bool) Impl {
		return func(row []any, args []ArgFunc) (any, error) {
			a, err := args[0](row)
			if a == nil {
				return nil, err
			}
			b, e := args[1](row)
			keep(&err, e)
			if b != nil && eq(a, b) {
				return nil, err
			}
			return a, err
		}
	}))
}
