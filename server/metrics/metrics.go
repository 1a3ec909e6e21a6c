package metrics

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-sql/sluice/engine"
)

// ContentType is the exposition format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Source returns the running queries' figures.
type Source func(ctx context.Context) []engine.QueryMetrics

// Family is one server-wide metric family (not a query's): the
// counters of the command log, the schema registry's journal and the
// logins, say.
type Family struct {
	// Name, Type ("counter" or "gauge") and Help are the family's header.
	Name, Type, Help string
	Samples          []Sample
}

// Sample is one series of a Family.
type Sample struct {
	// Labels are name, value pairs, in order; none for a family of one
	// series.
	Labels []string
	Value  float64
}

// Collector returns server-wide families at each scrape. It is called
// from the HTTP handler's goroutine and must be safe for concurrent use.
type Collector func() []Family

// Handler serves GET /metrics from src and the collectors. version is
// reported by sluice_build_info.
func Handler(src Source, version string, collectors ...Collector) http.Handler {
	start := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		var extra []Family
		for _, c := range collectors {
			extra = append(extra, c()...)
		}
		w.Header().Set("Content-Type", ContentType)
		bw := bufio.NewWriter(w)
		Write(bw, src(ctx), version, start, extra...)
		_ = bw.Flush()
	})
}

// family is one metric family of the query figures.
type family struct {
	name, typ, help string
	value           func(m *engine.QueryMetrics) (float64, bool)
}

var families = []family{
	{"sluice_query_records_in_total", "counter", "Records the query read from its input topics.",
		func(m *engine.QueryMetrics) (float64, bool) { return float64(m.RecordsIn), true }},
	{"sluice_query_records_out_total", "counter", "Rows the query wrote to its sink or push output.",
		func(m *engine.QueryMetrics) (float64, bool) { return float64(m.RecordsOut), true }},
	{"sluice_query_records_filtered_total", "counter", "Rows a WHERE or HAVING of the query dropped.",
		func(m *engine.QueryMetrics) (float64, bool) { return float64(m.Filtered), true }},
	{"sluice_query_records_errored_total", "counter", "Records and rows the query sent to the processing log.",
		func(m *engine.QueryMetrics) (float64, bool) { return float64(m.Errors), true }},
	{"sluice_query_records_late_total", "counter", "Records a window of the query dropped because they came after its grace period.",
		func(m *engine.QueryMetrics) (float64, bool) { return float64(m.Late), true }},
	{"sluice_query_records_null_dropped_total", "counter", "Records of a stream with a null value that a WHERE, GROUP BY, join, table function or push output of the query dropped (a projection writes them on).",
		func(m *engine.QueryMetrics) (float64, bool) { return float64(m.NullsDropped), true }},
	{"sluice_query_consumer_lag_records", "gauge", "Records of the query's input topics it has not processed yet.",
		func(m *engine.QueryMetrics) (float64, bool) { return float64(m.Lag.Records), m.LagErr == nil }},
	{"sluice_query_consumer_lag_seconds", "gauge", "Seconds since the timestamp of the last record processed on a partition with lag (0 without lag).",
		func(m *engine.QueryMetrics) (float64, bool) { return m.Lag.Seconds, m.LagErr == nil }},
	{"sluice_query_restore_progress_ratio", "gauge", "Share of the query's changelog records restored into local state (1 when not restoring).",
		func(m *engine.QueryMetrics) (float64, bool) { return float64(m.RestorePercent) / 100, true }},
	{"sluice_query_task_poll_seconds_total", "counter", "Wall time the query's tasks spent waiting in polls for records.",
		func(m *engine.QueryMetrics) (float64, bool) { return m.Time.Poll.Seconds(), true }},
	{"sluice_query_task_work_seconds_total", "counter", "Wall time the query's tasks spent processing what they polled (decoding, operators, sinks, state).",
		func(m *engine.QueryMetrics) (float64, bool) { return m.Time.Work.Seconds(), true }},
	{"sluice_query_task_produce_seconds_total", "counter", "Wall time the query's tasks spent waiting for their outputs to be acknowledged.",
		func(m *engine.QueryMetrics) (float64, bool) { return m.Time.Produce.Seconds(), true }},
	{"sluice_query_task_commit_seconds_total", "counter", "Wall time the query's tasks spent waiting for offset and transaction commits.",
		func(m *engine.QueryMetrics) (float64, bool) { return m.Time.Commit.Seconds(), true }},
	{"sluice_query_task_persist_seconds_total", "counter", "Wall time the query's tasks spent writing committed state to the state store.",
		func(m *engine.QueryMetrics) (float64, bool) { return m.Time.Persist.Seconds(), true }},
	{"sluice_query_last_record_timestamp_seconds", "gauge", "Timestamp of the last input record the query processed.",
		func(m *engine.QueryMetrics) (float64, bool) {
			return float64(m.LastRecord.UnixMilli()) / 1000, !m.LastRecord.IsZero()
		}},
}

