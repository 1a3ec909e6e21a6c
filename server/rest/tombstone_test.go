package rest_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/sluice-sql/sluice/kafka"
)

// tableWithTombstone creates table T over topic t, whose records are key
// 10 with ID 110, the delete of key 10 and key 11 with ID 111.
func tableWithTombstone(t *testing.T, e *env) {
	t.Helper()
	e.ksql(t, "CREATE TABLE t (k INT PRIMARY KEY, id INT) WITH (kafka_topic='t', value_format='JSON', partitions=1);", nil)
	p, err := e.client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	key := func(k int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(k)) }
	recs := []*kafka.Record{
		{Topic: "t", Partition: -1, Key: key(10), Value: []byte(`{"ID":110}`)},
		{Topic: "t", Partition: -1, Key: key(10)},
		{Topic: "t", Partition: -1, Key: key(11), Value: []byte(`{"ID":111}`)},
	}
	if err := p.Produce(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
}

// TestQueryTombstones checks a push query over a table streaming a delete
// as ksqlDB's endpoints do: /query writes it with "tombstone":true, the key
// kept and the other columns null; /query-stream, whose rows are values
// only, leaves it out. Both count it toward the LIMIT.
func TestQueryTombstones(t *testing.T) {
	e := newEnv(t)
	tableWithTombstone(t, e)
	props := map[string]any{"auto.offset.reset": "earliest"}
	status, body, _ := e.post(t, e.h1, "/query", "",
		map[string]any{"ksql": "SELECT * FROM t EMIT CHANGES LIMIT 3;", "streamsProperties": props})
	var arr []json.RawMessage
	if err := json.Unmarshal(body, &arr); status != 200 || err != nil {
		t.Fatalf("status %d, %v: %s", status, err, body)
	}
	want := []string{`{"row":{"columns":[10,110]}}`, `{"row":{"columns":[10,null],"tombstone":true}}`,
		`{"row":{"columns":[11,111]}}`, `{"finalMessage":"Limit Reached"}`}
	if len(arr) != 1+len(want) {
		t.Fatalf("got %s", body)
	}
	for i, w := range want {
		if got := string(arr[i+1]); got != w {
			t.Errorf("entry %d = %s, want %s", i+1, got, w)
		}
	}

	status, body, _ = e.post(t, e.h1, "/query-stream", "application/vnd.ksqlapi.delimited.v1",
		map[string]any{"sql": "SELECT id FROM t EMIT CHANGES LIMIT 3;", "properties": props})
	if status != 200 {
		t.Fatalf("/query-stream: status %d: %s", status, body)
	}
	wantStream := `{"queryId":"transient_T_2","columnNames":["ID"],"columnTypes":["INTEGER"]}
[110]
[111]
`
	if string(body) != wantStream {
		t.Errorf("/query-stream body:\n%s\nwant:\n%s", body, wantStream)
	}
}
