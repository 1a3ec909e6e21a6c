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

	"github.com/sluice-sql/sluice/internal/render"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// keywords are the words TAB completes besides catalog names.
var keywords = []string{
	"ADD", "ADVANCE", "ALL", "ALTER", "AND", "ARRAY", "AS", "ASC", "BEGINNING", "BETWEEN", "BIGINT", "BOOLEAN", "BY",
	"BYTES", "CASE", "CAST", "CHANGES", "COLUMN", "CONNECTOR", "CONNECTORS", "CREATE", "CSV", "DATE", "DAYS", "DECIMAL", "DEFINE", "DELETE",
	"DELIMITED", "DESC", "DESCRIBE", "DISTINCT", "DOUBLE", "DROP", "ELSE", "EMIT", "END", "EXISTS", "EXPLAIN",
	"EXTENDED", "FALSE", "FINAL", "FOR", "FROM", "FULL", "FUNCTION", "FUNCTIONS", "GRACE", "GROUP", "HAVING",
	"HOPPING", "HOURS", "IF", "IN", "INNER", "INSERT", "INT", "INTEGER", "INTERVAL", "INTO", "IS", "JOIN", "JSON",
	"KAFKA_TOPIC", "KEY", "KEY_FORMAT", "LEFT", "LIKE", "LIMIT", "LIST", "LOG", "MAP", "MILLISECONDS", "MINUTES",
	"NOT", "NULL", "ON", "OR", "OUTER", "OUTPUT", "PARTITION", "PARTITIONS", "PAUSE", "PRIMARY", "PRINT",
	"PROCESSING", "PROPERTIES", "QUERIES", "REPLACE", "REPLAY", "RESUME", "RETENTION", "RIGHT", "RUN", "SCRIPT",
	"SECONDS", "SELECT", "SESSION", "SET", "SHOW", "SINK", "SIZE", "SOURCE", "STREAM", "STREAMS", "STRING", "STRUCT",
	"TABLE", "TABLES", "TABULAR", "TERMINATE", "THEN", "TIME", "TIMESTAMP", "TOPIC", "TOPICS", "TRUE", "TUMBLING",
	"TYPE", "TYPES", "UNDEFINE", "UNSET", "VALUES", "VALUE_FORMAT", "VARCHAR", "VARIABLES", "WHEN", "WHERE",
	"WINDOW", "WITH", "WITHIN",
}

// statementStarts are the words a statement starts with.
var statementStarts = []string{
	"ALTER", "CREATE", "DEFINE", "DESCRIBE", "DROP", "EXPLAIN", "INSERT", "LIST", "PAUSE", "PRINT", "REPLAY",
	"RESUME", "RUN", "SELECT", "SET", "SHOW", "TERMINATE", "UNDEFINE", "UNSET",
}

// showWords are what SHOW and LIST list.
var showWords = []string{"ALL", "CONNECTORS", "FUNCTIONS", "PROPERTIES", "QUERIES", "STREAMS", "TABLES", "TOPICS", "TYPES", "VARIABLES"}

// showConnectorWords are what SHOW and LIST take before CONNECTORS.
var showConnectorWords = []string{"SINK", "SOURCE"}

// exprKeywords are the keywords completed inside a statement: keywords
// less the words that only start a statement or follow SHOW.
var exprKeywords = func() []string {
	var out []string
	for _, k := range keywords {
		if k != "SELECT" && slices.Contains(statementStarts, k) || slices.Contains(showWords, k) && k != "ALL" ||
			k == "SCRIPT" || k == "OUTPUT" || k == "TABULAR" {
			continue
		}
		out = append(out, k)
	}
	return out
}()

// settableProperties are the session properties the server uses, which
// TAB completes after SET and UNSET. They are the ones the engine accepts
// (engine/properties.go); TestSettableProperties checks the two agree.
var settableProperties = []string{
	"auto.offset.reset",
	"compression.type",
	"ksql.functions.collect_list.limit",
	"ksql.functions.collect_set.limit",
	"ksql.persistence.default.format.key",
	"ksql.persistence.default.format.value",
	"ksql.query.pull.limit.clause.enabled",
	"ksql.query.pull.range.scan.enabled",
	"ksql.query.pull.stream.enabled",
	"ksql.query.pull.table.scan.enabled",
	"ksql.query.push.v2.enabled",
	"processing.guarantee",
	"sluice.max.record.bytes",
}

