package nexmark_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/bench/nexmark"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// TestQueries runs every query over 20,000 events in an embedded broker:
// each plans, runs and writes rows, and the stateless ones write exactly
// the rows the generator's own events say they must.
func TestQueries(t *testing.T) {
	const events = 20_000
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
	if err := nexmark.CreateTopics(ctx, client, 2); err != nil {
		t.Fatal(err)
	}
	p, err := client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cfg := nexmark.Config{Seed: 11, EventsPerSecond: 1000}
	counts, err := nexmark.Load(ctx, p, cfg, 0, events, 5000)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(ctx, engine.Config{Kafka: client, DataDir: filepath.Join(dir, "state"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	sess := engine.NewSession()
	if _, err := eng.Execute(ctx, sess, "SET 'auto.offset.reset'='earliest';"+nexmark.Sources); err != nil {
		t.Fatal(err)
	}
	for _, q := range nexmark.Queries {
		if _, err := eng.Execute(ctx, sess, q.SQL); err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
	}
	if err := eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// What the stateless queries must write, from the events.
	want := map[string]int{"Q0": int(counts[nexmark.BidEvent]), "Q1": int(counts[nexmark.BidEvent]), "Q22": int(counts[nexmark.BidEvent])}
	for n := int64(0); n < events; n++ {
		if e := cfg.Generate(n); e.Kind == nexmark.BidEvent && e.Bid.Auction%123 == 0 {
			want["Q2"]++
		}
	}
	for _, q := range nexmark.Queries {
		topic := strings.ToUpper(q.Name)
		recs, err := kafka.ReadAll(ctx, client, topic)
		if err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
		if len(recs) == 0 {
			t.Errorf("%s wrote no rows", q.Name)
			continue
		}
		// The last row with a value (an updating query also writes
		// tombstones) is a JSON object.
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].Value == nil {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal(recs[i].Value, &v); err != nil {
				t.Errorf("%s: last row is not a JSON object: %v", q.Name, err)
			}
			break
		}
		if n, ok := want[topic]; ok && len(recs) != n {
			t.Errorf("%s wrote %d rows, want %d", q.Name, len(recs), n)
		}
		res, err := nexmark.Summarize(q, recs)
		if err != nil {
			t.Errorf("%s: %v", q.Name, err)
			continue
		}
		if !q.Updating && res.Final != len(recs) {
			t.Errorf("%s: an append-only result covers %d of %d rows", q.Name, res.Final, len(recs))
		}
		t.Logf("%s: %d rows, %d in the result, checksum %.12s", q.Name, res.Rows, res.Final, res.Checksum)
	}
}
