package kafka_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// adapters is the table every conformance test runs over.
var adapters = []struct {
	name string
	new  func(kafka.Config) (kafka.Client, error)
}{
	{"franz", kafka.NewFranz},
	{"sarama", kafka.NewSarama},
}

// startPlayground starts an in-memory playground on a free port, closed
// when the test ends.
func startPlayground(t testing.TB, dataDir string) *kafka.Playground {
	t.Helper()
	pg, err := kafka.StartPlayground(context.Background(), kafka.PlaygroundConfig{
		Addr:              "127.0.0.1:0",
		DataDir:           dataDir,
		DefaultPartitions: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	return pg
}

func newClient(t testing.TB, newFn func(kafka.Config) (kafka.Client, error), addr string) kafka.Client {
	t.Helper()
	c, err := newFn(kafka.Config{Brokers: []string{addr}, ClientID: "conformance"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func createTopic(t testing.TB, c kafka.Client, name string, parts int32) {
	t.Helper()
	if err := c.CreateTopic(testCtx(t), kafka.TopicSpec{Name: name, Partitions: parts}); err != nil {
		t.Fatal(err)
	}
}

func newProducer(t testing.TB, c kafka.Client) kafka.Producer {
	t.Helper()
	p, err := c.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func newConsumer(t testing.TB, c kafka.Client, assign map[string]map[int32]int64) kafka.Consumer {
	t.Helper()
	cons, err := c.NewConsumer(kafka.ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cons.Close)
	cons.Assign(assign)
	return cons
}

// pollN polls until n records arrived, failing the test on error or when
// ctx ends first.
func pollN(ctx context.Context, t testing.TB, cons kafka.Consumer, n int) []*kafka.Record {
	t.Helper()
	var out []*kafka.Record
	for len(out) < n {
		recs, err := cons.Poll(ctx)
		if err != nil {
			t.Fatalf("poll after %d of %d records: %v", len(out), n, err)
		}
		out = append(out, recs...)
	}
	return out
}

// javaPartition is Kafka's Java default partitioner for a non-nil key:
// toPositive(murmur2(key)) % numPartitions.
func javaPartition(key []byte, numPartitions int32) int32 {
	return (javaMurmur2(key) & 0x7fffffff) % numPartitions
}

// javaMurmur2 transcribes org.apache.kafka.common.utils.Utils.murmur2.
func javaMurmur2(data []byte) int32 {
	length := int32(len(data))
	const seed = int32(-1756908916) // 0x9747b28c
	const m = int32(0x5bd1e995)
	const r = 24
	h := seed ^ length
	length4 := length / 4
	for i := int32(0); i < length4; i++ {
		i4 := i * 4
		k := int32(data[i4+0]) + int32(data[i4+1])<<8 + int32(data[i4+2])<<16 + int32(data[i4+3])<<24
		k *= m
		k ^= int32(uint32(k) >> r)
		k *= m
		h *= m
		h ^= k
	}
	switch length % 4 {
	case 3:
		h ^= int32(data[(length & ^3)+2]) << 16
		fallthrough
	case 2:
		h ^= int32(data[(length & ^3)+1]) << 8
		fallthrough
	case 1:
		h ^= int32(data[length & ^3])
		h *= m
	}
	h ^= int32(uint32(h) >> 13)
	h *= m
	h ^= int32(uint32(h) >> 15)
	return h
}

func TestJavaMurmur2KnownValues(t *testing.T) {
	// Values from Kafka's UtilsTest.testMurmur2 and the partitioner test
	// vectors used by librdkafka.
	cases := []struct {
		key  string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
	}
	for _, c := range cases {
		if got := javaMurmur2([]byte(c.key)); got != c.want {
			t.Errorf("murmur2(%q) = %d, want %d", c.key, got, c.want)
		}
	}
}

func TestConformance(t *testing.T) {
	for _, a := range adapters {
		t.Run(a.name, func(t *testing.T) {
			pg := startPlayground(t, "")
			c := newClient(t, a.new, pg.Addr())
			t.Run("Topics", func(t *testing.T) { testTopics(t, c) })
			t.Run("ClusterID", func(t *testing.T) { testClusterID(t, c) })
			t.Run("KeyedPlacement", func(t *testing.T) { testKeyedPlacement(t, c) })
			t.Run("ExplicitPartition", func(t *testing.T) { testExplicitPartition(t, c) })
			t.Run("NilKeys", func(t *testing.T) { testNilKeys(t, c) })
			t.Run("ConsumeRoundTrip", func(t *testing.T) { testConsumeRoundTrip(t, c) })
			t.Run("ConsumeEnd", func(t *testing.T) { testConsumeEnd(t, c) })
			t.Run("ConsumeOutOfRange", func(t *testing.T) { testConsumeOutOfRange(t, c) })
			t.Run("PollDeadline", func(t *testing.T) { testPollDeadline(t, c) })
			t.Run("MaxPollRecords", func(t *testing.T) { testMaxPollRecords(t, a.new, pg.Addr()) })
			t.Run("PollBuffered", func(t *testing.T) { testPollBuffered(t, a.name, a.new, pg.Addr()) })
			t.Run("ListOffsets", func(t *testing.T) { testListOffsets(t, c) })
			t.Run("GroupOffsets", func(t *testing.T) { testGroupOffsets(t, c) })
			t.Run("ProduceUnknownTopic", func(t *testing.T) { testProduceUnknownTopic(t, c) })
			t.Run("Compression", func(t *testing.T) { testCompression(t, c) })
			t.Run("ProduceAgain", func(t *testing.T) { testProduceAgain(t, c) })
			t.Run("Close", func(t *testing.T) { testClose(t, a.new, pg.Addr()) })
		})
	}
}

// testProduceAgain: one producer's calls one after another each write
// their own records, nothing of an earlier call's (headers, partition)
// carried over, and each call sets its records' partitions and offsets.
func testProduceAgain(t *testing.T, c kafka.Client) {
	ctx := testCtx(t)
	createTopic(t, c, "again", 2)
	p := newProducer(t, c)
	first := []*kafka.Record{
		{Topic: "again", Partition: 1, Key: []byte("a"), Value: []byte("1"), Headers: []kafka.Header{{Key: "h", Value: []byte("x")}}},
		{Topic: "again", Partition: 1, Key: []byte("b"), Value: []byte("2"), Headers: []kafka.Header{{Key: "h", Value: []byte("y")}}},
	}
	second := []*kafka.Record{
		{Topic: "again", Partition: 0, Key: []byte("c"), Value: []byte("3")},
		{Topic: "again", Partition: 0, Value: []byte("4")},
		{Topic: "again", Partition: 0, Key: []byte("e"), Value: []byte("5")},
	}
	for _, recs := range [][]*kafka.Record{first, second} {
		if err := p.Produce(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range append(append([]*kafka.Record(nil), first...), second...) {
		want := int64(i)
		if i >= len(first) {
			want -= int64(len(first))
		}
		if r.Offset != want {
			t.Errorf("record %q: offset %d, want %d", r.Value, r.Offset, want)
		}
	}
	cons := newConsumer(t, c, map[string]map[int32]int64{"again": {0: kafka.OffsetStart}})
	var got []*kafka.Record
	for len(got) < len(second) {
		recs, err := cons.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, recs...)
	}
	for i, r := range got {
		w := second[i]
		if r.Partition != 0 || !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) || len(r.Headers) != 0 {
			t.Errorf("second call's record %d read back as partition %d %q=%q headers %v", i, r.Partition, r.Key, r.Value, r.Headers)
		}
	}
}

// testCompression: records produced with each compression.type read back
// as they were written; another codec name is refused with Kafka's
// message.
func testCompression(t *testing.T, c kafka.Client) {
	ctx := testCtx(t)
	for _, codec := range append([]string{""}, kafka.Compressions...) {
		topic := "compressed-" + codec
		createTopic(t, c, topic, 1)
		p, err := c.NewProducer(kafka.ProducerOptions{Compression: codec})
		if err != nil {
			t.Fatalf("compression %q: %v", codec, err)
		}
		recs := make([]*kafka.Record, 50)
		for i := range recs {
			recs[i] = &kafka.Record{Topic: topic, Partition: 0, Key: fmt.Appendf(nil, "k%d", i), Value: bytes.Repeat(fmt.Appendf(nil, "value %d ", i), 20)}
		}
		err = p.Produce(ctx, recs)
		p.Close()
		if err != nil {
			t.Fatalf("compression %q: produce: %v", codec, err)
		}
		cons := newConsumer(t, c, map[string]map[int32]int64{topic: {0: kafka.OffsetStart}})
		for next := 0; next < len(recs); {
			got, err := cons.Poll(ctx)
			if err != nil {
				t.Fatalf("compression %q: poll: %v", codec, err)
			}
			for _, r := range got {
				if !bytes.Equal(r.Key, recs[next].Key) || !bytes.Equal(r.Value, recs[next].Value) {
					t.Fatalf("compression %q: record %d is %q=%q", codec, next, r.Key, r.Value)
				}
				next++
			}
		}
	}
	_, err := c.NewProducer(kafka.ProducerOptions{Compression: "brotli"})
	want := "Invalid value brotli for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("compression brotli: %v, want %q", err, want)
	}
}

// testClusterID: the cluster's id is the one its metadata gives (the
// playground's).
func testClusterID(t *testing.T, c kafka.Client) {
	id, err := c.ClusterID(testCtx(t))
	if err != nil || id != "sluice-playground" {
		t.Errorf("ClusterID = %q, %v; want sluice-playground", id, err)
	}
}

// testMaxPollRecords: a poll returns at most Config.MaxPollRecords
// records, even of one record batch fetched whole, and the rest come with
// the next polls, in order.
func testMaxPollRecords(t *testing.T, newFn func(kafka.Config) (kafka.Client, error), addr string) {
	c, err := newFn(kafka.Config{Brokers: []string{addr}, ClientID: "conformance-poll", MaxPollRecords: 100, FetchMaxPartitionBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	createTopic(t, c, "max-poll", 1)
	recs := make([]*kafka.Record, 1000)
	for i := range recs {
		recs[i] = &kafka.Record{Topic: "max-poll", Partition: 0, Value: fmt.Appendf(nil, "v%d", i)}
	}
	if err := newProducer(t, c).Produce(ctx, recs); err != nil {
		t.Fatal(err)
	}
	cons := newConsumer(t, c, map[string]map[int32]int64{"max-poll": {0: kafka.OffsetStart}})
	var next int64
	for next < int64(len(recs)) {
		got, err := cons.Poll(ctx)
		if err != nil {
			t.Fatalf("poll at offset %d: %v", next, err)
		}
		if len(got) > 100 {
			t.Fatalf("a poll returned %d records, want at most 100", len(got))
		}
		for _, r := range got {
			if r.Offset != next || string(r.Value) != fmt.Sprintf("v%d", next) {
				t.Fatalf("record at offset %d %q, want offset %d v%d", r.Offset, r.Value, next, next)
			}
			next++
		}
	}
}

// testPollBuffered: PollBuffered returns what the consumer has fetched,
// in order, without waiting (nil when nothing is fetched, at the end of
// the partition too), so that it and Poll together read every record
// once; after Close it says so. franz-go hands one fetch's records out
// over several polls of at most MaxPollRecords, so what a poll leaves is
// there for PollBuffered at once; sarama's consumer fills its channel
// from a goroutine of its own, so whether a record is there at a given
// instant is a matter of timing, and only the order is checked.
func testPollBuffered(t *testing.T, adapter string, newFn func(kafka.Config) (kafka.Client, error), addr string) {
	c, err := newFn(kafka.Config{Brokers: []string{addr}, ClientID: "conformance-poll-buffered", MaxPollRecords: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	createTopic(t, c, "poll-buffered", 1)
	recs := make([]*kafka.Record, 3000)
	for i := range recs {
		recs[i] = &kafka.Record{Topic: "poll-buffered", Partition: 0, Value: fmt.Appendf(nil, "v%d", i)}
	}
	if err := newProducer(t, c).Produce(ctx, recs); err != nil {
		t.Fatal(err)
	}
	cons := newConsumer(t, c, map[string]map[int32]int64{"poll-buffered": {0: kafka.OffsetStart}})
	bp, ok := cons.(kafka.BufferedPoller)
	if !ok {
		t.Fatalf("%T is not a kafka.BufferedPoller", cons)
	}
	var next int64
	buffered := 0
	take := func(got []*kafka.Record) {
		for _, r := range got {
			if r.Offset != next || string(r.Value) != fmt.Sprintf("v%d", next) {
				t.Fatalf("record at offset %d %q, want offset %d v%d", r.Offset, r.Value, next, next)
			}
			next++
		}
	}
	for next < int64(len(recs)) {
		got, err := bp.PollBuffered()
		if err != nil {
			t.Fatalf("poll buffered at offset %d: %v", next, err)
		}
		if len(got) > 0 {
			buffered += len(got)
			take(got)
			continue
		}
		got, err = cons.Poll(ctx)
		if err != nil {
			t.Fatalf("poll at offset %d: %v", next, err)
		}
		take(got)
	}
	if buffered == 0 && adapter == "franz" {
		t.Error("PollBuffered returned none of the records")
	}
	t.Logf("%d of %d records came from PollBuffered", buffered, len(recs))
	if got, err := bp.PollBuffered(); len(got) != 0 || err != nil {
		t.Fatalf("poll buffered at the end: %d records, %v; want none", len(got), err)
	}
	cons.Close()
	if _, err := bp.PollBuffered(); !errors.Is(err, kafka.ErrClosed) {
		t.Fatalf("poll buffered after close: %v, want ErrClosed", err)
	}
}

func testTopics(t *testing.T, c kafka.Client) {
	ctx := testCtx(t)
	spec := kafka.TopicSpec{Name: "topics-a", Partitions: 3, Configs: map[string]string{"cleanup.policy": "compact"}}
	if err := c.CreateTopic(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic(ctx, spec); !errors.Is(err, kafka.ErrTopicExists) {
		t.Fatalf("second create: got %v, want ErrTopicExists", err)
	}
	createTopic(t, c, "_topics-internal", 1)
	info, err := c.DescribeTopic(ctx, "topics-a")
	if err != nil {
		t.Fatal(err)
	}
	if want := (kafka.TopicInfo{Name: "topics-a", Partitions: 3, ReplicationFactor: 1}); info != want {
		t.Fatalf("describe: got %+v, want %+v", info, want)
	}
	if _, err := c.DescribeTopic(ctx, "topics-missing"); !errors.Is(err, kafka.ErrUnknownTopic) {
		t.Fatalf("describe missing: got %v, want ErrUnknownTopic", err)
	}
	list, err := c.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range list {
		names = append(names, ti.Name)
	}
	if !slices.IsSorted(names) {
		t.Fatalf("ListTopics not sorted: %v", names)
	}
	for _, want := range []string{"_topics-internal", "topics-a"} {
		if !slices.Contains(names, want) {
			t.Fatalf("ListTopics %v lacks %q", names, want)
		}
	}
	if slices.Contains(names, "topics-missing") {
		t.Fatalf("describing a missing topic created it: %v", names)
	}
	if err := c.DeleteTopic(ctx, "topics-a"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTopic(ctx, "topics-a"); !errors.Is(err, kafka.ErrUnknownTopic) {
		t.Fatalf("second delete: got %v, want ErrUnknownTopic", err)
	}
	if _, err := c.DescribeTopic(ctx, "topics-a"); !errors.Is(err, kafka.ErrUnknownTopic) {
		t.Fatalf("describe deleted: got %v, want ErrUnknownTopic", err)
	}
}

func testKeyedPlacement(t *testing.T, c kafka.Client) {
	const parts = 7
	createTopic(t, c, "placement", parts)
	p := newProducer(t, c)
	recs := make([]*kafka.Record, 1000)
	for i := range recs {
		recs[i] = &kafka.Record{Topic: "placement", Partition: -1, Key: fmt.Appendf(nil, "key-%d", i), Value: []byte("v")}
	}
	if err := p.Produce(testCtx(t), recs); err != nil {
		t.Fatal(err)
	}
	var wrong int
	for _, r := range recs {
		if want := javaPartition(r.Key, parts); r.Partition != want {
			if wrong++; wrong <= 5 {
				t.Errorf("key %q: partition %d, Java places it on %d", r.Key, r.Partition, want)
			}
		}
	}
	if wrong > 0 {
		t.Fatalf("%d of %d keys placed unlike Java", wrong, len(recs))
	}
	// Offsets are dense per partition, in produce order.
	next := map[int32]int64{}
	for _, r := range recs {
		if r.Offset != next[r.Partition] {
			t.Fatalf("key %q: offset %d on partition %d, want %d", r.Key, r.Offset, r.Partition, next[r.Partition])
		}
		next[r.Partition]++
	}
}

func testExplicitPartition(t *testing.T, c kafka.Client) {
	createTopic(t, c, "explicit", 4)
	p := newProducer(t, c)
	var recs []*kafka.Record
	for i := range 20 {
		part := int32(i % 4)
		recs = append(recs, &kafka.Record{Topic: "explicit", Partition: part, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")})
	}
	if err := p.Produce(testCtx(t), recs); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.Partition != int32(i%4) || r.Offset != int64(i/4) {
			t.Fatalf("record %d: at %d/%d, want %d/%d", i, r.Partition, r.Offset, i%4, i/4)
		}
	}
	bad := []*kafka.Record{{Topic: "explicit", Partition: 9, Value: []byte("v")}}
	if err := p.Produce(testCtx(t), bad); err == nil {
		t.Fatal("produce to partition 9 of 4: no error")
	}
}

func testNilKeys(t *testing.T, c kafka.Client) {
	createTopic(t, c, "nilkeys", 3)
	p := newProducer(t, c)
	recs := make([]*kafka.Record, 100)
	for i := range recs {
		recs[i] = &kafka.Record{Topic: "nilkeys", Partition: -1, Value: []byte("v")}
	}
	if err := p.Produce(testCtx(t), recs); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Partition < 0 || r.Partition >= 3 || r.Offset < 0 {
			t.Fatalf("nil-key record at %d/%d", r.Partition, r.Offset)
		}
	}
}

func testConsumeRoundTrip(t *testing.T, c kafka.Client) {
	createTopic(t, c, "roundtrip", 2)
	p := newProducer(t, c)
	base := time.UnixMilli(1_700_000_000_000)
	var recs []*kafka.Record
	for i := range 10 {
		recs = append(recs, &kafka.Record{
			Topic:     "roundtrip",
			Partition: 1,
			Key:       fmt.Appendf(nil, "k%d", i),
			Value:     fmt.Appendf(nil, "v%d", i),
			Timestamp: base.Add(time.Duration(i) * time.Second),
			Headers:   []kafka.Header{{Key: "h", Value: fmt.Appendf(nil, "x%d", i)}, {Key: "dup", Value: nil}, {Key: "dup", Value: []byte("2")}},
		})
	}
	recs[3].Key = nil
	recs[4].Value = nil
	if err := p.Produce(testCtx(t), recs); err != nil {
		t.Fatal(err)
	}

	check := func(t *testing.T, got []*kafka.Record, from int) {
		t.Helper()
		want := recs[from:]
		if len(got) != len(want) {
			t.Fatalf("got %d records, want %d", len(got), len(want))
		}
		for i, g := range got {
			w := want[i]
			if g.Topic != w.Topic || g.Partition != w.Partition || g.Offset != w.Offset {
				t.Fatalf("record %d at %s/%d/%d, want %s/%d/%d", i, g.Topic, g.Partition, g.Offset, w.Topic, w.Partition, w.Offset)
			}
			if !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) {
				t.Fatalf("offset %d: key %q, want %q", g.Offset, g.Key, w.Key)
			}
			if !bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) {
				t.Fatalf("offset %d: value %q, want %q", g.Offset, g.Value, w.Value)
			}
			if !g.Timestamp.Equal(w.Timestamp) {
				t.Fatalf("offset %d: timestamp %v, want %v", g.Offset, g.Timestamp, w.Timestamp)
			}
			if len(g.Headers) != len(w.Headers) {
				t.Fatalf("offset %d: headers %v, want %v", g.Offset, g.Headers, w.Headers)
			}
			for j := range g.Headers {
				if g.Headers[j].Key != w.Headers[j].Key || !bytes.Equal(g.Headers[j].Value, w.Headers[j].Value) {
					t.Fatalf("offset %d: headers %v, want %v", g.Offset, g.Headers, w.Headers)
				}
			}
		}
	}
	t.Run("FromStart", func(t *testing.T) {
		cons := newConsumer(t, c, map[string]map[int32]int64{"roundtrip": {0: kafka.OffsetStart, 1: kafka.OffsetStart}})
		check(t, pollN(testCtx(t), t, cons, 10), 0)
	})
	t.Run("FromOffset", func(t *testing.T) {
		cons := newConsumer(t, c, map[string]map[int32]int64{"roundtrip": {1: 6}})
		check(t, pollN(testCtx(t), t, cons, 4), 6)
	})
	t.Run("AssignTwice", func(t *testing.T) {
		cons := newConsumer(t, c, map[string]map[int32]int64{"roundtrip": {0: kafka.OffsetStart}})
		cons.Assign(map[string]map[int32]int64{"roundtrip": {1: 8}})
		check(t, pollN(testCtx(t), t, cons, 2), 8)
	})
}

func testConsumeEnd(t *testing.T, c kafka.Client) {
	const topic = "consume-end"
	createTopic(t, c, topic, 1)
	p := newProducer(t, c)
	old := []*kafka.Record{{Topic: topic, Partition: -1, Value: []byte("old")}, {Topic: topic, Partition: -1, Value: []byte("old")}}
	if err := p.Produce(testCtx(t), old); err != nil {
		t.Fatal(err)
	}
	cons := newConsumer(t, c, map[string]map[int32]int64{topic: {0: kafka.OffsetEnd}})
	// The consumer resolves the end asynchronously, so keep producing new
	// records until one arrives; none of the old ones may.
	ctx := testCtx(t)
	for {
		if err := p.Produce(ctx, []*kafka.Record{{Topic: topic, Partition: -1, Value: []byte("new")}}); err != nil {
			t.Fatal(err)
		}
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		recs, err := cons.Poll(pctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if string(r.Value) != "new" || r.Offset < 2 {
				t.Fatalf("consumer from end read %q at offset %d", r.Value, r.Offset)
			}
		}
		return
	}
}

func testConsumeOutOfRange(t *testing.T, c kafka.Client) {
	createTopic(t, c, "out-of-range", 1)
	recs := []*kafka.Record{{Topic: "out-of-range", Partition: 0, Value: []byte("a")}, {Topic: "out-of-range", Partition: 0, Value: []byte("b")}}
	if err := newProducer(t, c).Produce(testCtx(t), recs); err != nil {
		t.Fatal(err)
	}
	cons := newConsumer(t, c, map[string]map[int32]int64{"out-of-range": {0: 100}})
	got := pollN(testCtx(t), t, cons, 2)
	if got[0].Offset != 0 || got[1].Offset != 1 {
		t.Fatalf("consumer assigned past the end read offsets %d, %d; want 0, 1", got[0].Offset, got[1].Offset)
	}
}

func testPollDeadline(t *testing.T, c kafka.Client) {
	createTopic(t, c, "poll-deadline", 1)
	cons := newConsumer(t, c, map[string]map[int32]int64{"poll-deadline": {0: kafka.OffsetStart}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	recs, err := cons.Poll(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || len(recs) != 0 {
		t.Fatalf("poll of an empty topic: %d records, err %v; want context.DeadlineExceeded", len(recs), err)
	}
}

func testListOffsets(t *testing.T, c kafka.Client) {
	ctx := testCtx(t)
	createTopic(t, c, "list-offsets", 3)
	p := newProducer(t, c)
	var recs []*kafka.Record
	for i := range 6 {
		recs = append(recs, &kafka.Record{Topic: "list-offsets", Partition: int32(i % 2), Value: []byte("v")})
	}
	if err := p.Produce(ctx, recs); err != nil {
		t.Fatal(err)
	}
	got, err := c.ListOffsets(ctx, "list-offsets")
	if err != nil {
		t.Fatal(err)
	}
	want := []kafka.Offsets{{Start: 0, End: 3}, {Start: 0, End: 3}, {Start: 0, End: 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("ListOffsets: got %v, want %v", got, want)
	}
	if _, err := c.ListOffsets(ctx, "list-offsets-missing"); !errors.Is(err, kafka.ErrUnknownTopic) {
		t.Fatalf("ListOffsets of a missing topic: got %v, want ErrUnknownTopic", err)
	}
}

func testGroupOffsets(t *testing.T, c kafka.Client) {
	ctx := testCtx(t)
	createTopic(t, c, "group-offsets", 3)
	createTopic(t, c, "group-offsets-b", 1)
	got, err := c.FetchOffsets(ctx, "g1", "group-offsets")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{-1, -1, -1}; !slices.Equal(got, want) {
		t.Fatalf("fetch before commit: got %v, want %v", got, want)
	}
	if err := c.CommitOffsets(ctx, "g1", map[string]map[int32]int64{
		"group-offsets":   {0: 5, 2: 7},
		"group-offsets-b": {0: 1},
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitOffsets(ctx, "g1", map[string]map[int32]int64{"group-offsets": {2: 9}}); err != nil {
		t.Fatal(err)
	}
	got, err = c.FetchOffsets(ctx, "g1", "group-offsets")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{5, -1, 9}; !slices.Equal(got, want) {
		t.Fatalf("fetch after commit: got %v, want %v", got, want)
	}
	got, err = c.FetchOffsets(ctx, "g2", "group-offsets")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{-1, -1, -1}; !slices.Equal(got, want) {
		t.Fatalf("fetch of another group: got %v, want %v", got, want)
	}
	if _, err := c.FetchOffsets(ctx, "g1", "group-offsets-missing"); !errors.Is(err, kafka.ErrUnknownTopic) {
		t.Fatalf("fetch for a missing topic: got %v, want ErrUnknownTopic", err)
	}
	if err := c.DeleteGroup(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	got, err = c.FetchOffsets(ctx, "g1", "group-offsets")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{-1, -1, -1}; !slices.Equal(got, want) {
		t.Fatalf("fetch after delete: got %v, want %v", got, want)
	}
	if err := c.DeleteGroup(ctx, "g-never"); err != nil {
		t.Fatalf("delete of an unknown group: %v", err)
	}
}

func testProduceUnknownTopic(t *testing.T, c kafka.Client) {
	p := newProducer(t, c)
	err := p.Produce(testCtx(t), []*kafka.Record{{Topic: "produce-missing", Partition: -1, Value: []byte("v")}})
	if !errors.Is(err, kafka.ErrUnknownTopic) {
		t.Fatalf("produce to a missing topic: got %v, want ErrUnknownTopic", err)
	}
	if _, err := c.DescribeTopic(testCtx(t), "produce-missing"); !errors.Is(err, kafka.ErrUnknownTopic) {
		t.Fatalf("produce created the topic (describe: %v)", err)
	}
}

func testClose(t *testing.T, newFn func(kafka.Config) (kafka.Client, error), addr string) {
	c, err := newFn(kafka.Config{Brokers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	createTopic(t, c, "close", 1)
	p, err := c.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := c.NewConsumer(kafka.ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cons.Assign(map[string]map[int32]int64{"close": {0: kafka.OffsetStart}})
	polled := make(chan error, 1)
	go func() {
		_, err := cons.Poll(context.Background())
		polled <- err
	}()
	c.Close()
	c.Close()
	if err := <-polled; !errors.Is(err, kafka.ErrClosed) {
		t.Fatalf("Poll blocked during Close: got %v, want ErrClosed", err)
	}
	ctx := testCtx(t)
	checks := map[string]error{
		"CreateTopic":   c.CreateTopic(ctx, kafka.TopicSpec{Name: "x", Partitions: 1}),
		"DeleteTopic":   c.DeleteTopic(ctx, "x"),
		"CommitOffsets": c.CommitOffsets(ctx, "g", map[string]map[int32]int64{"close": {0: 1}}),
		"DeleteGroup":   c.DeleteGroup(ctx, "g"),
		"Produce":       p.Produce(ctx, []*kafka.Record{{Topic: "close", Partition: -1}}),
	}
	_, checks["DescribeTopic"] = c.DescribeTopic(ctx, "close")
	_, checks["ListTopics"] = c.ListTopics(ctx)
	_, checks["ListOffsets"] = c.ListOffsets(ctx, "close")
	_, checks["FetchOffsets"] = c.FetchOffsets(ctx, "g", "close")
	_, checks["NewProducer"] = c.NewProducer(kafka.ProducerOptions{})
	_, checks["NewConsumer"] = c.NewConsumer(kafka.ConsumerOptions{})
	_, checks["Poll"] = cons.Poll(ctx)
	for name, err := range checks {
		if !errors.Is(err, kafka.ErrClosed) {
			t.Errorf("%s after Close: got %v, want ErrClosed", name, err)
		}
	}
	p.Close()
	p.Close()
	cons.Close()
	cons.Close()
}

// TestInterop produces with each adapter and consumes with every adapter,
// and checks that all adapters place the same keys on the same partitions.
func TestInterop(t *testing.T) {
	pg := startPlayground(t, "")
	clients := make([]kafka.Client, len(adapters))
	for i, a := range adapters {
		clients[i] = newClient(t, a.new, pg.Addr())
	}
	placements := make([][]int32, len(adapters))
	for i, a := range adapters {
		topic := "interop-" + a.name
		createTopic(t, clients[i], topic, 5)
		recs := make([]*kafka.Record, 1000)
		for j := range recs {
			recs[j] = &kafka.Record{Topic: topic, Partition: -1, Key: fmt.Appendf(nil, "user-%d", j), Value: fmt.Appendf(nil, "%d", j)}
		}
		if err := newProducer(t, clients[i]).Produce(testCtx(t), recs); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			placements[i] = append(placements[i], r.Partition)
		}
		for k, b := range adapters {
			assign := map[string]map[int32]int64{topic: {}}
			for p := range int32(5) {
				assign[topic][p] = kafka.OffsetStart
			}
			got := pollN(testCtx(t), t, newConsumer(t, clients[k], assign), len(recs))
			for _, g := range got {
				var j int
				fmt.Sscanf(string(g.Value), "%d", &j)
				if want := recs[j]; g.Partition != want.Partition || g.Offset != want.Offset || !bytes.Equal(g.Key, want.Key) {
					t.Fatalf("%s read %s's record %q at %d/%d, produced at %d/%d", b.name, a.name, g.Key, g.Partition, g.Offset, want.Partition, want.Offset)
				}
			}
		}
	}
	for i := 1; i < len(adapters); i++ {
		if !slices.Equal(placements[0], placements[i]) {
			t.Fatalf("%s and %s place keys differently", adapters[0].name, adapters[i].name)
		}
	}
}