// catalogNames caches the names TAB completes from the live catalog: the
// streams and tables (SHOW STREAMS, SHOW TABLES), the functions (SHOW
// FUNCTIONS) and, fetched the first time they are needed, a source's
// columns (DESCRIBE) and the topics (SHOW TOPICS). Shell.OnDDL clears it
// after CREATE, DROP and ALTER. Query ids are not cached: queries start
// and stop with statements of any session, so queryIDs asks each time.
type catalogNames struct {
	sh *Shell

	mu        sync.Mutex
	loaded    bool
	streams   []string
	tables    []string
	sources   []string // streams, then tables
	functions []string
	columns   map[string][]string // by source name
	topics    []string
	hasTopics bool
}

// invalidate drops what is cached; the next completion fetches it again.
func (c *catalogNames) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded, c.streams, c.tables, c.sources, c.functions, c.columns = false, nil, nil, nil, nil, nil
	c.topics, c.hasTopics = nil, false
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
	c.streams = firstColumn(c.sh.tableRows("SHOW STREAMS;"))
	c.tables = firstColumn(c.sh.tableRows("SHOW TABLES;"))
	c.sources = append(slices.Clip(c.streams), c.tables...)
	c.functions = firstColumn(c.sh.tableRows("SHOW FUNCTIONS;"))
}

// firstColumn returns the first cell of each row.
func firstColumn(rows [][]string, _ error) []string {
	var out []string
	for _, r := range rows {
		if len(r) > 0 {
			out = append(out, r[0])
		}
	}
	return out
}

// names returns a copy of the list kind selects.
func (c *catalogNames) names(kind compKind) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch kind {
	case compStreams:
		return slices.Clone(c.streams)
	case compTables:
		return slices.Clone(c.tables)
	case compFunctions:
		return slices.Clone(c.functions)
	}
	return slices.Clone(c.sources)
}

// connectorNames returns the connectors of the server's Kafka Connect
// worker (SHOW CONNECTORS), asked each time: the worker keeps them, and
// other clients create and drop them. None without a worker.
func (c *catalogNames) connectorNames() []string {
	return firstColumn(c.sh.tableRows("SHOW CONNECTORS;"))
}

// queryIDs returns the ids of the running queries (SHOW QUERIES).
func (c *catalogNames) queryIDs() []string {
	return firstColumn(c.sh.tableRows("SHOW QUERIES;"))
}

// topicNames returns the Kafka topics (SHOW TOPICS), fetching them once.
func (c *catalogNames) topicNames() []string {
	c.mu.Lock()
	if c.hasTopics {
		defer c.mu.Unlock()
		return slices.Clone(c.topics)
	}
	c.mu.Unlock()
	rows, err := c.sh.tableRows("SHOW TOPICS;")
	topics := firstColumn(rows, err)
	if err == nil {
		c.mu.Lock()
		c.topics, c.hasTopics = topics, true
		c.mu.Unlock()
	}
	return topics
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
	cols = firstColumn(rows, err)
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
		if e := m.GetEntity(); e != nil {
			t := render.Entity(e)
			for _, r := range t.Rows {
				rows = append(rows, t.Cells(r))
			}
		}
	}
}

// compKind is what the word at the cursor can be.
type compKind int

const (
	compNone       compKind = iota // a new name or a value: nothing but the words given
	compExpr                       // columns, functions, sources and expression keywords
	compSources                    // a stream or a table
	compStreams                    // a stream
	compTables                     // a table
	compQueries                    // the id of a running query
	compSetProps                   // a property to SET
	compUnsetProps                 // a property to UNSET
	compFunctions                  // a function name
	compTopics                     // a Kafka topic
	compVariables                  // a variable DEFINEd in the session
	compConnectors                 // a connector of the Kafka Connect worker
)

// compContext is what TAB completes at a point of a statement: names of
// kind, and words.
type compContext struct {
	kind  compKind
	words []string
}

func only(words ...string) compContext { return compContext{kind: compNone, words: words} }

