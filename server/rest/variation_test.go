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
