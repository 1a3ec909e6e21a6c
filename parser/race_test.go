package parser

import (
	"sync"
	"testing"

	"github.com/sluice-sql/sluice/parser/ast"
)

// TestParseConcurrently parses different statements at once: each result
// must be what the same statement gives alone (the TiDB parsers are pooled
// and reuse their trees).
func TestParseConcurrently(t *testing.T) {
	stmts := []string{
		"SELECT a, b + 1 AS c FROM s WHERE a > 10 EMIT CHANGES;",
		"SELECT UCASE(x), y FROM t WHERE y IS NULL EMIT CHANGES LIMIT 3;",
		"CREATE STREAM o AS SELECT k, CASE WHEN v > 0 THEN 'p' ELSE 'n' END AS sign FROM i;",
	}
	want := make([]string, len(stmts))
	for i, s := range stmts {
		st, err := ParseOne(s)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = ast.Format(st)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 200; n++ {
				i := (g + n) % len(stmts)
				st, err := ParseOne(stmts[i])
				if err != nil {
					t.Error(err)
					return
				}
				if got := ast.Format(st); got != want[i] {
					t.Errorf("concurrent parse of %q gave %q, want %q", stmts[i], got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}