// contextAt says what can follow toks, the upper-cased words of a
// statement before the cursor (see lexWords).
func contextAt(toks []string) compContext {
	n := len(toks)
	if n == 0 {
		return only(statementStarts...)
	}
	at := func(i int) string {
		if i >= 0 && i < n {
			return toks[i]
		}
		return ""
	}
	prev := toks[n-1]
	kindOf := func(w string) compKind {
		if w == "TABLE" {
			return compTables
		}
		return compStreams
	}
	switch toks[0] {
	case "SHOW", "LIST":
		rest := toks[1:]
		if len(rest) > 0 && rest[0] == "ALL" {
			if rest = rest[1:]; len(rest) == 0 {
				return only("TOPICS")
			}
		}
		switch {
		case len(rest) == 0:
			return only(slices.Sorted(slices.Values(append(slices.Clip(showWords), showConnectorWords...)))...)
		case len(rest) == 1 && slices.Contains(showConnectorWords, rest[0]):
			return only("CONNECTORS")
		case len(rest) == 1 && rest[0] != "CONNECTORS" && slices.Contains(showWords, rest[0]):
			return only("EXTENDED")
		}
		return only()
	case "CREATE":
		i := 1
		if at(1) == "OR" {
			if n == 2 {
				return only("REPLACE")
			}
			i = 3
		}
		if n == i {
			if i == 1 {
				return only("OR", "SINK", "SOURCE", "STREAM", "TABLE", "TYPE")
			}
			return only("STREAM", "TABLE", "TYPE")
		}
		if at(i) == "SINK" {
			if i++; n == i {
				return only("CONNECTOR")
			}
		}
		if at(i) == "SOURCE" {
			if i++; n == i {
				if i == 2 {
					return only("CONNECTOR", "STREAM", "TABLE")
				}
				return only("STREAM", "TABLE")
			}
		}
		switch at(i) {
		case "TYPE":
			switch n - i {
			case 1:
				return only() // the new type's name
			case 2:
				return only("AS")
			}
		case "STREAM", "TABLE", "CONNECTOR":
			what := at(i)
			i++
			if at(i) == "IF" {
				switch n - i {
				case 1:
					return only("NOT")
				case 2:
					return only("EXISTS")
				}
				i += 3
			}
			switch n - i {
			case 0:
				if at(i-1) == "EXISTS" {
					return only() // the new name
				}
				return only("IF") // the new name, or IF NOT EXISTS
			case 1:
				if what == "CONNECTOR" {
					return only("WITH")
				}
				return only("AS", "WITH")
			}
			if what == "CONNECTOR" {
				return only() // the connector's properties
			}
		}
	case "DROP":
		switch at(1) {
		case "":
			return only("CONNECTOR", "STREAM", "TABLE", "TYPE")
		case "CONNECTOR":
			switch {
			case n == 2:
				return compContext{kind: compConnectors, words: []string{"IF"}}
			case n == 3 && prev == "IF":
				return only("EXISTS")
			case n == 4 && prev == "EXISTS":
				return compContext{kind: compConnectors}
			}
			return only()
		case "STREAM", "TABLE":
			i := 2
			if at(2) == "IF" {
				if n == 3 {
					return only("EXISTS")
				}
				i = 4
			}
			switch n - i {
			case 0:
				c := compContext{kind: kindOf(at(1))}
				if i == 2 {
					c.words = []string{"IF"}
				}
				return c
			case 1:
				return only("DELETE")
			case 2:
				if prev == "DELETE" {
					return only("TOPIC")
				}
			}
			return only()
		case "TYPE":
			if n == 2 {
				return only("IF")
			}
			if n == 3 && prev == "IF" {
				return only("EXISTS")
			}
			return only()
		}
		return only()
	case "ALTER":
		switch n {
		case 1:
			return only("STREAM", "TABLE")
		case 2:
			return compContext{kind: kindOf(at(1))}
		case 3:
			return only("ADD")
		case 4:
			if prev == "ADD" {
				return only("COLUMN")
			}
		}
	case "INSERT":
		switch n {
		case 1:
			return only("INTO")
		case 2:
			return compContext{kind: compSources}
		case 3:
			return only("SELECT", "VALUES")
		}
	case "DESCRIBE":
		switch {
		case n == 1:
			return compContext{kind: compSources, words: []string{"CONNECTOR", "EXTENDED", "FUNCTION"}}
		case n == 2 && prev == "CONNECTOR":
			return compContext{kind: compConnectors}
		case n == 2 && prev == "FUNCTION":
			return compContext{kind: compFunctions}
		case n == 2 && prev == "EXTENDED":
			return compContext{kind: compSources}
		case n == 2:
			return only("EXTENDED")
		}
		return only()
	case "EXPLAIN":
		if n == 1 {
			return compContext{kind: compQueries, words: []string{"CREATE", "INSERT", "SELECT"}}
		}
		if !slices.Contains(statementStarts, at(1)) {
			return only()
		}
		return contextAt(toks[1:])
	case "TERMINATE", "PAUSE", "RESUME":
		if n == 1 {
			return compContext{kind: compQueries, words: []string{"ALL"}}
		}
		return only()
	case "REPLAY":
		words := []string{"REPLAY", "PROCESSING", "LOG", "FOR"}
		if n < len(words) {
			return only(words[n])
		}
		switch n {
		case 4:
			return compContext{kind: compQueries}
		case 5:
			return only("WHERE")
		}
	case "SET":
		if n == 1 {
			return compContext{kind: compSetProps}
		}
		return only()
	case "UNSET":
		if n == 1 {
			return compContext{kind: compUnsetProps}
		}
		return only()
	case "UNDEFINE":
		if n == 1 {
			return compContext{kind: compVariables}
		}
		return only()
	case "DEFINE":
		return only()
	case "RUN":
		if n == 1 {
			return only("SCRIPT")
		}
		return only()
	case "PRINT":
		switch prev {
		case "PRINT":
			return compContext{kind: compTopics}
		case "FROM":
			return only("BEGINNING")
		case "INTERVAL", "SAMPLE", "LIMIT":
			return only()
		}
		var words []string
		for _, w := range []string{"FROM", "INTERVAL", "LIMIT"} {
			if !slices.Contains(toks, w) {
				words = append(words, w)
			}
		}
		return only(words...)
	}
	switch prev {
	case "FROM":
		if at(n-2) != "DISTINCT" { // a IS [NOT] DISTINCT FROM b
			return compContext{kind: compSources}
		}
	case "JOIN", "INTO":
		return compContext{kind: compSources}
	case "EMIT":
		return only("CHANGES", "FINAL")
	case "GROUP", "PARTITION":
		return only("BY")
	}
	return compContext{kind: compExpr}
}

