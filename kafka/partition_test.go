package kafka

import (
	"fmt"
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKeyPartition checks KeyPartition against the murmur2 partitioners of
// both client libraries, which follow the Java client.
func TestKeyPartition(t *testing.T) {
	franz := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for n := int32(1); n <= 12; n++ {
		sp := sarama.NewMurmur2Partitioner("t")
		for i := 0; i < 300; i++ {
			key := []byte(fmt.Sprintf("key-%08d", i))[:i%13]
			got := KeyPartition(key, n)
			if want := int32(franz.Partition(&kgo.Record{Key: key}, int(n))); got != want {
				t.Fatalf("KeyPartition(%q, %d) = %d, franz-go says %d", key, n, got, want)
			}
			want, err := sp.Partition(&sarama.ProducerMessage{Key: sarama.ByteEncoder(key)}, n)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("KeyPartition(%q, %d) = %d, sarama says %d", key, n, got, want)
			}
		}
	}
}
