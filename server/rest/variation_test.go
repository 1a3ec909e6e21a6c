package rest

import (
	"reflect"
	"testing"
)

func TestVariationArgs(t *testing.T) {
	for v, want := range map[string][]string{
		"COUNT(*)":                             {"*"},
		"NOW()":                                nil,
		"SLICE(ARRAY<T> in, INT from, INT to)": {"ARRAY<T> in", "INT from", "INT to"},
		"F(MAP<STRING, T>, INTEGER)":           {"MAP<STRING, T>", "INTEGER"},
		"COALESCE(T, T, ...)":                  {"T", "T", "..."},
	} {
		if got := variationArgs(v); !reflect.DeepEqual(got, want) {
			t.Errorf("variationArgs(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestSplitArg(t *testing.T) {
	for a, want := range map[string][2]string{
		"ARRAY<T> in":    {"ARRAY<T>", "in"},
		"INT from":       {"INT", "from"},
		"MAP<STRING, T>": {"MAP<STRING, T>", ""},
		"INTEGER":        {"INTEGER", ""},
		"*":              {"*", ""},
	} {
		if typ, name := splitArg(a); typ != want[0] || name != want[1] {
			t.Errorf("splitArg(%q) = %q, %q; want %q, %q", a, typ, name, want[0], want[1])
		}
	}
}
