package exec

import (
	"testing"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
)

// TestWindowedSinkPlacement: a windowed sink topic gets each record in
// the partition of its key without the window, as Kafka Streams'
// WindowedStreamPartitioner places it, so that every window of a key
// lands in one partition; an unwindowed sink leaves the choice to the
// producer's partitioner (the key's bytes).
func TestWindowedSinkPlacement(t *testing.T) {
	cols := []types.Column{{Name: "K", Type: types.IntType}, {Name: "N", Type: types.BigintType}}
	for _, w := range []*topology.KeyWindow{{Type: topology.Tumbling, Size: 2000}, {Type: topology.Session}} {
		g := &topology.Graph{QueryID: "CSAS_W_1", KeyColumns: 1, Output: cols,
			Sink: &topology.Sink{Name: "W", Topic: "w", Partitions: 4, KeyFormat: "KAFKA", ValueFormat: "JSON", Window: w}}
		s, err := newSink(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		bare := kafka.KeyPartition([]byte{0, 0, 0, 1}, 4)
		seen := map[int32]bool{}
		for _, start := range []int64{0, 2000, 4000, 6000} {
			r, err := s.record([]any{int32(1), int64(5), start, start + 2000}, start, false, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Partition != bare {
				t.Errorf("%s window at %d: partition %d, want %d (the key's)", w.Type, start, r.Partition, bare)
			}
			seen[kafka.KeyPartition(r.Key, 4)] = true
		}
		if len(seen) < 2 {
			t.Fatalf("%s: the windowed keys all hash to one partition; the test proves nothing", w.Type)
		}
	}
	g := &topology.Graph{QueryID: "CSAS_P_1", KeyColumns: 1, Output: cols,
		Sink: &topology.Sink{Name: "P", Topic: "p", Partitions: 4, KeyFormat: "KAFKA", ValueFormat: "JSON"}}
	s, err := newSink(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.record([]any{int32(1), int64(5)}, 0, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Partition != -1 {
		t.Errorf("an unwindowed sink placed its record in partition %d, want -1 (the producer's choice)", r.Partition)
	}
}
