package integration

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestBrokerRestart stops the single broker mid-stream and starts it
// again: the driver and the engine wait it out, every query stays
// RUNNING, and the outputs hold every row the oracle wants.
func TestBrokerRestart(t *testing.T) {
	brokers := requireKafka(t)
	requireNodes(t, 1)
	for _, a := range adapters {
		t.Run(a.name, func(t *testing.T) {
			start := time.Now()
			p := newPipeline(t, a, brokers, "restart")
			n := driverRecords(t, 4000)
			progress := p.drive(n, 100)
			waitProduced(progress, n/3)
			kafkaScript(t, "stop", "1")
			kafkaScript(t, "start", "1")
			drain(progress)
			p.check(n / 10)
			t.Logf("timing: %s took %s", t.Name(), time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestClusterFaults runs on the 3-node cluster (replication factor 3,
// min.insync.replicas=2): mid-stream it kills the node leading most
// partitions of the input, starts it again, then kills the active
// controller and starts it again.
func TestClusterFaults(t *testing.T) {
	brokers := requireKafka(t)
	requireNodes(t, 3)
	for _, a := range adapters {
		t.Run(a.name, func(t *testing.T) {
			start := time.Now()
			p := newPipeline(t, a, brokers, "cluster")
			n := driverRecords(t, 4000)
			progress := p.drive(n, 100)

			waitProduced(progress, n/5)
			leader := leaderNode(t, brokers, p.orders)
			t.Logf("killing node %s, leader of most partitions of %s", leader, p.orders)
			kafkaScript(t, "kill", leader)
			waitProduced(progress, 2*n/5)
			kafkaScript(t, "start", leader)

			waitProduced(progress, 3*n/5)
			ctrl := kafkaScript(t, "controller")
			t.Logf("killing node %s, the active controller", ctrl)
			kafkaScript(t, "kill", ctrl)
			waitProduced(progress, 4*n/5)
			kafkaScript(t, "start", ctrl)

			drain(progress)
			p.check(n / 10)
			t.Logf("timing: %s took %s", t.Name(), time.Since(start).Round(time.Millisecond))
		})
	}
}

// leaderNode returns the node id (scripts/kafka.sh's node number) that
// leads the most partitions of topic.
func leaderNode(t *testing.T, brokers []string, topic string) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	td, ok := md.Topics[topic]
	if !ok || td.Err != nil {
		t.Fatalf("metadata of %s: %v", topic, td.Err)
	}
	count := map[int32]int{}
	best := int32(-1)
	for _, pd := range td.Partitions {
		count[pd.Leader]++
		if best < 0 || count[pd.Leader] > count[best] {
			best = pd.Leader
		}
	}
	if best < 0 {
		t.Fatalf("%s has no partition leaders", topic)
	}
	return strconv.Itoa(int(best))
}
