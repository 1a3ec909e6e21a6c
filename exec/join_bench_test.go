package exec

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/kafka"
)

// BenchmarkEngineStreamTableJoin joins 1,000,000 stream rows with a table of
// 100,000 rows loaded and committed before the task starts, polled 1,000
// records at a time with a commit after each poll, and reports the stream
// rows joined per second.
func BenchmarkEngineStreamTableJoin(b *testing.B) {
	const tableRows, streamRows, poll = 100_000, 1_000_000, 1_000
	recs := func(topic, field string, n int) [][]*kafka.Record {
		var out [][]*kafka.Record
		for from := 0; from < n; from += poll {
			batch := make([]*kafka.Record, 0, poll)
			for i := from; i < min(from+poll, n); i++ {
				k := i % tableRows
				batch = append(batch, &kafka.Record{
					Topic: topic, Offset: int64(i), Timestamp: time.UnixMilli(int64(i)),
					Key:   []byte(fmt.Sprintf("key-%06d", k)),
					Value: []byte(fmt.Sprintf(`{%q:"value-%d"}`, field, i)),
				})
			}
			out = append(out, batch)
		}
		return out
	}
	table, stream := recs("right", "R1", tableRows), recs("left", "L1", streamRows)
	b.ResetTimer()
	var elapsed time.Duration
	var allocs uint64
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		r := newJoinRun(b, joinGraph(topology.InnerJoin, false, true, nil, false))
		for _, batch := range table {
			if err := r.tk.process(b.Context(), batch); err != nil {
				b.Fatal(err)
			}
		}
		r.prod.recs = nil
		// A new task, as after a restart: the table is in the store, not
		// in the task's cache.
		r.start()
		b.StartTimer()
		a, c := allocCount(), cpuTime()
		start := time.Now()
		for _, batch := range stream {
			if err := r.tk.process(b.Context(), batch); err != nil {
				b.Fatal(err)
			}
			r.prod.recs = r.prod.recs[:0]
		}
		elapsed += time.Since(start)
		allocs += allocCount() - a
		cpu += cpuTime() - c
		b.StopTimer()
		r.tk.close()
		b.StartTimer()
	}
	report(b, streamRows*b.N, elapsed, allocs, cpu)
}

// BenchmarkStreamStreamJoin joins 500,000 rows of each of two streams over
// 10,000 keys within a window of a second either way, polled 1,000 records
// at a time (both topics in each poll), as an INNER and as a LEFT join
// (whose unmatched rows wait in the outer table), and reports the input
// rows joined per second.
func BenchmarkStreamStreamJoin(b *testing.B) {
	const rows, keys, poll = 500_000, 10_000, 1_000
	var batches [][]*kafka.Record
	for from := 0; from < rows; from += poll / 2 {
		batch := make([]*kafka.Record, 0, poll)
		for i := from; i < min(from+poll/2, rows); i++ {
			k := []byte(fmt.Sprintf("key-%05d", i%keys))
			ts := time.UnixMilli(int64(i))
			batch = append(batch,
				&kafka.Record{Topic: "left", Offset: int64(i), Timestamp: ts, Key: k, Value: []byte(fmt.Sprintf(`{"L1":"l%d"}`, i))},
				&kafka.Record{Topic: "right", Offset: int64(i), Timestamp: ts, Key: k, Value: []byte(fmt.Sprintf(`{"R1":"r%d"}`, i))})
		}
		batches = append(batches, batch)
	}
	for _, typ := range []topology.JoinType{topology.InnerJoin, topology.LeftJoin} {
		b.Run(string(typ), func(b *testing.B) { benchStreamStream(b, typ, batches, 2*rows) })
	}
}

func benchStreamStream(b *testing.B, typ topology.JoinType, batches [][]*kafka.Record, rows int) {
	var elapsed time.Duration
	for range b.N {
		b.StopTimer()
		r := newJoinRun(b, joinGraph(typ, false, false, &topology.JoinWindow{Before: 1000, After: 1000, Grace: 0}, false))
		b.StartTimer()
		start := time.Now()
		for _, batch := range batches {
			if err := r.tk.process(b.Context(), batch); err != nil {
				b.Fatal(err)
			}
			r.prod.recs = r.prod.recs[:0]
		}
		elapsed += time.Since(start)
		b.StopTimer()
		r.tk.close()
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/elapsed.Seconds(), "records/s")
}
