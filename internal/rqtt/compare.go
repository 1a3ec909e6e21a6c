package rqtt

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// Response is an actual response: an entity /ksql answered (Kind "admin",
// Entity), or the entries a query streamed (Kind "query" or "queryProto",
// Entries). Values are generic JSON with json.Number numbers.
type Response struct {
	Kind    string
	Entity  any
	Entries []any
}

// Difference is the first difference between the expected and the actual
// responses.
type Difference struct {
	// Path locates it: "responses[1]->query[2]->row->columns".
	Path string
	// What says what differs, Expected and Actual show both sides.
	What     string
	Expected string
	Actual   string
	// Detail lists both sides of the response in full, when useful.
	Detail string
}

// Error is the difference on one line.
func (d *Difference) Error() string {
	s := d.Path + ": " + d.What
	if d.Expected != "" || d.Actual != "" {
		s += ": expected " + d.Expected + ", got " + d.Actual
	}
	return s
}

// matchOperator separates a field name from its match operator in an
// expected key ("statementText|starts_with").
const matchOperator = "|"

// statementMacro in an expected string is replaced with the statement at
// the response's place.
const statementMacro = "{STATEMENT}"

// CompareResponses checks the actual responses against the expected ones,
// as ksqlDB's runner does: at least as many actual responses as expected;
// each expected response matched on the actual one at its place, of the
// same kind; an admin response as a partial map of the entity; a query's
// entries exactly as many as expected, each a partial map, its rows'
// columns as a multiset unless verifyOrder. statements are the case's, for
// {STATEMENT}. It returns nil when they match.
func CompareResponses(expected []Expected, actual []Response, statements []string, verifyOrder bool) *Difference {
	if len(actual) < len(expected) {
		return &Difference{Path: "responses", What: "not enough responses",
			Expected: fmt.Sprintf("%d", len(expected)), Actual: fmt.Sprintf("%d", len(actual)),
			Detail: describeResponses(expected, actual)}
	}
	for i, e := range expected {
		a := actual[i]
		path := fmt.Sprintf("responses[%d]", i)
		if e.Kind != a.Kind {
			return &Difference{Path: path, What: "kind differs", Expected: e.Kind, Actual: a.Kind + " " + render(a.payload())}
		}
		stmt := ""
		if i < len(statements) {
			stmt = statements[i]
		}
		m := &matcher{stmt: stmt, verifyOrder: verifyOrder}
		switch e.Kind {
		case "admin":
			want, ok := e.Payload.(map[string]any)
			if !ok {
				return &Difference{Path: path + "->admin", What: "invalid case: the admin payload is not an object"}
			}
			if d := m.fields(a.Entity, want, path+"->admin"); d != nil {
				return d
			}
		case "query", "queryProto":
			if d := m.query(e.Payload, a.Entries, path+"->"+e.Kind); d != nil {
				return d
			}
		default:
			return &Difference{Path: path, What: "invalid case: unknown response kind " + e.Kind}
		}
	}
	return nil
}

func (r Response) payload() any {
	if r.Kind == "admin" {
		return r.Entity
	}
	return r.Entries
}

// CompareQuery checks the entries one query streamed against the expected
// ones (the payload of a "query" response): see CompareResponses.
func CompareQuery(expected []any, actual []any, verifyOrder bool) *Difference {
	m := &matcher{verifyOrder: verifyOrder}
	return m.query(expected, actual, "query")
}

// matcher matches one expected response.
type matcher struct {
	stmt        string
	verifyOrder bool
	// rows collect the columns of the expected and actual rows when they
	// compare as multisets.
	expRows, actRows []any
}

func (m *matcher) query(payload any, entries []any, path string) *Difference {
	want, ok := payload.([]any)
	if !ok {
		return &Difference{Path: path, What: "invalid case: the query payload is not a list"}
	}
	if len(entries) != len(want) {
		return &Difference{Path: path, What: countWhat(want, entries), Detail: describeEntries(want, entries)}
	}
	m.expRows, m.actRows = nil, nil
	for i := range want {
		w, ok := want[i].(map[string]any)
		if !ok {
			return &Difference{Path: fmt.Sprintf("%s[%d]", path, i), What: "invalid case: an expected entry is not an object"}
		}
		if d := m.fields(entries[i], w, fmt.Sprintf("%s[%d]", path, i)); d != nil {
			d.Detail = describeEntries(want, entries)
			return d
		}
	}
	if d := multiset(m.expRows, m.actRows); d != nil {
		d.Path = path + " rows"
		d.Detail = describeEntries(want, entries)
		return d
	}
	return nil
}

