package exec

import (
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
)

// KeyPartitioner returns, for the table the persistent query g
// materializes, where a key's state is: the partition, among n, of the
// topic its aggregating (last) stage reads that holds the key. key is one
// value per key column of the table, in its key order and types, as
// ScanTable's Bounds.Keys. The input is assumed placed by Kafka's default
// partitioner (murmur2 of the key's bytes), as a repartition topic is and
// as ksqlDB assumes of a source topic. ok is false when the partition
// cannot be told (a windowed input, or a table key that is not its
// input's): any partition may then hold a key.
func KeyPartitioner(g *topology.Graph) (place func(key []any, n int32) (int32, error), ok bool) {
	plan, err := planStages(g)
	if err != nil {
		return nil, false
	}
	sts := mainStages(plan)
	last := sts[len(sts)-1].g
	src := last.Source
	if src.Window != nil || len(src.Key) == 0 || g.KeyColumns != len(src.Key) || len(g.Output) < g.KeyColumns {
		return nil, false
	}
	for i, c := range src.Key {
		if !c.Type.Equal(g.Output[i].Type) {
			return nil, false
		}
	}
	var codec format.Codec
	if len(sts) == 1 && format.IsRegistryFormat(src.KeyFormat) {
		// The key's bytes hold the writer's schema id: any partition.
		return nil, false
	}
	switch {
	case len(sts) == 1:
		codec, err = format.NewKeyCodecProps(src.KeyFormat, src.Key, src.KeyProps)
	case sts[len(sts)-2].g.Sink.PlaceBy != "":
		up := sts[len(sts)-2].g.Sink
		codec, err = format.NewKeyCodecProps(up.PlaceBy, src.Key, up.PlaceProps)
	default:
		codec = newInternalCodec(src.Key)
	}
	if err != nil {
		return nil, false
	}
	return func(key []any, n int32) (int32, error) {
		b, err := codec.Encode(nil, key)
		if err != nil {
			return 0, err
		}
		return kafka.KeyPartition(b, n), nil
	}, true
}
