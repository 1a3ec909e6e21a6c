package eval

import (
	"fmt"
	"sync"

	"github.com/sluice-sql/sluice/internal/types"
)

// Lambda is a compiled lambda argument of a higher-order function call.
// Its body reads its parameters from slots appended to the row, so it runs
// through a Frame.
type Lambda struct {
	// Params is the number of parameters.
	Params int
	body   ArgFunc
}

// Frame is a row extended with the parameter slots of the lambdas of one
// call. A higher-order function takes one with NewFrame for each row it
// evaluates, calls its lambdas with it and gives it back with Release;
// frames are pooled, so this does not allocate in the steady state.
type Frame struct {
	ext  []any
	base int
}

var framePool = sync.Pool{New: func() any { return new(Frame) }}

// NewFrame returns a frame over row with room for slots lambda parameters.
func NewFrame(row []any, slots int) *Frame {
	f := framePool.Get().(*Frame)
	n := len(row) + slots
	if cap(f.ext) < n {
		f.ext = make([]any, n)
	}
	f.ext = f.ext[:n]
	copy(f.ext, row)
	f.base = len(row)
	return f
}

// Release clears f and returns it to the pool; f must not be used after.
func (f *Frame) Release() {
	clear(f.ext)
	f.ext = f.ext[:0]
	framePool.Put(f)
}

// Call evaluates the lambda's body in frame f with the given parameter
// values (one per parameter), with the contract of Evaluator.Eval.
func (l *Lambda) Call(f *Frame, args ...any) (any, error) {
	ext := f.ext[:f.base+l.Params]
	copy(ext[f.base:], args)
	return l.body(ext)
}

// callFailed turns the failure of a lambda body into the failure of the
// higher-order call name: a null operand in lambda arithmetic fails the
// whole call (its result is null) but not the calls around it.
func callFailed(name string, err error) error {
	return fmt.Errorf("%s: %w", name, err)
}

// collectionParams types the lambda parameters of TRANSFORM and FILTER:
// the element of an ARRAY, the key and value of a MAP.
func collectionParams(name string) func([]*types.Type, int) ([]*types.Type, bool, error) {
	return func(ts []*types.Type, i int) ([]*types.Type, bool, error) {
		if i == 0 {
			return nil, false, nil
		}
		if ts[0] == nil {
			return nil, false, fmt.Errorf("cannot infer the type of the first argument of %s; cast it", name)
		}
		switch ts[0].Kind {
		case types.Array:
			return []*types.Type{ts[0].Elem}, i == 1, nil
		case types.Map:
			if name == "FILTER" && i > 1 {
				return nil, false, nil
			}
			return []*types.Type{ts[0].Key, ts[0].Elem}, true, nil
		}
		return nil, false, fmt.Errorf("the first argument of %s must be an ARRAY or a MAP, not %s", name, ts[0])
	}
}

func isAbortErr(e error) bool { return e != nil && isAbort(e) }

// checkLambdas verifies, when compiling a call to name, that argument i is
// a lambda of params[i] parameters for each i in params, so that a
// malformed plan fails to compile rather than at run time.
func checkLambdas(name string, ts []*types.Type, ls []*Lambda, params map[int]int) error {
	if len(ts) == 0 || ts[0] == nil {
		return fmt.Errorf("expr: %s without a collection argument", name)
	}
	for i, n := range params {
		if i >= len(ls) || ls[i] == nil || ls[i].Params != n {
			return fmt.Errorf("expr: argument %d of %s must be a lambda with %d parameters", i+1, name, n)
		}
	}
	return nil
}