// countWhat names a count difference by what the extra or missing entries
// are, when that is plain: "finalMessage where none expected".
func countWhat(want, got []any) string {
	base := fmt.Sprintf("expected %d entries, got %d", len(want), len(got))
	wk, gk := kinds(want), kinds(got)
	var extra, missing []string
	for k, n := range gk {
		if n > wk[k] {
			extra = append(extra, k)
		}
	}
	for k, n := range wk {
		if n > gk[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(extra)
	sort.Strings(missing)
	var parts []string
	for _, k := range extra {
		if wk[k] == 0 {
			parts = append(parts, k+" where none expected")
		} else {
			parts = append(parts, fmt.Sprintf("%d %s more than expected", gk[k]-wk[k], k))
		}
	}
	for _, k := range missing {
		if gk[k] == 0 {
			parts = append(parts, "no "+k)
		} else {
			parts = append(parts, fmt.Sprintf("%d %s fewer than expected", wk[k]-gk[k], k))
		}
	}
	if len(parts) == 0 {
		return base
	}
	return base + " (" + strings.Join(parts, ", ") + ")"
}

// kinds counts entries by their first key (header, row, finalMessage,
// errorMessage).
func kinds(entries []any) map[string]int {
	out := map[string]int{}
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			out["non-object"]++
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, strings.SplitN(k, matchOperator, 2)[0])
		}
		sort.Strings(keys)
		out[strings.Join(keys, "+")]++
	}
	return out
}

// fields matches the fields want names against actual: only those fields;
// objects recursively; "name|starts_with" a string prefix; others equal.
func (m *matcher) fields(actual any, want map[string]any, path string) *Difference {
	obj, ok := actual.(map[string]any)
	if !ok {
		return &Difference{Path: path, What: "not an object", Expected: render(want), Actual: render(actual)}
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name, op := k, ""
		if i := strings.Index(k, matchOperator); i >= 0 {
			name, op = k[:i], strings.ToLower(k[i+1:])
		}
		wv := m.macro(want[k])
		p := path + "->" + name
		av, found := obj[name]
		if !found {
			return &Difference{Path: p, What: "missing field", Expected: render(wv), Actual: "an entry without " + name + ": " + render(obj)}
		}
		if wm, ok := wv.(map[string]any); ok {
			if d := m.fields(av, wm, p); d != nil {
				return d
			}
			continue
		}
		switch op {
		case "":
		case "starts_with":
			ws, wok := wv.(string)
			as, aok := av.(string)
			if !wok || !aok || !strings.HasPrefix(as, ws) {
				return &Difference{Path: p, What: "prefix differs", Expected: "a string starting with " + render(wv), Actual: render(av)}
			}
			continue
		default:
			return &Difference{Path: p, What: "invalid case: unknown match operator " + op}
		}
		if !m.verifyOrder && name == "columns" && strings.Contains(path, "query") && strings.HasSuffix(path, "->row") {
			m.expRows = append(m.expRows, wv)
			m.actRows = append(m.actRows, av)
			continue
		}
		if !Equal(wv, av) {
			return &Difference{Path: p, What: "value differs", Expected: render(wv), Actual: render(av)}
		}
	}
	return nil
}

// macro replaces {STATEMENT} in an expected string.
func (m *matcher) macro(v any) any {
	s, ok := v.(string)
	if !ok || m.stmt == "" {
		return v
	}
	return strings.ReplaceAll(s, statementMacro, m.stmt)
}

// multiset compares the rows' columns as multisets.
func multiset(want, got []any) *Difference {
	count := map[string]int{}
	shown := map[string]any{}
	for _, w := range want {
		k := canonical(w)
		count[k]++
		shown[k] = w
	}
	for _, g := range got {
		k := canonical(g)
		count[k]--
		shown[k] = g
	}
	var keys []string
	for k, n := range count {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	var extra, missing []string
	for _, k := range keys {
		n := count[k]
		for ; n < 0; n++ {
			extra = append(extra, render(shown[k]))
		}
		for ; n > 0; n-- {
			missing = append(missing, render(shown[k]))
		}
	}
	d := &Difference{What: "rows differ (compared as a multiset)"}
	d.Expected = "also " + orNothing(missing)
	d.Actual = "also " + orNothing(extra)
	return d
}

func orNothing(rows []string) string {
	if len(rows) == 0 {
		return "nothing"
	}
	return strings.Join(rows, ", ")
}

// canonical renders a value so that two values have the same text exactly
// when Equal holds: numbers as their kind and exact value.
func canonical(v any) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		fmt.Fprint(b, x)
	case string:
		fmt.Fprintf(b, "%q", x)
	case json.Number:
		if isInteger(x) {
			n, ok := new(big.Int).SetString(string(x), 10)
			if ok {
				b.WriteString("i:" + n.String())
				return
			}
		}
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			b.WriteString("n:" + string(x))
			return
		}
		b.WriteString("d:" + r.RatString())
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "%q:", k)
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "?%v", x)
	}
}

