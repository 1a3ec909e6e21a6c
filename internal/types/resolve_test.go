package types

import (
	"errors"
	"testing"
)

func TestResolve(t *testing.T) {
	cat := map[string]*Type{"ADDR": StructOf(Field{Name: "ZIP", Type: &Type{Name: "ZIPCODE"}}), "ZIPCODE": StringType}
	res := func(n string) (*Type, bool) { x, ok := cat[n]; return x, ok }
	in := MapOf(StringType, ArrayOf(&Type{Name: "ADDR"}))
	out, err := Resolve(in, res)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "MAP<STRING, ARRAY<STRUCT<`ZIP` STRING>>>" {
		t.Errorf("Resolve = %s", got)
	}
	if in.Elem.Elem.Kind != Unknown || out.Elem.Elem.Name != "ADDR" || out.Elem.Elem.Fields[0].Type.Name != "ZIPCODE" {
		t.Errorf("Resolve modified its input or lost the custom names")
	}
	var ue *UnknownTypeError
	if _, err := Resolve(StructOf(Field{Name: "A", Type: &Type{Name: "NOPE"}}), res); !errors.As(err, &ue) || ue.Error() != "unknown type NOPE; create it with CREATE TYPE" {
		t.Errorf("err = %v", err)
	}
	if r, err := Resolve(IntType, res); r != IntType || err != nil {
		t.Errorf("Resolve(INT) = %v, %v", r, err)
	}
}

func TestParseDate(t *testing.T) {
	for s, want := range map[string]DateValue{"1970-01-10": 9, "1970-01": 0, "1971": 365, "1969-12-31": -1, " 2020-01-02 ": 18263} {
		if got, err := ParseDate(s); err != nil || got != want {
			t.Errorf("ParseDate(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"foo", "2020-13-01", ""} {
		if _, err := ParseDate(s); err == nil {
			t.Errorf("ParseDate(%q) succeeded", s)
		}
	}
}
