package shell

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// keywords are the words TAB completes besides catalog names.
var keywords = []string{
	"ADVANCE", "ALL", "ALTER", "AND", "ARRAY", "AS", "ASC", "BEGINNING", "BETWEEN", "BIGINT", "BOOLEAN", "BY",
	"BYTES", "CASE", "CAST", "CHANGES", "CREATE", "CSV", "DATE", "DAYS", "DECIMAL", "DEFINE", "DELIMITED",
	"DESC", "DESCRIBE", "DISTINCT", "DOUBLE", "DROP", "ELSE", "EMIT", "END", "EXISTS", "EXPLAIN", "EXTENDED",
	"FALSE", "FINAL", "FROM", "FULL", "FUNCTION", "FUNCTIONS", "GRACE", "GROUP", "HAVING", "HOPPING", "HOURS",
	"IF", "IN", "INNER", "INSERT", "INT", "INTEGER", "INTO", "IS", "JOIN", "JSON", "KAFKA_TOPIC", "KEY",
	"KEY_FORMAT", "LEFT", "LIKE", "LIMIT", "LOG", "MAP", "MILLISECONDS", "MINUTES", "NOT", "NULL", "ON", "OR",
	"OUTER", "OUTPUT", "PARTITION", "PARTITIONS", "PRIMARY", "PRINT", "PROCESSING", "PROPERTIES", "QUERIES", "REPLACE",
	"REPLAY", "RETENTION", "RIGHT", "RUN", "SCRIPT", "SECONDS", "SELECT", "SESSION", "SET", "SHOW", "SIZE", "STREAM",
	"STREAMS", "STRING", "STRUCT", "TABLE", "TABLES", "TABULAR", "TERMINATE", "THEN", "TIME", "TIMESTAMP",
	"TOPIC", "TOPICS", "TRUE", "TUMBLING", "TYPE", "TYPES", "UNDEFINE", "UNSET", "VALUES", "VALUE_FORMAT",
	"VARCHAR", "VARIABLES", "WHEN", "WHERE", "WINDOW", "WITH", "WITHIN",
}

// catalogNames caches the names TAB completes from the live catalog: the
// streams and tables (SHOW STREAMS, SHOW TABLES), the functions (SHOW
// FUNCTIONS) and, fetched the first time they are needed, a source's
// columns (DESCRIBE). Shell.OnDDL clears it after CREATE, DROP and ALTER.
type catalogNames struct {
	sh *Shell

	mu        sync.Mutex
	loaded    bool
	sources   []string
	functions []string
	columns   map[string][]string // by source name
}

// invalidate drops what is cached; the next completion fetches it again.
func (c *catalogNames) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded, c.sources, c.functions, c.columns = false, nil, nil, nil
}

// lookupTimeout bounds each catalog request made while the user waits for
// a completion.
const lookupTimeout = 2 * time.Second

// load fetches the source and function names unless they are cached.
// Unreachable servers leave the lists empty: keywords still complete.
func (c *catalogNames) load() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded {
		return
	}
	c.loaded = true
	c.columns = map[string][]string{}
	for _, q := range []string{"SHOW STREAMS;", "SHOW TABLES;"} {
		rows, _ := c.sh.tableRows(q)
		for _, r := range rows {
			if len(r) > 0 {
				c.sources = append(c.sources, r[0])
			}
		}
	}
	rows, _ := c.sh.tableRows("SHOW FUNCTIONS;")
	for _, r := range rows {
		if len(r) > 0 {
			c.functions = append(c.functions, r[0])
		}
	}
}

// source returns the catalog's spelling of name, or "".
func (c *catalogNames) source(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sources {
		if strings.EqualFold(s, name) {
			return s
		}
	}
	return ""
}

// columnsOf returns the columns of source, fetching them once.
func (c *catalogNames) columnsOf(source string) []string {
	c.mu.Lock()
	cols, ok := c.columns[source]
	c.mu.Unlock()
	if ok {
		return cols
	}
	rows, err := c.sh.tableRows("DESCRIBE " + quoteIdent(source) + ";")
	for _, r := range rows {
		if len(r) > 0 {
			cols = append(cols, r[0])
		}
	}
	if err == nil {
		c.mu.Lock()
		if c.columns != nil {
			c.columns[source] = cols
		}
		c.mu.Unlock()
	}
	return cols
}

// quoteIdent quotes name unless it reads the same unquoted.
func quoteIdent(name string) string {
	for _, r := range name {
		if !(unicode.IsUpper(r) || unicode.IsDigit(r) || r == '_') {
			return "`" + strings.ReplaceAll(name, "`", "``") + "`"
		}
	}
	return name
}

// tableRows runs one statement with the shell's session and returns the
// rows of the table it answers with, without printing anything.
func (s *Shell) tableRows(sql string) ([][]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	stream, err := s.client.Execute(ctx, &sluicev1.ExecuteRequest{Sql: sql, Properties: s.Properties, Variables: s.Variables})
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		for _, r := range m.GetTable().GetRows() {
			rows = append(rows, r.GetCells())
		}
	}
}

