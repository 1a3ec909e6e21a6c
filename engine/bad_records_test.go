package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/kafka"
)

// badKind is one kind of bad record a format's query must log, not stop
// on: make returns the key and value of the i-th such record; sid is the
// id the registry gave the source's value schema (0 without one).
type badKind struct {
	name string
	make func(sid uint32, i int) (key, value []byte)
	// pending names the decoder change this kind waits for: until it
	// lands, its records are produced but not expected in the log.
	pending string
}

// badRecordCase is a query over a source of one format with the kinds of
// bad record it meets. Formats with a schema registry add theirs here.
type badRecordCase struct {
	format string
	topic  string   // the source's topic
	ddl    []string // source and query, the only query
	good   func(sid uint32, i int) (key, value []byte)
	kinds  []badKind
	// nulls makes the records i%100 == 50 of a stream records without a
	// value, which its WHERE drops and counts as null values.
	nulls bool
}

// intKey is the KAFKA-format key of an INT key column.
func intKey(i int) []byte { return []byte{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)} }

// srHeader is the schema-registry wire header: magic byte 0 and the id.
func srHeader(magic byte, sid uint32) []byte {
	return []byte{magic, byte(sid >> 24), byte(sid >> 16), byte(sid >> 8), byte(sid)}
}

// jsonValue returns a JSON value case's key and value.
func jsonValue(f string, args ...any) func(uint32, int) ([]byte, []byte) {
	return func(_ uint32, i int) ([]byte, []byte) {
		return intKey(i), fmt.Appendf(nil, f, append([]any{i}, args...)...)
	}
}

var badRecordCases = []badRecordCase{{
	format: "JSON",
	topic:  "src",
	ddl: []string{
		"CREATE STREAM src (id INT KEY, v INT, ts BIGINT, s STRING) WITH (KAFKA_TOPIC='src', VALUE_FORMAT='JSON', PARTITIONS=2, TIMESTAMP='ts');",
		"SET 'sluice.max.record.bytes'='200';",
		"CREATE STREAM out AS SELECT id, v * 2 AS v2, s FROM src WHERE v % 10 <> 0;",
	},
	good: func(_ uint32, i int) ([]byte, []byte) {
		return intKey(i), fmt.Appendf(nil, `{"v":%d,"ts":%d,"s":"r%d"}`, i, 1000+i, i)
	},
	kinds: []badKind{
		{"truncated JSON", jsonValue(`{"v":%d,"ts":`), ""},
		{"invalid UTF-8", func(_ uint32, i int) ([]byte, []byte) {
			return intKey(i), append(fmt.Appendf(nil, `{"v":%d,"ts":1,"s":"a`, i), 0xff, 'b', '"', '}')
		}, ""},
		{"wrong type", jsonValue(`{"v":"x%d","ts":1}`), ""},
		{"over the maximum size", jsonValue(`{"v":%d,"ts":1,"s":"%s"}`, bytes.Repeat([]byte("x"), 300)), ""},
		{"negative timestamp", func(_ uint32, i int) ([]byte, []byte) {
			return intKey(i), fmt.Appendf(nil, `{"v":%d,"ts":-%d}`, i, i+1)
		}, ""},
	},
}, {
	// A stream without a TIMESTAMP column, with records without a value
	// among the bad ones.
	format: "JSON with null values",
	topic:  "plain",
	ddl: []string{
		"CREATE STREAM plain (id INT KEY, v INT, s STRING) WITH (KAFKA_TOPIC='plain', VALUE_FORMAT='JSON', PARTITIONS=2);",
		"CREATE STREAM pout AS SELECT id, v * 2 AS v2, s FROM plain WHERE v % 10 <> 0;",
	},
	good: func(_ uint32, i int) ([]byte, []byte) {
		return intKey(i), fmt.Appendf(nil, `{"v":%d,"s":"r%d"}`, i, i)
	},
	kinds: []badKind{{"truncated JSON", jsonValue(`{"v":%d,"s":`), ""}},
	nulls: true,
}, {
	format: "JSON_SR",
	topic:  "tsrc",
	ddl: []string{
		"CREATE TABLE tsrc (id INT PRIMARY KEY, v INT, s STRING) WITH (KAFKA_TOPIC='tsrc', KEY_FORMAT='KAFKA', VALUE_FORMAT='JSON_SR', PARTITIONS=2);",
		"CREATE TABLE tout AS SELECT id, v * 2 AS v2, s FROM tsrc WHERE v % 10 <> 0;",
	},
	good: func(sid uint32, i int) ([]byte, []byte) {
		return intKey(i), append(srHeader(0, sid), fmt.Sprintf(`{"V":%d,"S":"r%d"}`, i, i)...)
	},
	kinds: []badKind{
		{"missing key", func(sid uint32, i int) ([]byte, []byte) {
			return nil, append(srHeader(0, sid), fmt.Sprintf(`{"V":%d,"S":"k"}`, i)...)
		}, ""},
		{"unknown schema id", func(sid uint32, i int) ([]byte, []byte) {
			return intKey(i), append(srHeader(0, sid+1000), fmt.Sprintf(`{"V":%d}`, i)...)
		}, ""},
		{"bad magic byte", func(sid uint32, i int) ([]byte, []byte) {
			return intKey(i), append(srHeader(7, sid), fmt.Sprintf(`{"V":%d}`, i)...)
		}, ""},
	},
}}

