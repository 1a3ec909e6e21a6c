package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/oracle"
	"github.com/sluice-sql/sluice/kafka"
)

// pythonProducer produces the JSON lines [key, value] it reads on stdin
// to topic argv[2] on brokers argv[1], keyed, with the Java client's
// partitioner: librdkafka's default (consistent_random, CRC32) puts keys
// elsewhere than Kafka's Java client and Sluice do.
const pythonProducer = `
import json, sys
from confluent_kafka import Producer
p = Producer({'bootstrap.servers': sys.argv[1], 'partitioner': 'murmur2_random', 'acks': 'all'})
errs = []
def done(err, msg):
    if err is not None:
        errs.append(err)
for line in sys.stdin:
    k, v = json.loads(line)
    p.produce(sys.argv[2], key=k.encode(), value=v.encode(), on_delivery=done)
    p.poll(0)
left = p.flush(60)
if errs or left:
    sys.exit('produce failed: %r, %d not delivered' % (errs, left))
`

// pythonConsumer prints every record of topic argv[2] as a JSON line
// [partition, key, value], reading each partition to its end.
const pythonConsumer = `
import json, sys
from confluent_kafka import Consumer, TopicPartition
c = Consumer({'bootstrap.servers': sys.argv[1], 'group.id': sys.argv[3], 'enable.auto.commit': False,
              'enable.partition.eof': True, 'auto.offset.reset': 'earliest'})
md = c.list_topics(sys.argv[2], timeout=30)
parts = list(md.topics[sys.argv[2]].partitions)
c.assign([TopicPartition(sys.argv[2], p, 0) for p in parts])
left = set(parts)
while left:
    m = c.poll(30)
    if m is None:
        sys.exit('timed out reading ' + sys.argv[2])
    if m.error():
        if m.error().code() == -191:  # _PARTITION_EOF
            left.discard(m.partition())
            continue
        sys.exit(str(m.error()))
    print(json.dumps([m.partition(), m.key().decode() if m.key() is not None else None, m.value().decode()]))
c.close()
`

// outsideRow is a record as an outside client sees it.
type outsideRow struct {
	partition  int32
	key, value string
}