// completer completes the word before the cursor from the keywords and the
// live catalog, by context:
//
//   - after FROM, JOIN, INTO, DESCRIBE, DROP STREAM and DROP TABLE: stream
//     and table names;
//   - after "name." where name is a source or an alias given to one in the
//     statement: that source's columns;
//   - elsewhere in a statement: the columns of the sources the statement
//     names (also after the cursor: SELECT <TAB> FROM orders), function
//     names (with their "("), source names and keywords;
//   - at the start of a statement: keywords.
//
// A word typed in lower case completes in lower case.
type completer struct {
	names *catalogNames
	// pending returns the lines of the statement typed before the current
	// line.
	pending func() string
}

var _ interface {
	Do(line []rune, pos int) ([][]rune, int)
} = (*completer)(nil)

func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Do implements readline.AutoCompleter.
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	start := pos
	for start > 0 && isIdentRune(line[start-1]) {
		start--
	}
	prefix := string(line[start:pos])
	qualifier := ""
	if start > 0 && line[start-1] == '.' {
		q := start - 1
		for q > 0 && isIdentRune(line[q-1]) {
			q--
		}
		qualifier = string(line[q : start-1])
	}
	before := ""
	if c.pending != nil {
		before = c.pending()
	}
	before += string(line[:start])
	whole := before + string(line[start:])

	c.names.load()
	tokens := words(before)
	sources, aliases := mentionedSources(words(whole), c.names)

	var cands []string
	add := func(suffix string, names ...string) {
		for _, n := range names {
			cands = append(cands, n+suffix)
		}
	}
	prev, prev2 := last(tokens, 1), last(tokens, 2)
	switch {
	case qualifier != "":
		src := aliases[strings.ToUpper(qualifier)]
		if src == "" {
			src = c.names.source(qualifier)
		}
		if src != "" {
			add(" ", c.names.columnsOf(src)...)
		}
	case prev == "FROM" || prev == "JOIN" || prev == "INTO" || prev == "DESCRIBE" ||
		prev2 == "DROP" && (prev == "STREAM" || prev == "TABLE") || prev == "EXISTS":
		c.names.mu.Lock()
		add(" ", c.names.sources...)
		c.names.mu.Unlock()
	case len(tokens) == 0:
		add(" ", keywords...)
	default:
		for _, s := range sources {
			add(" ", c.names.columnsOf(s)...)
		}
		c.names.mu.Lock()
		add("(", c.names.functions...)
		add(" ", c.names.sources...)
		c.names.mu.Unlock()
		add(" ", keywords...)
	}

	lower := prefix != "" && prefix == strings.ToLower(prefix) && prefix != strings.ToUpper(prefix)
	var out [][]rune
	seen := map[string]bool{}
	for _, cand := range cands {
		if len(cand) < len(prefix) || !strings.EqualFold(cand[:len(prefix)], prefix) {
			continue
		}
		if lower {
			cand = strings.ToLower(cand)
		}
		if seen[cand] {
			continue
		}
		seen[cand] = true
		out = append(out, []rune(cand[len(prefix):]))
	}
	slices.SortFunc(out, func(a, b []rune) int { return strings.Compare(strings.ToUpper(string(a)), strings.ToUpper(string(b))) })
	return out, len([]rune(prefix))
}

// words returns the upper-cased words of text, from its last ';' on,
// without quoted sections and comments.
func words(text string) []string {
	if i := strings.LastIndexByte(text, ';'); i >= 0 {
		text = text[i+1:]
	}
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, strings.ToUpper(cur.String()))
			cur.Reset()
		}
	}
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case ch == '\'' || ch == '"' || ch == '`':
			flush()
			end := closingQuote(text, i)
			if ch == '`' && end-1 > i+1 {
				out = append(out, strings.ToUpper(text[i+1:end-1]))
			}
			i = end - 1
		case ch == '-' && strings.HasPrefix(text[i:], "--"):
			flush()
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				return out
			}
			i += j
		case ch < 0x80 && !isIdentRune(rune(ch)):
			flush()
			if ch == ',' || ch == '(' || ch == ')' || ch == '.' || ch == '=' {
				out = append(out, string(ch))
			}
		default:
			cur.WriteByte(ch)
		}
	}
	flush()
	return out
}

func last(tokens []string, n int) string {
	if len(tokens) < n {
		return ""
	}
	return tokens[len(tokens)-n]
}

// mentionedSources returns the catalog sources named after FROM, JOIN and
// INTO in tokens and the aliases given to them (FROM orders o, FROM orders
// AS o).
func mentionedSources(tokens []string, names *catalogNames) (sources []string, aliases map[string]string) {
	aliases = map[string]string{}
	for i, t := range tokens {
		if t != "FROM" && t != "JOIN" && t != "INTO" && t != "DESCRIBE" || i+1 >= len(tokens) {
			continue
		}
		src := names.source(tokens[i+1])
		if src == "" {
			continue
		}
		if !slices.Contains(sources, src) {
			sources = append(sources, src)
		}
		aliases[strings.ToUpper(src)] = src
		j := i + 2
		if j < len(tokens) && tokens[j] == "AS" {
			j++
		}
		if j < len(tokens) && !slices.Contains(keywords, tokens[j]) && isIdentRune([]rune(tokens[j])[0]) {
			aliases[tokens[j]] = src
		}
	}
	return sources, aliases
}
