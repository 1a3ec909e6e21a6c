package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// TestPushQueryValuesOverGRPC runs push queries whose columns cover every
// SQL type, nested and null, on the engine and through the gRPC server:
// the rows must print the same. The corpus checks what they print.
func TestPushQueryValuesOverGRPC(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.exec.Execute(ctx, h.sess, `SET 'auto.offset.reset'='earliest';
CREATE STREAM s (id VARCHAR KEY, n INT, ts TIMESTAMP, dt DATE, tm TIME, bs BYTES, dec DECIMAL(5, 2))
  WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);`); err != nil {
		t.Fatal(err)
	}
	p, err := h.client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Produce(ctx, []*kafka.Record{
		parseRecord(t, "s", `@1700000000000 a {"N":1,"TS":1580702706007,"DT":18295,"TM":45000500,"BS":"aGk=","DEC":12.5}`),
		parseRecord(t, "s", `@1700000000001 b {}`),
	}); err != nil {
		t.Fatal(err)
	}
	remote := overGRPC(t, h.eng)
	defer remote.Close()

	for _, sql := range []string{
		`SELECT id, n, CAST(n AS BIGINT) * 10000000000 AS big, CAST(n AS DOUBLE) / 4 AS d,
  CAST(n AS DOUBLE) * 1.5E10 AS e, CAST(n AS DECIMAL(5, 2)) / 8 AS q, ROWTIME AS rt FROM s EMIT CHANGES;`,
		`SELECT ts, dt, tm, bs, dec, CAST('2020-02-03T04:05:06.007' AS TIMESTAMP) AS ts2, CAST(n AS STRING) AS str FROM s EMIT CHANGES;`,
		`SELECT ARRAY[n, NULL, 2] AS arr, MAP('k' := n, 'z' := NULL) AS m,
  STRUCT(a := n, b := id, c := STRUCT(x := ARRAY[id])) AS st FROM s EMIT CHANGES;`,
		`SELECT ARRAY[STRUCT(p := n), STRUCT(p := 5)] AS sa, MAP(id := STRUCT(q := ARRAY[CAST(n AS DECIMAL(3, 1))])) AS ms,
  FILTER(ARRAY[1], x => x > 1) AS empty, ARRAY[bs] AS ab, STRUCT(t := ts, d := dt, m := tm) AS temporal FROM s EMIT CHANGES;`,
	} {
		var outs []string
		for _, x := range []executor{h.exec, remote} {
			res, err := x.Execute(ctx, h.sess, sql)
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			if len(res) != 1 || res[0].stream == nil {
				t.Fatalf("%s: %d results, want a push query", sql, len(res))
			}
			st := res[0].stream
			var b strings.Builder
			b.WriteString(strings.Join(st.Columns(), " | ") + "\n")
			for range 2 {
				row, rowTypes, err := st.Next(ctx)
				if err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				b.WriteString(formatRow(row, rowTypes) + "\n")
			}
			st.Close()
			outs = append(outs, b.String())
		}
		if outs[0] != outs[1] {
			t.Errorf("%s\nin process:\n%s\nover gRPC:\n%s", sql, outs[0], outs[1])
		}
	}
}
