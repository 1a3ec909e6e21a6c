package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/kafka"
)

// TestSourceTableMaterialized checks that CREATE SOURCE TABLE, and CREATE
// TABLE AS SELECT over a table, keep the tables' rows where
// exec.MaterializedTables reads them, across a restart without the local
// state store.
func TestSourceTableMaterialized(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{broker.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	open := func() *Engine {
		e, err := Open(ctx, Config{Kafka: client, DataDir: filepath.Join(dir, "data"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	if _, err := e.Execute(ctx, NewSession(), `CREATE SOURCE TABLE users (id VARCHAR PRIMARY KEY, name VARCHAR) WITH (KAFKA_TOPIC='users', VALUE_FORMAT='JSON', PARTITIONS=1);`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Execute(ctx, NewSession(), `SET 'auto.offset.reset'='earliest'; CREATE TABLE names AS SELECT id, UCASE(name) AS name FROM users WHERE name <> 'cy';`); err != nil {
		t.Fatal(err)
	}
	p, err := client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rec := func(k, v string) *kafka.Record {
		r := &kafka.Record{Topic: "users", Partition: 0, Key: []byte(k)}
		if v != "" {
			r.Value = []byte(v)
		}
		return r
	}
	if err := p.Produce(ctx, []*kafka.Record{rec("u1", `{"name":"ann"}`), rec("u2", `{"name":"bob"}`), rec("u3", `{"name":"cy"}`), rec("u1", "")}); err != nil {
		t.Fatal(err)
	}
	rows := func(e *Engine, id string) []string {
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		q, ok := e.cat.Query(id)
		if !ok {
			t.Fatalf("no query %s", id)
		}
		mts := exec.MaterializedTables(q.Plan)
		if len(mts) != 1 {
			t.Fatalf("MaterializedTables = %v", mts)
		}
		var out []string
		if err := mts[0].ScanRows(e.store, 0, func(row []any) bool {
			if exec.IsMaterialization(q.Plan) {
				row = row[3:] // the pseudo-columns
			}
			out = append(out, fmt.Sprint(row))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, wantNames := "[[u2 bob] [u3 cy]]", "[[u2 BOB]]"
	if got := fmt.Sprint(rows(e, "CST_USERS_1")); got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if got := fmt.Sprint(rows(e, "CTAS_NAMES_2")); got != wantNames {
		t.Fatalf("NAMES rows %s, want %s", got, wantNames)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "data", "state-store")); err != nil {
		t.Fatal(err)
	}
	e = open()
	defer e.Close()
	if got := fmt.Sprint(rows(e, "CST_USERS_1")); got != want {
		t.Fatalf("after a restart without local state: rows %s, want %s", got, want)
	}
	if got := fmt.Sprint(rows(e, "CTAS_NAMES_2")); got != wantNames {
		t.Fatalf("after a restart without local state: NAMES rows %s, want %s", got, wantNames)
	}
}
