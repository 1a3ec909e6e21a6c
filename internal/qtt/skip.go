package qtt

import (
	"regexp"
	"strings"
)

// The only reasons a run may be skipped, as ../shared/qtt/families/README.md
// lists them; each holds until the capability's own issue is resolved.
const (
	SkipSchemaRegistry = "uses AVRO, PROTOBUF, PROTOBUF_NOSR or JSON_SR (until schema-registry formats)"
)

// SkipReasons lists the skip reasons in the order they are checked and
// printed.
var SkipReasons = []string{SkipSchemaRegistry}

var (
	// registryFormatRE finds a schema-registry format named in a WITH
	// clause: FORMAT, KEY_FORMAT or VALUE_FORMAT.
	registryFormatRE = regexp.MustCompile(`(?i)\b(?:KEY_|VALUE_)?FORMAT\s*=\s*'\s*(?:AVRO|PROTOBUF|PROTOBUF_NOSR|JSON_SR)\s*'`)
	registryNameRE   = regexp.MustCompile(`(?i)^\s*(?:AVRO|PROTOBUF|PROTOBUF_NOSR|JSON_SR)\s*$`)
)

// defaultFormatProps are the properties that choose a format for
// statements that name none.
var defaultFormatProps = []string{"ksql.persistence.default.format.key", "ksql.persistence.default.format.value"}

// SkipReason returns why r may not run yet, or "" when it must run. It looks
// at the run's statements (after {FORMAT} expansion), its default-format
// properties and its topic declarations.
func SkipReason(r Run) string {
	sr := false
	for _, s := range r.Statements {
		if registryFormatRE.MatchString(s) {
			sr = true
		}
	}
	for _, p := range defaultFormatProps {
		if registryNameRE.MatchString(r.Properties[p]) {
			sr = true
		}
	}
	for _, t := range r.Case.Topics {
		for _, f := range []string{t.KeyFormat, t.ValueFormat, t.Format} {
			if registryNameRE.MatchString(strings.ReplaceAll(f, "{FORMAT}", r.Format)) {
				sr = true
			}
		}
	}
	if sr {
		return SkipSchemaRegistry
	}
	return ""
}

// stripLiterals blanks out string literals ('...'), quoted identifiers
// (`...` and "...") and comments, so that keywords are found only in code.
func stripLiterals(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '`' || c == '"':
			j := i + 1
			for j < len(s) {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			b.WriteString(" ")
			i = j
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			i += j + 3
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
