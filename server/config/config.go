package config

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Alias maps a property name of the file to a flag, with an optional
// conversion of its value.
type Alias struct {
	Flag    string
	Convert func(string) (string, error)
}

// Loader loads a flag set's values.
type Loader struct {
	// EnvPrefix prefixes the environment variables, e.g. "SLUICE_".
	EnvPrefix string
	// ConfigFlag names the flag that holds the properties file's path,
	// e.g. "config"; it may itself be set by the environment.
	ConfigFlag string
	// Aliases are the file's other property names.
	Aliases map[string]Alias
	// Resolve, when set, is asked about each key of the file that names
	// neither a flag nor an alias, with its value: it returns the key's
	// canonical name, under which Aliases are looked up again (so that
	// ksql.streams.processing.guarantee finds processing.guarantee's), or
	// an error refusing the key, which Load reports with the file and
	// line.
	Resolve func(key, value string) (string, error)
	// Getenv reads the environment; default os.Getenv.
	Getenv func(string) string
	// ReadFile reads the properties file; default os.ReadFile.
	ReadFile func(string) ([]byte, error)
}

// Result tells where the values came from.
type Result struct {
	// Source maps each flag that is not at its default to "flag", "env"
	// or "file".
	Source map[string]string
	// Ignored are the file's keys that name no flag: other tools'
	// properties, sorted.
	Ignored []string
}

// EnvName is the environment variable of a flag: prefix + the name in
// upper case with dashes as underscores.
func (l *Loader) EnvName(flagName string) string {
	return l.EnvPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Load parses args into fs, then sets each flag the command line left out
// from the environment, else from the properties file.
func (l *Loader) Load(fs *flag.FlagSet, args []string) (Result, error) {
	getenv, readFile := l.Getenv, l.ReadFile
	if getenv == nil {
		getenv = os.Getenv
	}
	if readFile == nil {
		readFile = os.ReadFile
	}
	res := Result{Source: map[string]string{}}
	if err := fs.Parse(args); err != nil {
		return res, err
	}
	fs.Visit(func(f *flag.Flag) { res.Source[f.Name] = "flag" })
	var setErr error
	fs.VisitAll(func(f *flag.Flag) {
		if setErr != nil || res.Source[f.Name] != "" {
			return
		}
		if v, ok := lookupEnv(getenv, l.EnvName(f.Name)); ok {
			if err := fs.Set(f.Name, v); err != nil {
				setErr = fmt.Errorf("environment variable %s: %w", l.EnvName(f.Name), err)
				return
			}
			res.Source[f.Name] = "env"
		}
	})
	if setErr != nil {
		return res, setErr
	}
	if l.ConfigFlag == "" {
		return res, nil
	}
	cf := fs.Lookup(l.ConfigFlag)
	if cf == nil || cf.Value.String() == "" {
		return res, nil
	}
	path := cf.Value.String()
	data, err := readFile(path)
	if err != nil {
		return res, fmt.Errorf("reading the config file: %w", err)
	}
	props, err := Parse(strings.NewReader(string(data)))
	if err != nil {
		return res, fmt.Errorf("config file %s: %w", path, err)
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := props[k].Value
		name := k
		a, ok := l.Aliases[k]
		if !ok && fs.Lookup(k) == nil && l.Resolve != nil {
			canonical, err := l.Resolve(k, v)
			if err != nil {
				return res, fmt.Errorf("config file %s line %d: %w", path, props[k].Line, err)
			}
			a, ok = l.Aliases[canonical]
		}
		if ok {
			name = a.Flag
			if a.Convert != nil {
				if v, err = a.Convert(v); err != nil {
					return res, fmt.Errorf("config file %s line %d: %s: %w", path, props[k].Line, k, err)
				}
			}
		}
		f := fs.Lookup(name)
		if f == nil || name == l.ConfigFlag {
			res.Ignored = append(res.Ignored, k)
			continue
		}
		if res.Source[name] == "flag" || res.Source[name] == "env" {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return res, fmt.Errorf("config file %s line %d: %s: %w", path, props[k].Line, k, err)
		}
		res.Source[name] = "file"
	}
	return res, nil
}

func lookupEnv(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

// Property is one value of a properties file, with the line it starts on.
type Property struct {
	Value string
	Line  int
}

// Parse reads a properties file: "key=value", "key: value" or "key value"
// lines; blank lines and lines starting with "#" or "!" are skipped; a
// line ending in an odd number of backslashes continues on the next. Keys
// and values are trimmed; a later key replaces an earlier one.
func Parse(r io.Reader) (map[string]Property, error) {
	out := map[string]Property{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		start := n
		line := strings.TrimSpace(sc.Text())
		for continued(line) && sc.Scan() {
			n++
			line = line[:len(line)-1] + strings.TrimSpace(sc.Text())
		}
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=: \t")
		if i < 0 {
			out[line] = Property{Line: start}
			continue
		}
		key := strings.TrimSpace(line[:i])
		rest := strings.TrimLeft(line[i:], " \t")
		if rest != "" && (rest[0] == '=' || rest[0] == ':') {
			rest = rest[1:]
		}
		if key == "" {
			return nil, fmt.Errorf("line %d: a property without a name", start)
		}
		out[key] = Property{Value: strings.TrimSpace(rest), Line: start}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func continued(line string) bool {
	n := 0
	for n < len(line) && line[len(line)-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}

// StripScheme converts a listener URL such as ksqlDB's
// listeners=http://0.0.0.0:8088 to host:port; of a comma-separated list it
// takes the first.
func StripScheme(v string) (string, error) {
	v = strings.TrimSpace(strings.Split(v, ",")[0])
	if i := strings.Index(v, "://"); i >= 0 {
		v = v[i+3:]
	}
	v = strings.TrimSuffix(v, "/")
	if v == "" {
		return "", errors.New("empty listener")
	}
	return v, nil
}
