package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hamba/avro/v2"
)

// The compatibility levels.
const (
	None               = "NONE"
	Backward           = "BACKWARD"
	BackwardTransitive = "BACKWARD_TRANSITIVE"
	Forward            = "FORWARD"
	ForwardTransitive  = "FORWARD_TRANSITIVE"
	Full               = "FULL"
	FullTransitive     = "FULL_TRANSITIVE"
)

var levels = []string{None, Backward, BackwardTransitive, Forward, ForwardTransitive, Full, FullTransitive}

// ValidLevel says whether level is one of the compatibility levels.
func ValidLevel(level string) bool { return slices.Contains(levels, level) }

func invalidLevel(level string) *Error {
	return apiErr(CodeInvalidCompatibility, "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive (got %q)", level)
}

// levelOf is the level that applies to subject: its own, else the global.
func (m *Memory) levelOf(subject string) string {
	if l, ok := m.levels[subject]; ok {
		return l
	}
	return m.global
}

// Level returns the compatibility level of subject ("" for the global
// level). A subject without its own level is a CodeSubjectLevelNotSet
// error unless defaultToGlobal.
func (m *Memory) Level(_ context.Context, subject string, defaultToGlobal bool) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if subject == "" {
		return orBackward(m.global), nil
	}
	if l, ok := m.levels[subject]; ok {
		return l, nil
	}
	if defaultToGlobal {
		return orBackward(m.global), nil
	}
	return "", apiErr(CodeSubjectLevelNotSet, "Subject '%s' does not have subject-level compatibility configured", subject)
}

func orBackward(l string) string {
	if l == "" {
		return Backward
	}
	return l
}

