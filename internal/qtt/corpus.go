package qtt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// File is one corpus file: its cases in file order.
type File struct {
	// Path is where the file was read from.
	Path string
	// Stem is the file name without its directory and ".json".
	Stem string
	// Cases are the file's test cases, in order.
	Cases []*Case
}

// Case is one test case of a corpus file, as written. Fields the runner
// does not use are ignored when reading.
type Case struct {
	Name       string            `json:"name"`
	Statements []string          `json:"statements"`
	Format     []string          `json:"format"`
	Config     []json.RawMessage `json:"config"`
	// Properties are ksqlDB/Kafka Streams overrides; values are kept as
	// written and turned into strings by Expand.
	Properties map[string]json.RawMessage `json:"properties"`
	Inputs     []Record                   `json:"inputs"`
	Outputs    []Record                   `json:"outputs"`
	Topics     []Topic                    `json:"topics"`
	// ExpectedException is the QTT-shape expected failure; ExpectedError
	// its REST-shape twin in insert-values.json.
	ExpectedException *Exception `json:"expectedException"`
	ExpectedError     *Exception `json:"expectedError"`
	Post              *Post      `json:"post"`
	// Enabled is false for a case the corpus disables.
	Enabled *bool `json:"enabled"`
}

// Record is an input or expected output record. Key and Value hold the
// JSON as written; a nil Key means the key was left out (a null key).
type Record struct {
	Topic     string          `json:"topic"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Timestamp *int64          `json:"timestamp"`
	Window    *Window         `json:"window"`
	Headers   []Header        `json:"headers"`
}

// Window is the window of a windowed record key.
type Window struct {
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Type  string `json:"type"`
}

// Header is one record header; Value is base64.
type Header struct {
	Key   string  `json:"KEY"`
	Value *string `json:"VALUE"`
}

// Topic is a topic declaration of a case.
type Topic struct {
	Name        string          `json:"name"`
	Partitions  int32           `json:"partitions"`
	KeyFormat   string          `json:"keyFormat"`
	ValueFormat string          `json:"valueFormat"`
	Format      string          `json:"format"`
	KeySchema   json.RawMessage `json:"keySchema"`
	ValueSchema json.RawMessage `json:"valueSchema"`
	// KeySchemaID and ValueSchemaID are the ids the schemas are
	// registered with (0: any).
	KeySchemaID   int `json:"keySchemaId"`
	ValueSchemaID int `json:"valueSchemaId"`
	// KeySchemaReferences and ValueSchemaReferences are schemas the key
	// and value schemas import, registered under their names.
	KeySchemaReferences   []SchemaReference `json:"keySchemaReferences"`
	ValueSchemaReferences []SchemaReference `json:"valueSchemaReferences"`
}

// SchemaReference is a schema another schema imports by name.
type SchemaReference struct {
	Name   string `json:"name"`
	Format string `json:"format"`
	Schema string `json:"schema"`
}

// Exception is an expected failure: the Java class name (ignored) and a
// text the actual message must contain.
type Exception struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Post holds a case's post-conditions.
type Post struct {
	Sources []PostSource `json:"sources"`
	Topics  *PostTopics  `json:"topics"`
}

// PostSource is an expected catalog entry.
type PostSource struct {
	Name          string           `json:"name"`
	Type          string           `json:"type"`
	Schema        *string          `json:"schema"`
	KeyFormat     *PostFormat      `json:"keyFormat"`
	ValueFormat   *string          `json:"valueFormat"`
	KeyFeatures   []string         `json:"keyFeatures"`
	ValueFeatures *json.RawMessage `json:"valueFeatures"`
	IsSource      *bool            `json:"isSource"`
}

// PostFormat is an expected key or value format.
type PostFormat struct {
	Format     string            `json:"format"`
	WindowType string            `json:"windowType"`
	WindowSize *int64            `json:"windowSize"`
	Features   []string          `json:"features"`
	Properties map[string]string `json:"properties"`
}

// PostTopics are the expected topics: none may match Blacklist, and each
// of Topics must exist as described.
type PostTopics struct {
	Blacklist string      `json:"blacklist"`
	Topics    []PostTopic `json:"topics"`
}

// PostTopic is an expected topic.
type PostTopic struct {
	Name        string      `json:"name"`
	KeyFormat   *PostFormat `json:"keyFormat"`
	ValueFormat *PostFormat `json:"valueFormat"`
	Partitions  *int32      `json:"partitions"`
	// KeySchema and ValueSchema are the schemas the topic's subjects
	// must hold last: an Avro or JSON schema as JSON, a protobuf schema
	// as a string. Absent or null, they are not checked.
	KeySchema   json.RawMessage `json:"keySchema"`
	ValueSchema json.RawMessage `json:"valueSchema"`
}

// LoadFile reads one corpus file. The corpus allows // and /* */ comments;
// they are removed before strict parsing.
func LoadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Tests []*Case `json:"tests"`
	}
	if err := json.Unmarshal(StripComments(b), &raw); err != nil {
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
	names, err := CorpusFiles(paths)
	if err != nil {
		return nil, err
	}
	files := make([]*File, 0, len(names))
	for _, n := range names {
		f, err := LoadFile(n)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// CorpusFiles lists the corpus files paths name: a file as is, a
// directory's *.json files (not its subdirectories'), in name order.
func CorpusFiles(paths []string) ([]string, error) {
	var names []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			names = append(names, p)
			continue
		}
		m, err := filepath.Glob(filepath.Join(p, "*.json"))
		if err != nil {
			return nil, err
		}
		sort.Strings(m)
		names = append(names, m...)
	}
	return names, nil
}

// Family returns the paths of the corpus files of family name (stateless,
// stateful or joins), as listed in dir/families/<name>.txt.
func Family(dir, name string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "families", name+".txt"))
	if err != nil {
		return nil, fmt.Errorf("family %q: %w", name, err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, filepath.Join(dir, line))
	}
	return out, nil
}

// StripComments removes // and /* */ comments outside JSON strings.
func StripComments(b []byte) []byte {
	if !bytes.Contains(b, []byte("//")) && !bytes.Contains(b, []byte("/*")) {
		return b
	}
	out := make([]byte, 0, len(b))
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch c {
			case '\\':
				if i+1 < len(b) {
					i++
					out = append(out, b[i])
				}
			case '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out = append(out, c)
		case bytes.HasPrefix(b[i:], []byte("//")):
			for i < len(b) && b[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case bytes.HasPrefix(b[i:], []byte("/*")):
			j := bytes.Index(b[i+2:], []byte("*/"))
			if j < 0 {
				return out
			}
			i += j + 3
		default:
			out = append(out, c)
		}
	}
	return out
}

// Run is one execution of a case, after format and config expansion.
type Run struct {
	// ID is "<file stem> - <name>", plus " - <FORMAT>" or
	// " - <property>=<config>" when expanded.
	ID string
	// File is the stem of the case's file; Index the case's position in
	// it.
	File  string
	Index int
	Case  *Case
	// Format is the value {FORMAT} was replaced with; empty when the case
	// has no format list.
	Format string
	// Statements are the case's statements with {FORMAT} replaced.
	Statements []string
	// Properties are the case's properties with {CONFIG} replaced, as
	// strings.
	Properties map[string]string
}

// Expand returns the runs of every case of f: one per format entry (and
// per config value), or one when the case has neither.
func Expand(f *File) []Run {
	var out []Run
	for i, c := range f.Cases {
		base := f.Stem + " - " + c.Name
		formats := c.Format
		if len(formats) == 0 {
			formats = []string{""}
		}
		configs := make([]string, 0, len(c.Config))
		for _, v := range c.Config {
			configs = append(configs, jsonString(v))
		}
		if len(configs) == 0 {
			configs = []string{""}
		}
		configProp := ""
		for k, v := range c.Properties {
			if jsonString(v) == "{CONFIG}" {
				configProp = k
			}
		}
		for _, fm := range formats {
			for _, cfg := range configs {
				r := Run{ID: base, File: f.Stem, Index: i, Case: c, Format: fm, Properties: map[string]string{}}
				if fm != "" {
					r.ID += " - " + fm
				}
				if cfg != "" && configProp != "" {
					r.ID += " - " + configProp + "=" + cfg
				}
				for _, s := range c.Statements {
					r.Statements = append(r.Statements, strings.ReplaceAll(s, "{FORMAT}", fm))
				}
				for k, v := range c.Properties {
					s := jsonString(v)
					if s == "{CONFIG}" {
						s = cfg
					}
					r.Properties[k] = s
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// jsonString returns a JSON string's contents, or other JSON as written.
func jsonString(v json.RawMessage) string {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s
	}
	return strings.TrimSpace(string(v))
}

// expected returns the case's expected failure, QTT or REST shape.
func (c *Case) expected() *Exception {
	if c.ExpectedException != nil {
		return c.ExpectedException
	}
	return c.ExpectedError
}
