package engine_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// producerLog is a client that notes the options of every producer it
// creates.
type producerLog struct {
	kafka.Client
	mu   sync.Mutex
	opts []kafka.ProducerOptions
}

func (c *producerLog) NewProducer(o kafka.ProducerOptions) (kafka.Producer, error) {
	c.mu.Lock()
	c.opts = append(c.opts, o)
	c.mu.Unlock()
	return c.Client.NewProducer(o)
}

// compressionOf is the compression of the producers whose client id
// starts with query.
func (c *producerLog) compressionOf(query string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, o := range c.opts {
		if strings.HasPrefix(o.ClientID, query) && !slices.Contains(out, o.Compression) {
			out = append(out, o.Compression)
		}
	}
	return out
}

// TestQueryCompression: a persistent query produces with the session's
// compression.type (under any of its names) when it was created, the
// default (kafka.DefaultCompression) without one, and keeps its codec
// across a restart; an
// unknown codec is refused with Kafka's message.
func TestQueryCompression(t *testing.T) {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	rec := &producerLog{Client: h.client}
	h.configure = func(c *engine.Config) { c.Kafka = rec }
	if err := h.shut(); err != nil {
		t.Fatal(err)
	}
	h.open()
	s := engine.NewSession()
	run := func(sql string) {
		t.Helper()
		if _, err := h.eng.Execute(h.ctx, s, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	run(`CREATE STREAM src (id INT KEY, v INT) WITH (kafka_topic='cmp_src', value_format='JSON', partitions=1);`)
	run(`SET 'ksql.streams.producer.compression.type'='zstd';`)
	run(`CREATE STREAM zipped AS SELECT * FROM src;`)
	run(`UNSET 'ksql.streams.producer.compression.type';`)
	run(`CREATE STREAM plain AS SELECT * FROM src;`)
	run(`INSERT INTO src (id, v) VALUES (1, 2);`)
	if err := h.eng.Flush(h.ctx); err != nil {
		t.Fatal(err)
	}
	if got := rec.compressionOf("CSAS_ZIPPED_"); !slices.Equal(got, []string{"zstd"}) {
		t.Errorf("CSAS_ZIPPED produces with %q, want zstd", got)
	}
	if got := rec.compressionOf("CSAS_PLAIN_"); !slices.Equal(got, []string{""}) {
		t.Errorf("CSAS_PLAIN produces with %q, want the default", got)
	}
	// The codec is the query's: a restart keeps it.
	if err := h.shut(); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	rec.opts = nil
	rec.mu.Unlock()
	h.open()
	if err := h.eng.Flush(h.ctx); err != nil {
		t.Fatal(err)
	}
	if got := rec.compressionOf("CSAS_ZIPPED_"); !slices.Equal(got, []string{"zstd"}) {
		t.Errorf("after a restart CSAS_ZIPPED produces with %q, want zstd", got)
	}
	_, err := h.eng.Execute(h.ctx, s, `SET 'compression.type'='brotli';`)
	want := "Invalid value brotli for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("SET compression.type brotli: %v, want %q", err, want)
	}
}