// completer completes the word before the cursor from what can stand
// there (see contextAt), from the keywords and the live catalog:
//
//   - at the start of a statement: the words statements start with; after
//     SHOW, CREATE, DROP, ...: the words that can follow;
//   - after FROM, JOIN, INTO, DESCRIBE: stream and table names; after DROP
//     STREAM, ALTER STREAM: stream names; after DROP TABLE, ALTER TABLE:
//     table names;
//   - after TERMINATE, PAUSE, RESUME, EXPLAIN, REPLAY PROCESSING LOG FOR:
//     the ids of the running queries;
//   - after SET and UNSET: the properties, quoted ('auto.offset.reset');
//     after UNDEFINE: the session's variables; after PRINT: the topics;
//     after DESCRIBE FUNCTION: the functions;
//   - after "name." where name is a source or an alias given to one in the
//     statement: that source's columns;
//   - elsewhere in a statement: the columns of the sources the statement
//     names (also after the cursor: SELECT <TAB> FROM orders), function
//     names (with their "("), source names and keywords.
//
// Nothing completes inside a comment or a string, but for a property
// after SET and a topic after PRINT; inside a quoted identifier names
// complete quoted. A keyword completes in lower case when the word is
// typed in lower case, or, at the start of a word, when the statement's
// first word is.
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

// candidate is a completion: the text of the whole word, and whether it
// is matched ignoring case and may be written in lower case (keywords and
// unquoted names).
type candidate struct {
	text string
	fold bool
}