func init() {
	Register(&Func{
		Name:        "TRANSFORM",
		Description: "TRANSFORM(array, x => y) applies the lambda to each element; TRANSFORM(map, (k, v) => k2, (k, v) => v2) builds a map with new keys and values.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			want := "(ARRAY, LAMBDA) or (MAP, LAMBDA, LAMBDA)"
			switch {
			case len(ts) == 2 && ts[0] != nil && ts[0].Kind == types.Array:
				if ts[1] == nil {
					return nil, fmt.Errorf("cannot infer the type of the TRANSFORM lambda's result; cast it")
				}
				return types.ArrayOf(ts[1]), nil
			case len(ts) == 3 && ts[0] != nil && ts[0].Kind == types.Map:
				if ts[1] == nil || ts[2] == nil {
					return nil, fmt.Errorf("cannot infer the type of the TRANSFORM lambdas' results; cast them")
				}
				return types.MapOf(ts[1], ts[2]), nil
			}
			return nil, badArgs("TRANSFORM", ts, want)
		},
		LambdaParams: collectionParams("TRANSFORM"),
		BuildHigher: func(ts []*types.Type, _ *types.Type, ls []*Lambda) (Impl, error) {
			want := map[int]int{1: 1}
			if len(ts) == 3 {
				want = map[int]int{1: 2, 2: 2}
			}
			if err := checkLambdas("TRANSFORM", ts, ls, want); err != nil {
				return nil, err
			}
			if len(ts) == 2 {
				l := ls[1]
				return func(row []any, args []ArgFunc) (any, error) {
					v, err := args[0](row)
					if v == nil {
						return nil, err
					}
					in := v.([]any)
					f := NewFrame(row, 1)
					out := make([]any, len(in))
					for i, x := range in {
						r, e := l.Call(f, x)
						if isAbortErr(e) {
							f.Release()
							keep(&err, callFailed("TRANSFORM", e))
							return nil, err
						}
						keep(&err, e)
						out[i] = r
					}
					f.Release()
					return out, err
				}, nil
			}
			lk, lv := ls[1], ls[2]
			return func(row []any, args []ArgFunc) (any, error) {
				v, err := args[0](row)
				if v == nil {
					return nil, err
				}
				in := v.(*types.MapValue)
				f := NewFrame(row, 2)
				defer f.Release()
				out := &types.MapValue{Keys: make([]any, 0, len(in.Keys)), Values: make([]any, 0, len(in.Keys))}
				for i, k := range in.Keys {
					nk, e := lk.Call(f, k, in.Values[i])
					if isAbortErr(e) {
						keep(&err, callFailed("TRANSFORM", e))
						return nil, err
					}
					keep(&err, e)
					nv, e := lv.Call(f, k, in.Values[i])
					if isAbortErr(e) {
						keep(&err, callFailed("TRANSFORM", e))
						return nil, err
					}
					keep(&err, e)
					if out.Index(nk) >= 0 {
						keep(&err, fmt.Errorf("TRANSFORM: duplicate key %s in the transformed map", types.FormatValue(nk, nil)))
						return nil, err
					}
					out.Keys = append(out.Keys, nk)
					out.Values = append(out.Values, nv)
				}
				return out, err
			}, nil
		},
	})
	Register(&Func{
		Name:        "FILTER",
		Description: "FILTER(array, x => cond) keeps the elements for which cond is true; FILTER(map, (k, v) => cond) keeps those entries.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			if len(ts) != 2 || ts[0] == nil || (ts[0].Kind != types.Array && ts[0].Kind != types.Map) {
				return nil, badArgs("FILTER", ts, "(ARRAY, LAMBDA) or (MAP, LAMBDA)")
			}
			if ts[1] != nil && ts[1].Kind != types.Boolean {
				return nil, fmt.Errorf("the FILTER lambda must return BOOLEAN, not %s", ts[1])
			}
			return ts[0], nil
		},
		LambdaParams: collectionParams("FILTER"),
		BuildHigher: func(ts []*types.Type, _ *types.Type, ls []*Lambda) (Impl, error) {
			want := map[int]int{1: 2}
			if len(ts) > 0 && ts[0] != nil && ts[0].Kind == types.Array {
				want[1] = 1
			}
			if err := checkLambdas("FILTER", ts, ls, want); err != nil {
				return nil, err
			}
			l := ls[1]
			if ts[0].Kind == types.Array {
				return func(row []any, args []ArgFunc) (any, error) {
					v, err := args[0](row)
					if v == nil {
						return nil, err
					}
					f := NewFrame(row, 1)
					defer f.Release()
					out := []any{}
					for _, x := range v.([]any) {
						r, e := l.Call(f, x)
						if isAbortErr(e) {
							keep(&err, callFailed("FILTER", e))
							return nil, err
						}
						keep(&err, e)
						if Truthy(r) {
							out = append(out, x)
						}
					}
					return out, err
				}, nil
			}
			return func(row []any, args []ArgFunc) (any, error) {
				v, err := args[0](row)
				if v == nil {
					return nil, err
				}
				in := v.(*types.MapValue)
				f := NewFrame(row, 2)
				defer f.Release()
				out := &types.MapValue{Keys: []any{}, Values: []any{}}
				for i, k := range in.Keys {
					r, e := l.Call(f, k, in.Values[i])
					if isAbortErr(e) {
						keep(&err, callFailed("FILTER", e))
						return nil, err
					}
					keep(&err, e)
					if Truthy(r) {
						out.Keys = append(out.Keys, k)
						out.Values = append(out.Values, in.Values[i])
					}
				}
				return out, err
			}, nil
		},
	})
	Register(&Func{
		Name:        "REDUCE",
		Description: "REDUCE(array, init, (s, x) => s2) or REDUCE(map, init, (s, k, v) => s2) folds the collection into a state starting at init.",
		Check: func(ts []*types.Type) (*types.Type, error) {
			want := "(ARRAY, initial state, LAMBDA) or (MAP, initial state, LAMBDA)"
			if len(ts) != 3 || ts[0] == nil || (ts[0].Kind != types.Array && ts[0].Kind != types.Map) || ts[1] == nil {
				return nil, badArgs("REDUCE", ts, want)
			}
			if !ImplicitCast(ts[2], ts[1]) {
				return nil, fmt.Errorf("the REDUCE lambda returns %s, which does not fit the state type %s", ts[2], ts[1])
			}
			return ts[1], nil
		},
		Coerce: func(_ []*types.Type, i int, ret *types.Type) *types.Type {
			if i == 2 {
				return ret
			}
			return nil
		},
		LambdaParams: func(ts []*types.Type, i int) ([]*types.Type, bool, error) {
			if i != 2 {
				return nil, false, nil
			}
			if ts[0] == nil || (ts[0].Kind != types.Array && ts[0].Kind != types.Map) {
				return nil, false, fmt.Errorf("the first argument of REDUCE must be an ARRAY or a MAP, not %s", ts[0])
			}
			if ts[1] == nil {
				return nil, false, fmt.Errorf("cannot infer the type of the REDUCE initial state; cast it")
			}
			if ts[0].Kind == types.Array {
				return []*types.Type{ts[1], ts[0].Elem}, true, nil
			}
			return []*types.Type{ts[1], ts[0].Key, ts[0].Elem}, true, nil
		},
		BuildHigher: func(ts []*types.Type, _ *types.Type, ls []*Lambda) (Impl, error) {
			want := map[int]int{2: 2}
			if len(ts) > 0 && ts[0] != nil && ts[0].Kind == types.Map {
				want[2] = 3
			}
			if err := checkLambdas("REDUCE", ts, ls, want); err != nil {
				return nil, err
			}
			l := ls[2]
			isMap := ts[0].Kind == types.Map
			return func(row []any, args []ArgFunc) (any, error) {
				coll, err := args[0](row)
				st, e := args[1](row)
				keep(&err, e)
				if st == nil || coll == nil {
					return st, err
				}
				f := NewFrame(row, l.Params)
				defer f.Release()
				if isMap {
					m := coll.(*types.MapValue)
					for i, k := range m.Keys {
						if st, e = l.Call(f, st, k, m.Values[i]); isAbortErr(e) {
							keep(&err, callFailed("REDUCE", e))
							return nil, err
						}
						keep(&err, e)
					}
					return st, err
				}
				for _, x := range coll.([]any) {
					if st, e = l.Call(f, st, x); isAbortErr(e) {
						keep(&err, callFailed("REDUCE", e))
						return nil, err
					}
					keep(&err, e)
				}
				return st, err
			}, nil
		},
	})
}