// TestBadRecords feeds 100,000 records, 1 % of them bad, into a
// filter/project query per format: the query stays RUNNING, every bad
// record is in the processing log with its exact bytes, and the query's
// counters add up: in = out + filtered + errored + null values dropped.
func TestBadRecords(t *testing.T) {
	const total = 100_000
	for _, c := range badRecordCases {
		t.Run(c.format, func(t *testing.T) {
			h := newHarness(t, kafka.NewFranz, inProcess)
			defer h.close()
			s := engine.NewSession()
			s.Properties["auto.offset.reset"] = "earliest"
			for _, q := range c.ddl {
				if _, err := h.eng.Execute(h.ctx, s, q); err != nil {
					t.Fatal(err)
				}
			}
			var sid uint32
			if latest, err := h.reg.Latest(h.ctx, c.topic+"-value"); err == nil {
				sid = uint32(latest.ID)
			}
			prod, err := h.client.NewProducer(kafka.ProducerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer prod.Close()
			type coord struct {
				p   int32
				off int64
			}
			bad := map[coord][]byte{}
			pendingRecords := 0
			var nulls int64
			var batch []*kafka.Record
			for i := 0; i < total; i++ {
				key, v := c.good(sid, i)
				if i%100 == 0 {
					k := c.kinds[(i/100)%len(c.kinds)]
					if key, v = k.make(sid, i); k.pending != "" {
						// Read as a good record until the change lands.
						pendingRecords++
					}
				}
				if c.nulls && i%100 == 50 {
					v = nil
					nulls++
				}
				batch = append(batch, &kafka.Record{Topic: c.topic, Partition: int32(i % 2), Key: key, Value: v, Timestamp: time.UnixMilli(int64(1000 + i))})
				if len(batch) == 5000 || i == total-1 {
					if err := prod.Produce(h.ctx, batch); err != nil {
						t.Fatal(err)
					}
					for j, r := range batch {
						if n := i - len(batch) + 1 + j; n%100 == 0 && c.kinds[(n/100)%len(c.kinds)].pending == "" {
							bad[coord{r.Partition, r.Offset}] = r.Value
						}
					}
					batch = batch[:0]
				}
			}
			if err := h.eng.Flush(h.ctx); err != nil {
				t.Fatal(err)
			}
			logged, err := kafka.ReadAll(h.ctx, h.client, "sluice_processing_log")
			if err != nil {
				t.Fatal(err)
			}
			got := map[coord][]byte{}
			for _, r := range logged {
				var e exec.ProcessingLogEntry
				if err := json.Unmarshal(r.Value, &e); err != nil {
					t.Fatal(err)
				}
				if e.Topic == c.topic {
					got[coord{e.Partition, e.Offset}] = e.Value
				}
			}
			for k, v := range bad {
				if g, ok := got[k]; !ok || !bytes.Equal(g, v) {
					t.Errorf("bad record %d[%d] %q: logged %q (found %v)", k.p, k.off, v, g, ok)
				}
			}
			if pendingRecords > 0 {
				t.Logf("%d records of pending kinds not checked", pendingRecords)
			}
			if len(got) != len(bad) {
				t.Errorf("%d records logged, want the %d bad ones", len(got), len(bad))
			}
			res, err := h.eng.Execute(h.ctx, s, "SHOW QUERIES EXTENDED;")
			if err != nil {
				t.Fatal(err)
			}
			tab := tableOf(t, res[0])
			col := map[string]int{}
			for i, n := range tab.Columns {
				col[n] = i
			}
			row := tab.Rows[0]
			num := func(name string) int64 {
				n, err := strconv.ParseInt(row[col[name]], 10, 64)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return n
			}
			if st := row[col["Status"]]; st != "RUNNING" {
				t.Errorf("query is %s, want RUNNING", st)
			}
			in, out, filtered, errs, dropped := num("Records In"), num("Records Out"), num("Filtered"), num("Errors"), num("Nulls Dropped")
			if in != total || errs != int64(len(bad)) || dropped != nulls || in != out+filtered+errs+dropped {
				t.Errorf("in %d, out %d, filtered %d, errored %d, nulls dropped %d: want in = %d = out + filtered + errored + nulls dropped, errored = %d, nulls dropped = %d",
					in, out, filtered, errs, dropped, total, len(bad), nulls)
			}
		})
	}
}
