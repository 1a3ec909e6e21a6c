package exec

import (
	"testing"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
)

// TestDecodeReadColumns checks that a task decodes only the value columns
// its query reads, leaving the others null, and still refuses a record
// whose unread column does not hold its type.
func TestDecodeReadColumns(t *testing.T) {
	g := planQuery(t, bidSource, `CREATE STREAM q AS SELECT auction, price FROM bid WHERE channel = 'Google';`)
	tk := engineTask(t, g)
	recs := bidRecords(1, false)
	bad := *recs[0]
	bad.Value = []byte(`{"auction":1,"price":2,"channel":"Google","bidder":"nope"}`)
	tk.polled = []*kafka.Record{recs[0], &bad}
	tk.decode(tk.polled)
	if tk.in.Len() != 1 {
		t.Fatalf("decoded %d records, want the good one", tk.in.Len())
	}
	if n := tk.stats.errors.Load(); n != 1 {
		t.Fatalf("%d records refused, want the bad one", n)
	}
	row, schema := tk.in.Row(0), g.Source.Schema()
	read := map[string]bool{"AUCTION": true, "PRICE": true, "CHANNEL": true}
	for i := topology.PseudoColumns + len(g.Source.Key); i < len(schema); i++ {
		if name := schema[i].Name; read[name] != (row[i] != nil) {
			t.Errorf("column %s holds %v; read: %v", name, row[i], read[name])
		}
	}
}
