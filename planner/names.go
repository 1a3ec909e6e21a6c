package planner

import (
	"fmt"
	"strconv"

	"github.com/sluice-sql/sluice/catalog"
)

// aliasGen names the select items that have no alias the way ksqlDB
// does: an expression gets KSQL_COL_n, a struct field reference the
// field's name. Names never clash with a column of the query's sources:
// each name is split into a prefix and a trailing _n (B_1 is B and 1, B
// is B and 0), and a prefix's numbers that a source column uses are
// skipped. KSQL_COL counts from KSQL_COL_0; a field's name is B, then
// B_1, B_2 ... (B itself stands for 0). One counter serves a prefix
// across the whole select list, so two references to fields B give B and
// B_1, and a field named B_2 is named from the prefix B too.
type aliasGen struct {
	used map[string]map[int]bool
	next map[string]int
}

// generatedPrefix is the prefix of the names given to expressions.
const generatedPrefix = "KSQL_COL"

func newAliasGen(sources ...*catalog.Source) *aliasGen {
	g := &aliasGen{used: map[string]map[int]bool{}, next: map[string]int{}}
	for _, s := range sources {
		for _, c := range s.Columns() {
			prefix, n := splitNumbered(c.Name)
			if g.used[prefix] == nil {
				g.used[prefix] = map[int]bool{}
			}
			g.used[prefix][n] = true
		}
	}
	return g
}

// splitNumbered splits name into the text before a trailing _digits and
// the number (0 without one).
func splitNumbered(name string) (string, int) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) || i == 0 || name[i-1] != '_' {
		return name, 0
	}
	n, err := strconv.Atoi(name[i:])
	if err != nil {
		return name, 0
	}
	return name[:i-1], n
}

func (g *aliasGen) gen(prefix string) string {
	for {
		n := g.next[prefix]
		g.next[prefix] = n + 1
		if g.used[prefix][n] {
			continue
		}
		if n == 0 && prefix != generatedPrefix {
			return prefix
		}
		return fmt.Sprintf("%s_%d", prefix, n)
	}
}

// expression names an expression item: KSQL_COL_n.
func (g *aliasGen) expression() string { return g.gen(generatedPrefix) }

// field names a reference to the struct field field.
func (g *aliasGen) field(field string) string {
	prefix, _ := splitNumbered(field)
	return g.gen(prefix)
}
