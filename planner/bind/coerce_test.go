package bind

import "testing"

func TestStringNumericType(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"10", "INTEGER"},
		{" 7 ", "INTEGER"},
		{"2147483647", "BIGINT"},
		{"-2147483648", "BIGINT"},
		{"9223372036854775807", "DECIMAL(19, 0)"},
		{"4.000", "DECIMAL(4, 3)"},
		{"2e1", "DECIMAL(2, 0)"},
		{"0.005", "DECIMAL(4, 3)"},
		{"-0.5", "DECIMAL(2, 1)"},
		{"12.5E-1", "DECIMAL(3, 2)"},
	}
	for _, tt := range tests {
		got, ok := stringNumericType(tt.in)
		if !ok || got.String() != tt.want {
			t.Errorf("stringNumericType(%q) = %v, %v; want %s", tt.in, got, ok, tt.want)
		}
	}
	for _, bad := range []string{"", "abc", "10 - not a number", "1.2.3", "e5", "."} {
		if got, ok := stringNumericType(bad); ok {
			t.Errorf("stringNumericType(%q) = %v, want no number", bad, got)
		}
	}
}

func TestParseBoolLax(t *testing.T) {
	for in, want := range map[string]bool{"TrUe": true, "tr": true, "Y": true, " yes ": true, "f": false, "NO": false, "fals": false} {
		if got, ok := parseBoolLax(in); !ok || got != want {
			t.Errorf("parseBoolLax(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "truex", "Not a boolean", "yess"} {
		if _, ok := parseBoolLax(bad); ok {
			t.Errorf("parseBoolLax(%q) accepted", bad)
		}
	}
}
