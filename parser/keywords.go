package parser

// This file holds the one list of words that the front hands to the TiDB
// parser as keywords. Every other unquoted word in a query is an identifier:
// the front upper-cases it and back-quotes it, so words that MySQL reserves
// (KEY, RANGE, WINDOW, VALUE, ...) and function names that MySQL parses with
// special grammar (SUBSTRING, TIMESTAMPADD, TRIM, ...) reach TiDB as plain
// identifiers.

// sqlKeywords are the words passed to TiDB unquoted inside a query.
var sqlKeywords = map[string]bool{
	"SELECT": true, "FROM": true, "WHERE": true, "GROUP": true, "BY": true,
	"HAVING": true, "AS": true, "JOIN": true, "LEFT": true, "RIGHT": true,
	"FULL": true, "OUTER": true, "INNER": true, "ON": true,
	"AND": true, "OR": true, "NOT": true, "NULL": true, "TRUE": true,
	"FALSE": true, "IS": true, "IN": true, "BETWEEN": true, "LIKE": true,
	"ESCAPE": true, "CASE": true, "WHEN": true, "THEN": true, "ELSE": true,
	"END": true, "DISTINCT": true,
}

// clauseKeywords start a top-level clause of a query, in the order ksqlDB
// requires them; the value is the rank.
var clauseKeywords = map[string]int{
	"FROM": 1, "WINDOW": 2, "WHERE": 3, "GROUP": 4, "HAVING": 5,
	"PARTITION": 6, "EMIT": 7, "LIMIT": 8,
}

// statementKeywords are the words that can start a statement, for the
// "unknown statement" hint.
const statementKeywords = "CREATE, INSERT, SELECT, SHOW, LIST, DESCRIBE, EXPLAIN, TERMINATE, PAUSE, RESUME, REPLAY, DROP, ALTER, SET, UNSET, DEFINE, UNDEFINE, PRINT, ASSERT or RUN SCRIPT"

// isKeyword reports whether the upper-cased word w is handed to TiDB as a
// keyword.
func isKeyword(w string) bool { return sqlKeywords[w] }

// reservedHint returns the hint for t when it is a reserved word written
// where a name goes (a column name; a stream or table name after FROM and
// JOIN), prefixed with "; ", or "". The words that start an expression
// (NOT, NULL, TRUE, FALSE, CASE) are left out: there the word is likely
// meant as itself.
func reservedHint(t, prev token) string {
	if t.kind != tkWord {
		return ""
	}
	u := t.upper()
	switch u {
	case "NOT", "NULL", "TRUE", "FALSE", "CASE":
		return ""
	}
	if !isKeyword(u) {
		return ""
	}
	what := "a column name"
	if prev.is("FROM") || prev.is("JOIN") {
		what = "a stream or table name"
	}
	return reservedWordHint(u, what)
}

// reservedWordHint says that the word w cannot be used as what unquoted,
// prefixed with "; ".
func reservedWordHint(w, what string) string {
	return "; " + w + " is a reserved word: to use it as " + what + ", quote it with backquotes: `" + w + "`"
}

// reservedNameError is ksqlDB's refusal of the reserved word t written
// unquoted as a name, then the hint.
func reservedNameError(t token) string {
	return `"` + t.text + `" is a reserved keyword and it can't be used as an identifier. You can use it as an identifier by escaping it as '` + t.text + `' ` +
		"\nQuote it with backquotes to use it as a name: `" + t.val + "`."
}
