package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// TestTransactions runs transactions through the franz-go adapter against
// the embedded broker and, when SLUICE_TEST_KAFKA names one, Apache Kafka:
// aborted records stay invisible to read_committed consumers, committed
// ones appear, and a second producer with the same transactional id
// fences the first.
func TestTransactions(t *testing.T) {
	brokers := map[string]string{"playground": startPlayground(t, "").Addr()}
	if addr := os.Getenv("SLUICE_TEST_KAFKA"); addr != "" {
		brokers["kafka"] = addr
	}
	for name, addr := range brokers {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, kafka.NewFranz, addr)
			topic := fmt.Sprintf("txn-%d", time.Now().UnixNano())
			createTopic(t, c, topic, 1)
			ctx := testCtx(t)
			txnID := topic + "-producer"
			p := newTxnProducer(t, c, txnID)
			rec := func(v string) []*kafka.Record {
				return []*kafka.Record{{Topic: topic, Partition: -1, Key: []byte(v), Value: []byte(v)}}
			}
			mustDo(t, p.Begin())
			mustDo(t, p.Produce(ctx, rec("aborted-1")))
			mustDo(t, p.Produce(ctx, rec("aborted-2")))
			mustDo(t, p.Abort(ctx))
			mustDo(t, p.Begin())
			mustDo(t, p.Produce(ctx, rec("committed")))
			mustDo(t, p.Commit(ctx))

			// One partition: the aborted records come before the committed
			// one, so reading up to it shows whether they were skipped.
			if got := readUntil(t, c, topic, true, "committed"); strings.Join(got, ",") != "committed" {
				t.Errorf("read_committed read %v, want [committed]", got)
			}
			if got := readUntil(t, c, topic, false, "committed"); strings.Join(got, ",") != "aborted-1,aborted-2,committed" {
				t.Errorf("read_uncommitted read %v, want the 3 records", got)
			}

			// A newer producer with the same id fences the older one,
			// whose open transaction is aborted.
			mustDo(t, p.Begin())
			mustDo(t, p.Produce(ctx, rec("zombie")))
			q := newTxnProducer(t, c, txnID)
			mustDo(t, q.Begin())
			mustDo(t, q.Produce(ctx, rec("successor")))
			mustDo(t, q.Commit(ctx))
			err := p.Commit(ctx)
			if err == nil {
				err = p.Produce(ctx, rec("zombie-2"))
			}
			if !errors.Is(err, kafka.ErrFenced) {
				t.Fatalf("the older producer: %v, want ErrFenced", err)
			}
			if got := readUntil(t, c, topic, true, "successor"); strings.Join(got, ",") != "committed,successor" {
				t.Errorf("read_committed read %v after the fencing, want [committed successor]", got)
			}
		})
	}
}

func TestSaramaRefusesTransactions(t *testing.T) {
	c := newClient(t, kafka.NewSarama, startPlayground(t, "").Addr())
	if _, err := c.NewProducer(kafka.ProducerOptions{TransactionalID: "x"}); !errors.Is(err, kafka.ErrNoTransactions) {
		t.Fatalf("got %v, want ErrNoTransactions", err)
	}
}

func newTxnProducer(t *testing.T, c kafka.Client, id string) kafka.TxnProducer {
	t.Helper()
	p, err := c.NewProducer(kafka.ProducerOptions{TransactionalID: id, TransactionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	tp, ok := p.(kafka.TxnProducer)
	if !ok {
		t.Fatal("a producer with a transactional id is not a TxnProducer")
	}
	return tp
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// readUntil reads topic's one partition from the start until a record
// with value last, and returns the values read.
func readUntil(t *testing.T, c kafka.Client, topic string, committed bool, last string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cons, err := c.NewConsumer(kafka.ConsumerOptions{ReadCommitted: committed})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	cons.Assign(map[string]map[int32]int64{topic: {0: kafka.OffsetStart}})
	var out []string
	for {
		recs, err := cons.Poll(ctx)
		if err != nil {
			t.Fatalf("read %s: %v (read %v)", topic, err, out)
		}
		for _, r := range recs {
			out = append(out, string(r.Value))
			if string(r.Value) == last {
				return out
			}
		}
	}
}

// TestStableOffsetsAndMarkers checks what readers of transactional topics
// rely on: while a transaction is open the last stable offset stays
// before it (the high watermark does not), and a consumer with
// KeepControl sees the markers, so that reading up to the high watermark
// ends; ReadAll returns the committed records only.
func TestStableOffsetsAndMarkers(t *testing.T) {
	brokers := map[string]string{"playground": startPlayground(t, "").Addr()}
	if addr := os.Getenv("SLUICE_TEST_KAFKA"); addr != "" {
		brokers["kafka"] = addr
	}
	for name, addr := range brokers {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, kafka.NewFranz, addr)
			topic := fmt.Sprintf("lso-%d", time.Now().UnixNano())
			createTopic(t, c, topic, 1)
			ctx := testCtx(t)
			p := newTxnProducer(t, c, topic+"-producer")
			mustDo(t, p.Init(ctx))
			rec := func(v string) []*kafka.Record {
				return []*kafka.Record{{Topic: topic, Partition: 0, Key: []byte(v), Value: []byte(v)}}
			}
			mustDo(t, p.Begin())
			mustDo(t, p.Produce(ctx, rec("aborted")))
			mustDo(t, p.Abort(ctx))
			mustDo(t, p.Begin())
			mustDo(t, p.Produce(ctx, rec("committed")))
			mustDo(t, p.Commit(ctx))
			mustDo(t, p.Begin())
			mustDo(t, p.Produce(ctx, rec("open")))
			hw, err := c.ListOffsets(ctx, topic)
			mustDo(t, err)
			stable, err := c.ListStableOffsets(ctx, topic)
			mustDo(t, err)
			// aborted@0, abort marker@1, committed@2, commit marker@3, open@4.
			if hw[0].End != 5 || stable[0].End != 4 {
				t.Fatalf("high watermark %d, last stable offset %d; want 5 and 4", hw[0].End, stable[0].End)
			}
			recs, err := kafka.ReadAll(ctx, c, topic)
			mustDo(t, err)
			if len(recs) != 1 || string(recs[0].Value) != "committed" {
				t.Fatalf("ReadAll read %d records, want the committed one", len(recs))
			}
			mustDo(t, p.Commit(ctx))
			cons, err := c.NewConsumer(kafka.ConsumerOptions{ReadCommitted: true, KeepControl: true})
			mustDo(t, err)
			defer cons.Close()
			cons.Assign(map[string]map[int32]int64{topic: {0: kafka.OffsetStart}})
			var got []string
			for next := int64(0); next < 6; {
				rs, err := cons.Poll(ctx)
				mustDo(t, err)
				for _, r := range rs {
					next = r.Offset + 1
					if r.Control {
						got = append(got, fmt.Sprintf("marker@%d", r.Offset))
					} else {
						got = append(got, fmt.Sprintf("%s@%d", r.Value, r.Offset))
					}
				}
			}
			if want := "marker@1 committed@2 marker@3 open@4 marker@5"; strings.Join(got, " ") != want {
				t.Fatalf("read %q, want %q", strings.Join(got, " "), want)
			}
		})
	}
}