// Do implements readline.AutoCompleter.
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	pending := ""
	if c.pending != nil {
		pending = c.pending()
	}
	text := pending + string(line)
	cur := len(pending) + len(string(line[:pos]))
	before, end := lexWords(text[:cur])
	if end.comment {
		return nil, 0
	}
	stmt := lastStatement(before)
	c.names.load()
	if end.quote != 0 {
		return c.inQuote(upper(stmt, end.quoteAt), end.quote, text[end.quoteAt:cur])
	}

	start := pos
	for start > 0 && isIdentRune(line[start-1]) {
		start--
	}
	prefix := string(line[start:pos])
	toks := upper(stmt, cur-len(string(line[start:pos])))
	lower := isLower(prefix)
	if prefix == "" && len(stmt) > 0 {
		lower = isLower(stmt[0].raw)
	}

	// An unquoted topic after PRINT holds '-' and '.'.
	if len(toks) > 0 && toks[0] == "PRINT" {
		t := pos
		for t > 0 && (isIdentRune(line[t-1]) || line[t-1] == '-' || line[t-1] == '.') {
			t--
		}
		if p := string(line[t:pos]); len(upper(stmt, cur-len(p))) == 1 {
			var cands []candidate
			for _, tp := range c.names.topicNames() {
				cands = append(cands, candidate{text: printTopic(tp) + " "})
			}
			return complete(cands, p, false)
		}
	}

	qualifier := ""
	if start > 0 && line[start-1] == '.' {
		q := start - 1
		for q > 0 && isIdentRune(line[q-1]) {
			q--
		}
		qualifier = string(line[q : start-1])
	}
	var cands []candidate
	add := func(suffix string, fold bool, names ...string) {
		for _, n := range names {
			q := quoteIdent(n)
			cands = append(cands, candidate{text: q + suffix, fold: fold && q == n})
		}
	}
	if qualifier != "" {
		_, aliases := mentionedSources(upper(statementAt(text, cur), len(text)), c.names)
		src := aliases[strings.ToUpper(qualifier)]
		if src == "" {
			src = c.names.source(qualifier)
		}
		if src != "" {
			add(" ", true, c.names.columnsOf(src)...)
		}
		return complete(cands, prefix, lower)
	}

	ctx := contextAt(toks)
	switch ctx.kind {
	case compExpr:
		sources, _ := mentionedSources(upper(statementAt(text, cur), len(text)), c.names)
		for _, s := range sources {
			add(" ", true, c.names.columnsOf(s)...)
		}
		add("(", true, c.names.names(compFunctions)...)
		add(" ", true, c.names.names(compSources)...)
		add(" ", true, exprKeywords...)
	case compSources, compStreams, compTables:
		add(" ", true, c.names.names(ctx.kind)...)
	case compFunctions:
		add(" ", true, c.names.names(compFunctions)...)
	case compQueries:
		add(" ", true, c.names.queryIDs()...)
	case compConnectors:
		add(" ", true, c.names.connectorNames()...)
	case compVariables:
		add(" ", true, sortedKeys(c.names.sh.Variables)...)
	case compSetProps, compUnsetProps:
		for _, p := range c.properties(ctx.kind) {
			cands = append(cands, candidate{text: "'" + p + "' "})
		}
	}
	add(" ", true, ctx.words...)
	return complete(cands, prefix, lower)
}

// inQuote completes the quoted word that starts at the open quote q and
// runs to the cursor (prefix, with its quote) after the statement words
// toks.
func (c *completer) inQuote(toks []string, q byte, prefix string) ([][]rune, int) {
	ctx := contextAt(toks)
	var cands []candidate
	if q == '\'' {
		switch ctx.kind {
		case compSetProps, compUnsetProps:
			for _, p := range c.properties(ctx.kind) {
				cands = append(cands, candidate{text: "'" + p + "' "})
			}
		case compTopics:
			for _, tp := range c.names.topicNames() {
				cands = append(cands, candidate{text: "'" + strings.ReplaceAll(tp, "'", "''") + "' "})
			}
		}
		return complete(cands, prefix, false)
	}
	var names []string
	switch ctx.kind {
	case compSources, compStreams, compTables, compFunctions:
		names = c.names.names(ctx.kind)
	case compQueries:
		names = c.names.queryIDs()
	case compConnectors:
		names = c.names.connectorNames()
	case compExpr:
		names = c.names.names(compSources)
	}
	quote := string(q)
	for _, n := range names {
		cands = append(cands, candidate{text: quote + strings.ReplaceAll(n, quote, quote+quote) + quote + " "})
	}
	return complete(cands, prefix, false)
}

// properties returns the properties to complete after SET or UNSET: for
// UNSET, those the session set, if any.
func (c *completer) properties(kind compKind) []string {
	if kind == compUnsetProps {
		if set := sortedKeys(c.names.sh.Properties); len(set) > 0 {
			return set
		}
	}
	return settableProperties
}

// printTopic spells topic as PRINT takes it: unquoted when it can be.
func printTopic(topic string) string {
	for i, r := range topic {
		if !(isIdentRune(r) || i > 0 && (r == '-' || r == '.')) || i == 0 && unicode.IsDigit(r) {
			return "'" + strings.ReplaceAll(topic, "'", "''") + "'"
		}
	}
	return topic
}

