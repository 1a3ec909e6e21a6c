package rqtt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/internal/qtt"
)

// Version is the ksqlDB version Sluice answers as, for the corpus's
// "versions" bounds: a case whose versions.max is below it is skipped.
const Version = "7.4.0"

// File is one corpus file: its cases in file order.
type File struct {
	// Path is where the file was read from.
	Path string
	// Stem is the file name without its directory and ".json".
	Stem string
	// Cases are the file's test cases, in order.
	Cases []*Case
}

// Case is one RQTT case: a QTT case (statements, format, properties,
// topics, inputs, outputs) plus the REST expectations. Fields the runner
// does not use are ignored when reading.
type Case struct {
	qtt.Case
	// Responses are the expected responses, one per statement in order:
	// each an object of one key, "admin", "query" or "queryProto". They
	// are kept as written and read with json.Number numbers.
	Responses []json.RawMessage `json:"responses"`
	// ExpectedError is the expected failure of the last statement.
	ExpectedError *ExpectedError `json:"expectedError"`
	// InputConditions and OutputConditions tune when inputs are produced
	// and how rows are compared.
	InputConditions  *InputConditions  `json:"inputConditions"`
	OutputConditions *OutputConditions `json:"outputConditions"`
	// TestPullWithProtoFormat runs the queries once more with the
	// protobuf response format (a run of its own).
	TestPullWithProtoFormat bool `json:"testPullWithProtoFormat"`
	// Versions bounds the ksqlDB versions the case is for.
	Versions *Versions `json:"versions"`
}

// ExpectedError is an expected failure: the Java class of ksqlDB's error
// entity, a text its message contains, and the HTTP status. Each is
// checked only when given.
type ExpectedError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}

// InputConditions say when the inputs are produced.
type InputConditions struct {
	// WaitForActivePushQuery produces the inputs once the (only) push
	// query's header arrived, rather than right after the statements.
	WaitForActivePushQuery bool `json:"waitForActivePushQuery"`
}

// OutputConditions say how the responses are compared.
type OutputConditions struct {
	// VerifyOrder compares a query's rows in order rather than as a
	// multiset.
	VerifyOrder bool `json:"verifyOrder"`
}

// Versions bounds the ksqlDB versions a case is for ("7.2.0").
type Versions struct {
	Min string `json:"min"`
	Max string `json:"max"`
}

// Load reads one corpus file. The corpus allows // and /* */ comments;
// they are removed before strict parsing.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Tests []*Case `json:"tests"`
	}
	if err := json.Unmarshal(qtt.StripComments(b), &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, c := range raw.Tests {
		if c == nil || c.Name == "" || len(c.Statements) == 0 {
			return nil, fmt.Errorf("%s: test %d needs a name and statements", path, i)
		}
	}
	stem := strings.TrimSuffix(filepath.Base(path), ".json")
	return &File{Path: path, Stem: stem, Cases: raw.Tests}, nil
}

// LoadPaths reads every corpus file named by paths: a file is read as is,
// a directory contributes its *.json files (not its subdirectories), in
// name order.
func LoadPaths(paths []string) ([]*File, error) {
	names, err := qtt.CorpusFiles(paths)
	if err != nil {
		return nil, err
	}
	files := make([]*File, 0, len(names))
	for _, n := range names {
		f, err := Load(n)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// ProtoSuffix ends the ID of the run that reads a case's queries in the
// protobuf response format.
const ProtoSuffix = " - PROTOBUF_RESPONSE"

// Run is one execution of a case, after format expansion.
type Run struct {
	// Run is the QTT view of the run: its ID ("<file> - <name>[ -
	// <FORMAT>]"), its statements with {FORMAT} replaced, its
	// properties.
	qtt.Run
	// Test is the case the run comes from.
	Test *Case
	// Proto marks the run that reads the queries with the protobuf
	// response format; its ID ends in ProtoSuffix.
	Proto bool
}

// Expand returns the runs of every case of f: one per format entry (or
// one), and for a case with testPullWithProtoFormat one more per format
// reading its queries in the protobuf response format.
func Expand(f *File) []Run {
	qf := &qtt.File{Path: f.Path, Stem: f.Stem, Cases: make([]*qtt.Case, len(f.Cases))}
	for i, c := range f.Cases {
		qf.Cases[i] = &c.Case
	}
	var out []Run
	for _, r := range qtt.Expand(qf) {
		c := f.Cases[r.Index]
		out = append(out, Run{Run: r, Test: c})
		if c.TestPullWithProtoFormat {
			p := Run{Run: r, Test: c, Proto: true}
			p.ID += ProtoSuffix
			out = append(out, p)
		}
	}
	return out
}

// SkipReason returns why r does not run, or "" when it runs: the corpus
// disables the case, or it is for ksqlDB versions before Version only.
func SkipReason(r Run) string {
	c := r.Test
	if c.Enabled != nil && !*c.Enabled {
		return "disabled in the corpus (enabled: false)"
	}
	if c.Versions != nil && c.Versions.Max != "" && compareVersions(c.Versions.Max, Version) < 0 {
		return fmt.Sprintf("for ksqlDB up to %s only (versions.max), below %s", c.Versions.Max, Version)
	}
	return ""
}

// compareVersions compares dotted versions ("7.2.0", "7.3"; a suffix
// such as "-SNAPSHOT" is ignored) part by part: -1, 0 or 1.
func compareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}

func versionParts(v string) []int {
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	var out []int
	for _, p := range strings.Split(strings.TrimSpace(v), ".") {
		n, _ := strconv.Atoi(p)
		out = append(out, n)
	}
	return out
}

// Expected is one expected response: its kind ("admin", "query" or
// "queryProto") and payload, read with json.Number numbers.
type Expected struct {
	Kind    string
	Payload any
}

// expectedResponses reads the case's expected responses.
func (c *Case) expectedResponses() ([]Expected, error) {
	out := make([]Expected, 0, len(c.Responses))
	for i, raw := range c.Responses {
		v, err := decode(raw)
		if err != nil {
			return nil, fmt.Errorf("invalid case: response %d: %w", i, err)
		}
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, fmt.Errorf("invalid case: response %d is not an object of one key: %s", i, raw)
		}
		for k, p := range m {
			out = append(out, Expected{Kind: k, Payload: p})
		}
	}
	return out, nil
}

// decode reads JSON into a generic value with json.Number numbers.
func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}