// Write writes the exposition of qs, the server-wide families extra and
// the process basics to w.
func Write(w io.Writer, qs []engine.QueryMetrics, version string, start time.Time, extra ...Family) {
	header(w, "sluice_build_info", "gauge", "Version of the Sluice server.")
	fmt.Fprintf(w, "sluice_build_info{version=\"%s\",goversion=\"%s\"} 1\n", escape(version), escape(runtime.Version()))
	header(w, "sluice_query_info", "gauge", "Running queries, with their type and status.")
	for _, q := range qs {
		fmt.Fprintf(w, "sluice_query_info{query=\"%s\",type=\"%s\",status=\"%s\"} 1\n", escape(q.ID), escape(q.Type), escape(statusWord(q.Status)))
	}
	for _, f := range families {
		header(w, f.name, f.typ, f.help)
		for i := range qs {
			if v, ok := f.value(&qs[i]); ok {
				fmt.Fprintf(w, "%s{query=\"%s\"} %s\n", f.name, escape(qs[i].ID), num(v))
			}
		}
	}
	for _, f := range extra {
		header(w, f.Name, f.Type, f.Help)
		for _, s := range f.Samples {
			fmt.Fprintf(w, "%s%s %s\n", f.Name, labels(s.Labels), num(s.Value))
		}
	}
	writeProcess(w, start)
}

// labels renders name, value pairs as {a="x",b="y"}; "" for none.
func labels(kv []string) string {
	if len(kv) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=\"%s\"", kv[i], escape(kv[i+1]))
	}
	b.WriteByte('}')
	return b.String()
}

// statusWord keeps a status's first word: an error's message would make
// one series per message.
func statusWord(s string) string {
	s, _, _ = strings.Cut(s, ":")
	s, _, _ = strings.Cut(s, " ")
	return s
}

func header(w io.Writer, name, typ, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// escape escapes a label value: backslash, double quote and newline.
func escape(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func writeProcess(w io.Writer, start time.Time) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gauge := func(name, help string, v float64) {
		header(w, name, "gauge", help)
		fmt.Fprintf(w, "%s %s\n", name, num(v))
	}
	counter := func(name, help string, v float64) {
		header(w, name, "counter", help)
		fmt.Fprintf(w, "%s %s\n", name, num(v))
	}
	gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	gauge("go_memstats_alloc_bytes", "Number of bytes allocated and still in use.", float64(ms.Alloc))
	gauge("go_memstats_sys_bytes", "Number of bytes obtained from the system.", float64(ms.Sys))
	gauge("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", float64(ms.HeapInuse))
	counter("go_gc_cycles_total", "Number of completed GC cycles.", float64(ms.NumGC))
	gauge("process_start_time_seconds", "Start time of the process since the Unix epoch in seconds.", float64(start.UnixMilli())/1000)
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", cpu.Seconds())
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		gauge("process_open_fds", "Number of open file descriptors.", float64(len(fds)))
	}
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				gauge("process_resident_memory_bytes", "Resident memory size in bytes.", float64(pages*int64(os.Getpagesize())))
			}
		}
	}
}
