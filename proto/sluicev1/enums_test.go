package sluicev1_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// TestEnumsStartUnspecified walks the file descriptor: every enum, top
// level or nested in a message, has <NAME>_UNSPECIFIED = 0 as its first
// value, and every other value carries the enum's prefix.
func TestEnumsStartUnspecified(t *testing.T) {
	fd := sluicev1.File_sluice_v1_sluice_proto
	n := 0
	check := func(enums protoreflect.EnumDescriptors) {
		for i := range enums.Len() {
			e := enums.Get(i)
			n++
			prefix := upperSnake(string(e.Name())) + "_"
			if e.Values().Len() == 0 {
				t.Errorf("enum %s has no values", e.FullName())
				continue
			}
			first := e.Values().Get(0)
			if want := prefix + "UNSPECIFIED"; string(first.Name()) != want || first.Number() != 0 {
				t.Errorf("enum %s starts with %s = %d, want %s = 0", e.FullName(), first.Name(), first.Number(), want)
			}
			for j := range e.Values().Len() {
				if v := e.Values().Get(j); !strings.HasPrefix(string(v.Name()), prefix) {
					t.Errorf("enum %s: value %s lacks the prefix %s", e.FullName(), v.Name(), prefix)
				}
			}
		}
	}
	check(fd.Enums())
	var walk func(msgs protoreflect.MessageDescriptors)
	walk = func(msgs protoreflect.MessageDescriptors) {
		for i := range msgs.Len() {
			m := msgs.Get(i)
			check(m.Enums())
			walk(m.Messages())
		}
	}
	walk(fd.Messages())
	if n == 0 {
		t.Fatal("no enums found: is the descriptor the right one?")
	}
}

// upperSnake turns EndReason into END_REASON.
func upperSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}
