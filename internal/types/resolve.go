package types

import "fmt"

// UnknownTypeError reports a custom type name that the catalog does not
// know.
type UnknownTypeError struct {
	Name string
}

func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("unknown type %s; create it with CREATE TYPE", e.Name)
}

// Resolve returns t with every custom type reference in it (a Type of Kind
// Unknown naming a type declared with CREATE TYPE) replaced by the type
// resolve returns for that name, recursing into ARRAY, MAP and STRUCT
// types and into the resolved types themselves. A replaced type keeps the
// custom name in its Name field. t is not modified: parts that change are
// copied, and t itself is returned when nothing does. An unknown name is
// an *UnknownTypeError.
func Resolve(t *Type, resolve func(name string) (*Type, bool)) (*Type, error) {
	return resolveDepth(t, resolve, 0)
}

func resolveDepth(t *Type, resolve func(string) (*Type, bool), depth int) (*Type, error) {
	if t == nil {
		return nil, nil
	}
	if depth > 64 {
		return nil, fmt.Errorf("type %s refers to itself", t.Name)
	}
	switch t.Kind {
	case Unknown:
		r, ok := resolve(t.Name)
		if !ok || r == nil {
			return nil, &UnknownTypeError{Name: t.Name}
		}
		r, err := resolveDepth(r, resolve, depth+1)
		if err != nil {
			return nil, err
		}
		c := *r
		c.Name = t.Name
		return &c, nil
	case Array:
		e, err := resolveDepth(t.Elem, resolve, depth+1)
		if err != nil {
			return nil, err
		}
		if e == t.Elem {
			return t, nil
		}
		c := *t
		c.Elem = e
		return &c, nil
	case Map:
		k, err := resolveDepth(t.Key, resolve, depth+1)
		if err != nil {
			return nil, err
		}
		v, err := resolveDepth(t.Elem, resolve, depth+1)
		if err != nil {
			return nil, err
		}
		if k == t.Key && v == t.Elem {
			return t, nil
		}
		c := *t
		c.Key, c.Elem = k, v
		return &c, nil
	case Struct:
		var fields []Field
		for i, f := range t.Fields {
			ft, err := resolveDepth(f.Type, resolve, depth+1)
			if err != nil {
				return nil, err
			}
			if ft != f.Type && fields == nil {
				fields = append([]Field(nil), t.Fields...)
			}
			if fields != nil {
				fields[i].Type = ft
			}
		}
		if fields == nil {
			return t, nil
		}
		c := *t
		c.Fields = fields
		return &c, nil
	}
	return t, nil
}