// Equal reports whether two generic JSON values are equal as ksqlDB's
// runner compares them: numbers of the same kind (an integer, or a number
// written with a fraction or exponent) and value, lists element by element,
// objects with the same keys and equal values.
func Equal(want, got any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case string:
		g, ok := got.(string)
		return ok && g == w
	case json.Number:
		g, ok := got.(json.Number)
		return ok && equalNumber(w, g)
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !Equal(w[i], g[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, found := g[k]
			if !found || !Equal(wv, gv) {
				return false
			}
		}
		return true
	}
	return false
}

// isInteger reports whether a JSON number is written as an integer (no
// fraction, no exponent).
func isInteger(n json.Number) bool {
	return !strings.ContainsAny(string(n), ".eE")
}

func equalNumber(w, g json.Number) bool {
	if isInteger(w) != isInteger(g) {
		return false
	}
	if w == g {
		return true
	}
	x, okx := new(big.Rat).SetString(string(w))
	y, oky := new(big.Rat).SetString(string(g))
	return okx && oky && x.Cmp(y) == 0
}

// render prints a generic JSON value compactly, object fields sorted.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// describeEntries lists a query's expected and actual entries.
func describeEntries(want, got []any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "expected %d entries:\n", len(want))
	for _, w := range want {
		fmt.Fprintf(&b, "  %s\n", render(w))
	}
	fmt.Fprintf(&b, "got %d:\n", len(got))
	for _, g := range got {
		fmt.Fprintf(&b, "  %s\n", render(g))
	}
	return b.String()
}

// describeResponses lists the kinds of the expected and actual responses.
func describeResponses(want []Expected, got []Response) string {
	var b strings.Builder
	b.WriteString("expected:")
	for _, w := range want {
		b.WriteString(" " + w.Kind)
	}
	b.WriteString("\ngot:")
	for _, g := range got {
		fmt.Fprintf(&b, " %s %s\n", g.Kind, render(g.payload()))
	}
	return b.String()
}

// ErrorTypes maps the Java classes of ksqlDB's error entities to the
// "@type" values of the error bodies that are instances of them: a
// statement error is an error message too.
var ErrorTypes = map[string][]string{
	"io.confluent.ksql.rest.entity.KsqlErrorMessage":          {"generic_error", "statement_error"},
	"io.confluent.ksql.rest.entity.KsqlStatementErrorMessage": {"statement_error"},
}

// MatchError checks an error response (its HTTP status and the error
// entity, generic JSON) against the expected error of a case whose last
// statement is last: the entity is of the expected type (a statement
// error then names the last statement in statementText), the status is
// the expected one, and the message contains the expected text. It returns
// nil when they match.
func MatchError(want *ExpectedError, status int, body any, last string) *Difference {
	obj, _ := body.(map[string]any)
	str := func(k string) string { s, _ := obj[k].(string); return s }
	msg := str("message")
	if want.Type != "" {
		types, known := ErrorTypes[want.Type]
		if !known {
			return &Difference{Path: "expectedError->type", What: "invalid case: unknown error type " + want.Type}
		}
		got := str("@type")
		ok := false
		for _, t := range types {
			ok = ok || t == got
		}
		if !ok {
			return &Difference{Path: "expectedError->type", What: "error type differs",
				Expected: strings.Join(types, " or ") + " (" + want.Type + ")", Actual: render(got) + " (" + firstLine(msg) + ")"}
		}
		if got == "statement_error" && strings.HasSuffix(want.Type, "KsqlStatementErrorMessage") && !strings.Contains(str("statementText"), last) {
			return &Difference{Path: "expectedError->statementText", What: "the error does not name the last statement",
				Expected: "a statementText containing " + render(last), Actual: render(str("statementText"))}
		}
	}
	if want.Status != 0 && status != want.Status {
		return &Difference{Path: "expectedError->status", What: "HTTP status differs",
			Expected: fmt.Sprint(want.Status), Actual: fmt.Sprintf("%d (%s)", status, firstLine(msg))}
	}
	if want.Message != "" && !strings.Contains(msg, want.Message) {
		return &Difference{Path: "expectedError->message", What: "error message differs",
			Expected: "a message containing " + render(want.Message), Actual: render(msg)}
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