// SetLevel sets the compatibility level of subject, or the global level
// when subject is "".
func (m *Memory) SetLevel(ctx context.Context, subject, level string) error {
	level = strings.ToUpper(level)
	if !ValidLevel(level) {
		return invalidLevel(level)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.write(ctx, configKey(subject), configValue(level)); err != nil {
		return err
	}
	if subject == "" {
		m.global = level
	} else {
		m.levels[subject] = level
	}
	return nil
}

// DeleteLevel removes subject's own level and returns it.
func (m *Memory) DeleteLevel(ctx context.Context, subject string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.levels[subject]
	if !ok {
		return "", subjectNotFound(subject)
	}
	if err := m.write(ctx, configKey(subject), nil); err != nil {
		return "", err
	}
	delete(m.levels, subject)
	return l, nil
}

// TestCompatibility checks s against a version of subject (-1: the
// latest; with a transitive level, against all versions) under the
// subject's level, and returns why it is not compatible (nothing when it
// is).
func (m *Memory) TestCompatibility(_ context.Context, subject string, version int, s Schema) ([]string, error) {
	s.Type = normType(s.Type)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.validate(s); err != nil {
		return nil, err
	}
	level := orBackward(m.levelOf(subject))
	live := m.live(subject)
	if version == -1 && len(live) == 0 {
		return nil, nil
	}
	prev := live
	if version != -1 || !strings.HasSuffix(level, "_TRANSITIVE") {
		v, err := m.find(subject, version, false)
		if err != nil {
			return nil, err
		}
		prev = []Schema{v.Schema}
	}
	return m.check(level, prev, s), nil
}

// check returns why next breaks level against the versions prev (oldest
// first), nothing when it does not.
func (m *Memory) check(level string, prev []Schema, next Schema) []string {
	if level == "" || level == None || len(prev) == 0 {
		return nil
	}
	if !strings.HasSuffix(level, "_TRANSITIVE") {
		prev = prev[len(prev)-1:]
	}
	base := strings.TrimSuffix(level, "_TRANSITIVE")
	var msgs []string
	for i := len(prev) - 1; i >= 0; i-- {
		old := prev[i]
		if normType(old.Type) != normType(next.Type) {
			msgs = append(msgs, fmt.Sprintf("Incompatible because of different schema type: version %d is %s, the new schema %s", old.Version, normType(old.Type), normType(next.Type)))
			continue
		}
		if base == Backward || base == Full {
			if err := m.readable(next, old); err != nil {
				msgs = append(msgs, fmt.Sprintf("BACKWARD: the new schema cannot read data written with version %d: %v", old.Version, err))
			}
		}
		if base == Forward || base == Full {
			if err := m.readable(old, next); err != nil {
				msgs = append(msgs, fmt.Sprintf("FORWARD: version %d cannot read data written with the new schema: %v", old.Version, err))
			}
		}
	}
	return msgs
}

// readable says whether data written with writer can be read with reader.
func (m *Memory) readable(reader, writer Schema) error {
	switch normType(reader.Type) {
	case Avro:
		r, err := m.parseAvro(reader)
		if err != nil {
			return err
		}
		w, err := m.parseAvro(writer)
		if err != nil {
			return err
		}
		return avro.NewSchemaCompatibility().Compatible(r, w)
	case JSON:
		return jsonReadable(reader.Schema, writer.Schema)
	case Protobuf:
		return protoReadable(reader.Schema, writer.Schema)
	}
	return nil
}

// validate parses s (and, for Avro, the schemas it references).
func (m *Memory) validate(s Schema) error { return m.validateRefs(s, false) }

// validateRefs is validate; with deleted, references may name deleted
// versions (a journal holds schemas registered before their references
// were deleted).
func (m *Memory) validateRefs(s Schema, deleted bool) error {
	for _, r := range s.References {
		if _, err := m.find(r.Subject, r.Version, deleted); err != nil {
			return apiErr(CodeInvalidSchema, "Invalid schema: reference %q to subject %q version %d: %s", r.Name, r.Subject, r.Version, asAPIError(err).Message)
		}
	}
	var err error
	switch normType(s.Type) {
	case Avro:
		_, err = m.parseAvro(s)
	case JSON:
		var v any
		if err = json.Unmarshal([]byte(s.Schema), &v); err == nil {
			switch v.(type) {
			case map[string]any, bool:
			default:
				err = fmt.Errorf("a JSON schema is an object or a boolean, not %s", strings.TrimSpace(s.Schema))
			}
		}
	case Protobuf:
		err = protoSyntax(s.Schema)
	default:
		return apiErr(CodeInvalidSchema, "Invalid schema type %q: use AVRO, JSON or PROTOBUF", s.Type)
	}
	if err != nil {
		return apiErr(CodeInvalidSchema, "Invalid schema %s: %v", strings.TrimSpace(s.Schema), err)
	}
	return nil
}

// parseAvro parses an Avro schema after the schemas it references, whose
// named types it may use.
func (m *Memory) parseAvro(s Schema) (avro.Schema, error) {
	cache := &avro.SchemaCache{}
	seen := map[SubjectVersion]bool{}
	var refs func(rs []Reference, depth int) error
	refs = func(rs []Reference, depth int) error {
		if depth > 32 {
			return fmt.Errorf("references nested too deep")
		}
		for _, r := range rs {
			k := SubjectVersion{r.Subject, r.Version}
			if seen[k] {
				continue
			}
			seen[k] = true
			v, err := m.find(r.Subject, r.Version, true)
			if err != nil {
				return err
			}
			if err := refs(v.References, depth+1); err != nil {
				return err
			}
			if _, err := avro.ParseWithCache(v.Schema.Schema, "", cache); err != nil {
				return fmt.Errorf("reference %q: %w", r.Name, err)
			}
		}
		return nil
	}
	if err := refs(s.References, 0); err != nil {
		return nil, err
	}
	return avro.ParseWithCache(s.Schema, "", cache)
}

// jsonReadable is the field-level rule for JSON schemas: the reader must
// not require a property the writer may leave out, a property both
// declare must keep its type, and a writer's property the reader does not
// declare must be allowed by the reader's additionalProperties.
func jsonReadable(reader, writer string) error {
	var r, w map[string]any
	if json.Unmarshal([]byte(reader), &r) != nil || json.Unmarshal([]byte(writer), &w) != nil {
		return nil // boolean schemas: true accepts everything
	}
	rp, _ := r["properties"].(map[string]any)
	wp, _ := w["properties"].(map[string]any)
	wreq := map[string]bool{}
	for _, x := range asList(w["required"]) {
		wreq[x] = true
	}
	for _, x := range asList(r["required"]) {
		if !wreq[x] {
			return fmt.Errorf("property %q is required by the reader but not by the writer", x)
		}
	}
	for name, wv := range wp {
		rv, ok := rp[name]
		if !ok {
			if ap, ok := r["additionalProperties"].(bool); ok && !ap {
				return fmt.Errorf("property %q of the writer is not allowed by the reader (additionalProperties false)", name)
			}
			continue
		}
		rt, wt := typeOf(rv), typeOf(wv)
		if rt != "" && wt != "" && rt != wt && !(rt == "number" && wt == "integer") {
			return fmt.Errorf("property %q changed type from %s to %s", name, wt, rt)
		}
	}
	return nil
}

func asList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func typeOf(v any) string {
	o, _ := v.(map[string]any)
	switch t := o["type"].(type) {
	case string:
		return t
	case []any:
		b, _ := json.Marshal(t)
		return string(b)
	}
	return ""
}

var (
	protoField   = regexp.MustCompile(`(?m)^\s*(?:optional\s+|required\s+|repeated\s+)?([A-Za-z_][\w.]*(?:\s*<[^>]*>)?)\s+([A-Za-z_]\w*)\s*=\s*(\d+)`)
	protoMessage = regexp.MustCompile(`\b(message|enum|service)\s+[A-Za-z_]\w*\s*\{`)
	protoBlock   = regexp.MustCompile(`\bmessage\s+([A-Za-z_]\w*)\s*\{`)
)

// protoSyntax is a syntactic check of a .proto schema: balanced braces and
// at least one message, enum or service.
func protoSyntax(s string) error {
	depth := 0
	for _, c := range s {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
			if depth < 0 {
				return fmt.Errorf("unbalanced '}'")
			}
		}
	}
	if depth != 0 {
		return fmt.Errorf("unbalanced '{'")
	}
	if !protoMessage.MatchString(s) {
		return fmt.Errorf("no message, enum or service")
	}
	return nil
}

// protoReadable is the field-level rule for Protobuf: a field number both
// schemas use must keep its type (field names may change, fields may come
// and go).
func protoReadable(reader, writer string) error {
	rf := protoFields(reader)
	for num, wt := range protoFields(writer) {
		if rt, ok := rf[num]; ok && rt != wt {
			return fmt.Errorf("field number %s changed type from %s to %s", num, wt, rt)
		}
	}
	return nil
}

// protoFields maps "message.path#number" to the field type.
func protoFields(s string) map[string]string {
	out := map[string]string{}
	var stack []string // block names; "" for blocks that are not messages
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		if f := protoField.FindStringSubmatch(line); f != nil && f[1] != "option" && f[1] != "reserved" && f[1] != "syntax" {
			var path []string
			for _, n := range stack {
				if n != "" {
					path = append(path, n)
				}
			}
			out[strings.Join(path, ".")+"#"+f[3]] = strings.Join(strings.Fields(f[1]), "")
		}
		for _, c := range line {
			switch c {
			case '{':
				name := ""
				if m := protoBlock.FindStringSubmatch(line); m != nil {
					name = m[1]
				}
				stack = append(stack, name)
			case '}':
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
		}
	}
	return out
}