// complete returns the rest of each candidate that prefix starts, sorted
// and without duplicates, and the length of prefix, as
// readline.AutoCompleter does. lower writes the candidates that fold in
// lower case.
func complete(cands []candidate, prefix string, lower bool) ([][]rune, int) {
	pr := []rune(prefix)
	var out [][]rune
	seen := map[string]bool{}
	for _, cand := range cands {
		cr := []rune(cand.text)
		if len(cr) < len(pr) {
			continue
		}
		head := string(cr[:len(pr)])
		if cand.fold && !strings.EqualFold(head, prefix) || !cand.fold && head != prefix {
			continue
		}
		rest := string(cr[len(pr):])
		if cand.fold && lower {
			rest = strings.ToLower(rest)
		}
		if seen[rest] {
			continue
		}
		seen[rest] = true
		out = append(out, []rune(rest))
	}
	slices.SortFunc(out, func(a, b []rune) int { return strings.Compare(strings.ToUpper(string(a)), strings.ToUpper(string(b))) })
	return out, len(pr)
}

// isLower reports whether s has letters, all lower case.
func isLower(s string) bool {
	return s != "" && s == strings.ToLower(s) && s != strings.ToUpper(s)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// word is a token of the text the completer reads: an identifier or
// keyword, a quoted identifier (without its quotes), a string literal, or
// one of the punctuation marks , ( ) . = ;.
type word struct {
	up  string // upper-cased; "'" for a string literal
	raw string // as written
	off int    // byte offset of its start
}

// lexEnd says how the text lexWords read ends.
type lexEnd struct {
	quote   byte // the quote of a string or identifier left open, or 0
	quoteAt int  // the offset of that quote
	comment bool // the text ends inside a comment
}

// lexWords splits text into words, skipping blanks, comments and other
// punctuation.
func lexWords(text string) (out []word, end lexEnd) {
	start := -1
	flush := func(i int) {
		if start >= 0 {
			out = append(out, word{up: strings.ToUpper(text[start:i]), raw: text[start:i], off: start})
			start = -1
		}
	}
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case ch == '\'' || ch == '"' || ch == '`':
			flush(i)
			e, ok := quoteEnd(text, i)
			if !ok {
				return out, lexEnd{quote: ch, quoteAt: i}
			}
			body := strings.ReplaceAll(text[i+1:e-1], string(ch)+string(ch), string(ch))
			if ch == '\'' {
				out = append(out, word{up: "'", raw: body, off: i})
			} else {
				out = append(out, word{up: strings.ToUpper(body), raw: body, off: i})
			}
			i = e - 1
		case ch == '-' && strings.HasPrefix(text[i:], "--"):
			flush(i)
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				return out, lexEnd{comment: true}
			}
			i += j
		case ch == '/' && strings.HasPrefix(text[i:], "/*"):
			flush(i)
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return out, lexEnd{comment: true}
			}
			i += j + 3
		case ch < 0x80 && !isIdentRune(rune(ch)):
			flush(i)
			if strings.IndexByte(",().=;", ch) >= 0 {
				out = append(out, word{up: string(ch), raw: string(ch), off: i})
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	flush(len(text))
	return out, lexEnd{}
}

// lastStatement returns the words after the last ';'.
func lastStatement(ws []word) []word {
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].up == ";" {
			return ws[i+1:]
		}
	}
	return ws
}

// statementAt returns the words of the statement of text around offset
// cur: from the last ';' before it to the first after it.
func statementAt(text string, cur int) []word {
	ws, _ := lexWords(text)
	from, to := 0, len(ws)
	for i, w := range ws {
		if w.up != ";" {
			continue
		}
		if w.off < cur {
			from = i + 1
		} else {
			to = i
			break
		}
	}
	return ws[from:to]
}

// upper returns the upper-cased words of ws that start before offset off.
func upper(ws []word, off int) []string {
	var out []string
	for _, w := range ws {
		if w.off >= off {
			break
		}
		out = append(out, w.up)
	}
	return out
}

// words returns the upper-cased words of text, from its last ';' on,
// without comments; a string literal is "'".
func words(text string) []string {
	ws, _ := lexWords(text)
	return upper(lastStatement(ws), len(text)+1)
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