// requirePython returns a python3 that has confluent_kafka (Debian:
// python3-confluent-kafka), skipping (failing under CI=true) without.
func requirePython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		p, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		tried = append(tried, p)
		if exec.Command(p, "-c", "import confluent_kafka").Run() == nil {
			return p
		}
	}
	msg := fmt.Sprintf("no python3 with the confluent_kafka module (tried %v; Debian: apt-get install python3-confluent-kafka)", tried)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func run(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// TestOutsideClients feeds Sluice from kcat and Python confluent_kafka
// (both librdkafka, with partitioner murmur2_random) and reads Sluice's
// outputs with both: a filter over kcat's records and a keyed
// stream-table join of kcat's orders with Python's customers, over
// 4-partition topics, must find every match.
func TestOutsideClients(t *testing.T) {
	kcat := requireTool(t, "kcat", "Debian: apt-get install kcat")
	python := requirePython(t)
	forEachAdapter(t, func(t *testing.T, a adapter, cl kafka.Client) {
		brokers := requireKafka(t)
		bootstrap := strings.Join(brokers, ",")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		tag := "outside_" + a.name + "_" + runID
		orders, customers := "ext_orders_"+tag, "ext_customers_"+tag
		big, joined := "ext_big_"+tag, "ext_enriched_"+tag
		p := &pipeline{t: t, ctx: ctx, tag: tag, cl: cl, drv: cl, sess: engine.NewSession()}
		t.Cleanup(p.cleanup)
		eng, err := engine.Open(ctx, engine.Config{Kafka: cl, DataDir: filepath.Join(t.TempDir(), "data"), ServiceID: "it_" + tag, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		p.eng = eng
		t.Cleanup(func() { _ = eng.Close() })
		p.exec(`SET 'auto.offset.reset'='earliest';`)
		p.exec(fmt.Sprintf(`CREATE STREAM %s (cust VARCHAR KEY, seq BIGINT, amount BIGINT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=4);`, orders, orders))
		p.exec(fmt.Sprintf(`CREATE TABLE %s (id VARCHAR PRIMARY KEY, name VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=4);`, customers, customers))

		// Customers from Python, first, so that the join meets them all.
		start := time.Now()
		var in bytes.Buffer
		names := map[string]string{}
		for i := range 48 {
			key := fmt.Sprintf("k%02d", i)
			names[key] = "name of " + key
			line, _ := json.Marshal([]string{key, fmt.Sprintf(`{"NAME":%q}`, names[key])})
			in.Write(append(line, '\n'))
		}
		run(t, in.Bytes(), python, "-c", pythonProducer, bootstrap, customers)
		t.Logf("timing: python produced %d customers in %s", len(names), time.Since(start).Round(time.Millisecond))
		checkPlacement(t, ctx, cl, customers, len(names))

		p.exec(fmt.Sprintf(`CREATE STREAM %s AS SELECT cust, seq, amount FROM %s WHERE amount >= 50;`, big, orders))
		p.exec(fmt.Sprintf(`CREATE STREAM %s AS SELECT o.cust, seq, amount, name FROM %s o JOIN %s c ON o.cust = c.id;`, joined, orders, customers))
		p.flush(2 * time.Minute)

		// Orders from kcat.
		start = time.Now()
		in.Reset()
		wantBig, wantJoin := map[string]int{}, map[string]int{}
		const n = 600
		for i := range n {
			key := fmt.Sprintf("k%02d", (i*7)%64)
			amount := (i * 13) % 100
			fmt.Fprintf(&in, "%s|{\"SEQ\":%d,\"AMOUNT\":%d}\n", key, i, amount)
			if amount >= 50 {
				wantBig[oracle.RowKey(key, int64(i), amount, "")]++
			}
			if name, ok := names[key]; ok {
				wantJoin[oracle.RowKey(key, int64(i), amount, name)]++
			}
		}
		run(t, in.Bytes(), kcat, "-b", bootstrap, "-P", "-t", orders, "-K", "|", "-X", "partitioner=murmur2_random", "-X", "acks=all")
		t.Logf("timing: kcat produced %d orders in %s", n, time.Since(start).Round(time.Millisecond))
		checkPlacement(t, ctx, cl, orders, n)
		p.flush(2 * time.Minute)
		p.checkRunningN(2)

		bigTopic, joinTopic := p.sinkTopic(big), p.sinkTopic(joined)
		var viaSluice []outsideRow
		for _, r := range readAll(t, ctx, cl, joinTopic) {
			viaSluice = append(viaSluice, outsideRow{r.Partition, string(r.Key), string(r.Value)})
		}
		gotBig := map[string]int{}
		for _, r := range readAll(t, ctx, cl, bigTopic) {
			var v struct{ SEQ, AMOUNT int64 }
			p.decode(r, &v)
			gotBig[oracle.RowKey(string(r.Key), v.SEQ, int(v.AMOUNT), "")]++
		}
		p.seed = 0
		p.compareRows("filter over kcat's records", wantBig, gotBig)
		p.compareRows("join of kcat's orders with Python's customers", wantJoin, joinRows(t, viaSluice))

		// Sluice's outputs, read by kcat and by Python.
		start = time.Now()
		out := run(t, nil, kcat, "-b", bootstrap, "-C", "-t", joinTopic, "-o", "beginning", "-e", "-q", "-f", "%p|%k|%s\n")
		var viaKcat []outsideRow
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.SplitN(line, "|", 3)
			if len(f) != 3 {
				t.Fatalf("kcat printed %q", line)
			}
			part, _ := strconv.Atoi(f[0])
			viaKcat = append(viaKcat, outsideRow{int32(part), f[1], f[2]})
		}
		t.Logf("timing: kcat read %d rows in %s", len(viaKcat), time.Since(start).Round(time.Millisecond))
		start = time.Now()
		out = run(t, nil, python, "-c", pythonConsumer, bootstrap, joinTopic, "it-python-"+tag)
		var viaPython []outsideRow
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var f [3]any
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatalf("python printed %q: %v", line, err)
			}
			k, _ := f[1].(string)
			v, _ := f[2].(string)
			viaPython = append(viaPython, outsideRow{int32(f[0].(float64)), k, v})
		}
		t.Logf("timing: python read %d rows in %s", len(viaPython), time.Since(start).Round(time.Millisecond))
		want := sortedRows(viaSluice)
		for _, c := range []struct {
			who  string
			rows []outsideRow
		}{{"kcat", viaKcat}, {"python", viaPython}} {
			got := sortedRows(c.rows)
			if len(got) != len(want) {
				t.Fatalf("%s read %d rows of %s, Sluice's client %d", c.who, len(got), joinTopic, len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s read %+v, Sluice's client %+v", c.who, got[i], want[i])
				}
			}
		}
	})
}

// joinRows turns the join's output records into oracle rows.
func joinRows(t *testing.T, rows []outsideRow) map[string]int {
	got := map[string]int{}
	for _, r := range rows {
		var v struct {
			SEQ, AMOUNT int64
			NAME        string
		}
		if err := json.Unmarshal([]byte(r.value), &v); err != nil {
			t.Fatalf("join output %q: %v", r.value, err)
		}
		got[oracle.RowKey(r.key, v.SEQ, int(v.AMOUNT), v.NAME)]++
	}
	return got
}

func sortedRows(rows []outsideRow) []outsideRow {
	out := append([]outsideRow(nil), rows...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].partition != out[j].partition {
			return out[i].partition < out[j].partition
		}
		if out[i].key != out[j].key {
			return out[i].key < out[j].key
		}
		return out[i].value < out[j].value
	})
	return out
}

// checkPlacement checks that an outside client put each of the n keyed
// records of topic where Kafka's Java client (and Sluice) would.
func checkPlacement(t *testing.T, ctx context.Context, cl kafka.Client, topic string, n int) {
	t.Helper()
	recs := readAll(t, ctx, cl, topic)
	if len(recs) != n {
		t.Fatalf("%s holds %d records, want %d", topic, len(recs), n)
	}
	parts, err := cl.DescribeTopic(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if want := kafka.KeyPartition(r.Key, parts.Partitions); r.Partition != want {
			t.Fatalf("%s: key %q is in partition %d; Kafka's default partitioner puts it in %d", topic, r.Key, r.Partition, want)
		}
	}
}
