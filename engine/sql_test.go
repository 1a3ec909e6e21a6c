package engine_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/registry"
)

// TestSQL runs the datadriven SQL corpus in testdata/sql. Directives:
//
//	statement            run statements; print each result (message, table)
//	                     or the error
//	query                run one statement that returns a table (SHOW,
//	                     DESCRIBE, EXPLAIN); print the table or the error
//	produce topic=T      one record a line: [@<ms>] [h:<name>=<value> ...]
//	                     <key|_> <value|_> (_ is null; h: adds a header;
//	                     a key int:<n> is n as a KAFKA-format INT; a
//	                     key or value hex:<digits> is those bytes)
//	flush                wait until every persistent query caught up
//	subscribe limit=N    run a push query and print its first N rows
//	  [sorted]           (sorted: in text order, for sources with several
//	                     partitions); a delete of a table's key (a
//	                     tombstone) prints <TOMBSTONE> for the columns it
//	                     has no value for, as ksqlDB's CLI does. The push
//	                     query ends at the first line ending with ';'; the
//	                     lines after it are statements run once it has
//	                     started (rows that reach a query reading from
//	                     latest), whose results are not printed
//	consume topic=T      print every record now in topic T (its headers
//	                     as produce takes them), by partition
//	                     (p* for a record without a key: its partition is
//	                     the producer's choice)
//	  [sorted]           and offset (sorted: by partition and text, for
//	                     outputs fed by several input partitions)
//	needs-transactions   skip the rest of the file with a Kafka client that
//	                     runs no transactions (sarama)
//	restart              close the engine (and the server in front of it)
//	                     and open it again on the same data directory and
//	                     broker
//	  [wipe-state]       (wipe-state: delete the local state store while
//	                     the engine is closed, so that it restores every
//	                     state table from its changelog topic)
//	register subject=S   register the schema of the input (a line, or
//	  [type=T]           several) under subject S in the schema registry,
//	                     as another client would; T is AVRO (the default),
//	                     PROTOBUF or JSON; print the id it was given
//	  [ref=N:S:V ...]    (ref: the schema imports N, the schema of
//	                     version V of subject S)
//	schema subject=S     print the id, version, type and text (without
//	                     blank lines) of the latest schema registered
//	                     under subject S (the schema a sink registered,
//	                     as another client would read it)
//	explain <QUERY_ID>   print the processing topology EXPLAIN shows for
//	                     the query (its physical plan: stages, operators,
//	                     state stores, topics), without the figures that
//	                     vary between runs
//
// Every persistent query a file creates (a statement answering "Created
// query with ID X" or "Replaced query with ID X") must be explained after
// it: a file that leaves one unexplained fails at its end, so that each
// plan's topology has a golden.
//
// The corpus runs once per Kafka client adapter (franz, sarama): both must
// give the same results. It runs a third time (grpc) with statement, query
// and subscribe going through the gRPC server and a client instead of
// straight to the engine (statement and query through Execute, subscribe
// through PushQuery): the server must not change a byte of the output.
// produce, consume, flush and restart act on the broker and the engine
// directly in every variant: they stand for the world around Sluice
// (other producers and consumers, time passing, a process restart), which
// the API does not offer; restart also restarts the server.
func TestSQL(t *testing.T) {
	for _, variant := range []struct {
		name      string
		newClient func(kafka.Config) (kafka.Client, error)
		newExec   newExecutor
	}{
		{"franz", kafka.NewFranz, inProcess},
		{"sarama", kafka.NewSarama, inProcess},
		{"grpc", kafka.NewFranz, overGRPC},
	} {
		t.Run(variant.name, func(t *testing.T) {
			datadriven.Walk(t, filepath.Join("..", "testdata", "sql"), func(t *testing.T, path string) {
				h := newHarness(t, variant.newClient, variant.newExec)
				defer h.close()
				datadriven.RunTest(t, path, h.run)
				if len(h.unexplained) > 0 {
					t.Errorf("%s: persistent queries without an explain directive after the statement creating them: %s",
						path, strings.Join(h.unexplained, ", "))
				}
			})
		})
	}
}

// fixedClock is the engine's wall clock in the corpus, so that INSERT
// VALUES rows have a known ROWTIME.
func fixedClock() time.Time { return time.UnixMilli(1_700_000_000_000) }

// harness is one corpus file's world: a broker, a client, an engine, the
// executor that runs statements on it, and a session.
type harness struct {
	t       *testing.T
	ctx     context.Context
	broker  *kafka.Playground
	client  kafka.Client
	reg     *registry.Memory
	dataDir string
	eng     *engine.Engine
	newExec newExecutor
	exec    executor
	sess    *engine.Session
	// configure, when set, changes the engine's configuration at each
	// open (tests outside the corpus).
	configure func(*engine.Config)
	// unexplained are the persistent queries created or replaced and
	// not explained since, in order.
	unexplained []string
}

// noteQueries notes the persistent queries a statement's message says it
// created or replaced, which an explain directive must show.
func (h *harness) noteQueries(msg string) {
	for _, prefix := range []string{"Created query with ID ", "Replaced query with ID "} {
		if id, ok := strings.CutPrefix(msg, prefix); ok {
			h.explained(id)
			h.unexplained = append(h.unexplained, id)
		}
	}
}

// explained notes that query id was explained.
func (h *harness) explained(id string) {
	h.unexplained = slices.DeleteFunc(h.unexplained, func(s string) bool { return s == id })
}

// explain is the explain directive: the processing topology of EXPLAIN
// id, the part of its answer below the "Processing topology" heading.
func (h *harness) explain(ctx context.Context, t *testing.T, d *datadriven.TestData) string {
	if len(d.CmdArgs) != 1 || d.CmdArgs[0].Vals != nil {
		t.Fatalf("explain takes one query id, got %v", d.CmdArgs)
	}
	id := d.CmdArgs[0].Key
	h.explained(strings.ToUpper(id))
	res, err := h.exec.Execute(ctx, h.sess, "EXPLAIN "+id+";")
	if err != nil {
		return "error: " + firstLine(err) + "\n"
	}
	if len(res) != 1 || res[0].table == nil {
		t.Fatalf("EXPLAIN %s answered %d results", id, len(res))
	}
	const heading = "Processing topology\n"
	_, topo, ok := strings.Cut(res[0].table.Footer, heading)
	if !ok {
		t.Fatalf("EXPLAIN %s has no processing topology:\n%s", id, res[0].table.Text())
	}
	return topo
}

func newHarness(t *testing.T, newClient func(kafka.Config) (kafka.Client, error), newExec newExecutor) *harness {
	ctx := context.Background()
	dir := t.TempDir()
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	client, err := newClient(kafka.Config{Brokers: []string{broker.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ctx: ctx, broker: broker, client: client, dataDir: filepath.Join(dir, "state"), newExec: newExec, sess: engine.NewSession()}
	h.open()
	return h
}

func (h *harness) open() {
	if err := h.openErr(); err != nil {
		h.t.Fatal(err)
	}
}

// openErr opens the engine, returning the error of a failed open.
func (h *harness) openErr() error {
	if h.reg == nil { // kept across restarts, as a registry server would be
		h.reg = registry.NewMemory()
	}
	cfg := engine.Config{Kafka: h.client, DataDir: h.dataDir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: fixedClock, Registry: h.reg}
	if h.configure != nil {
		h.configure(&cfg)
	}
	eng, err := engine.Open(h.ctx, cfg)
	if err != nil {
		return err
	}
	h.eng = eng
	h.exec = h.newExec(h.t, eng)
	return nil
}

// shut closes the executor and the engine.
func (h *harness) shut() error {
	h.exec.Close()
	err := h.eng.Close()
	h.exec, h.eng = nil, nil
	return err
}

func (h *harness) close() {
	if h.eng != nil {
		_ = h.shut()
	}
	h.client.Close()
	h.broker.Close()
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	switch d.Cmd {
	case "statement":
		res, err := h.exec.Execute(ctx, h.sess, d.Input)
		var b strings.Builder
		for _, r := range res {
			writeResult(&b, r)
			h.noteQueries(r.message)
		}
		if err != nil {
			fmt.Fprintf(&b, "error: %s\n", firstLine(err))
		}
		return b.String()
	case "explain":
		return h.explain(ctx, t, d)
	case "register":
		var subject string
		d.ScanArgs(t, "subject", &subject)
		typ := registry.Avro
		if d.HasArg("type") {
			d.ScanArgs(t, "type", &typ)
		}
		s := registry.Schema{Type: strings.ToUpper(typ), Schema: strings.TrimSpace(d.Input)}
		for _, arg := range d.CmdArgs {
			if arg.Key != "ref" {
				continue
			}
			for _, v := range arg.Vals {
				s.References = append(s.References, parseReference(t, v))
			}
		}
		id, err := h.reg.Register(ctx, subject, s)
		if err != nil {
			return "error: " + firstLine(err) + "\n"
		}
		return fmt.Sprintf("id %d\n", id)
	case "schema":
		var subject string
		d.ScanArgs(t, "subject", &subject)
		s, err := h.reg.Latest(ctx, subject)
		if err != nil {
			return "error: " + firstLine(err) + "\n"
		}
		typ := s.Type
		if typ == "" {
			typ = registry.Avro
		}
		// Without its blank lines, which would end the directive's output.
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(s.Schema), "\n") {
			if strings.TrimSpace(l) != "" {
				lines = append(lines, l)
			}
		}
		return fmt.Sprintf("id %d version %d %s\n%s\n", s.ID, s.Version, typ, strings.Join(lines, "\n"))
	case "query":
		res, err := h.exec.Execute(ctx, h.sess, d.Input)
		if err != nil {
			return "error: " + firstLine(err) + "\n"
		}
		if len(res) != 1 || res[0].table == nil {
			t.Fatalf("query needs one statement returning a table, got %d results", len(res))
		}
		var b strings.Builder
		writeResult(&b, res[0])
		return b.String()
	case "produce":
		var topic string
		d.ScanArgs(t, "topic", &topic)
		var recs []*kafka.Record
		for _, line := range strings.Split(d.Input, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			recs = append(recs, parseRecord(t, topic, line))
		}
		p, err := h.client.NewProducer(kafka.ProducerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.Produce(ctx, recs); err != nil {
			t.Fatal(err)
		}
		return ""
	case "flush":
		if err := h.eng.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return ""
	case "subscribe":
		var limit int
		d.ScanArgs(t, "limit", &limit)
		var res []result
		var err error
		push, after := splitPush(d.Input)
		if pq, ok := h.exec.(pushQuerier); ok {
			res, err = pq.PushQuery(ctx, h.sess, push)
		} else {
			res, err = h.exec.Execute(ctx, h.sess, push)
		}
		if err != nil {
			return "error: " + firstLine(err) + "\n"
		}
		if len(res) != 1 || res[0].stream == nil {
			t.Fatalf("subscribe needs one push query, got %d results", len(res))
		}
		st := res[0].stream
		defer st.Close()
		if strings.TrimSpace(after) != "" {
			if _, err := h.exec.Execute(ctx, h.sess, after); err != nil {
				t.Fatalf("statements after the push query: %v", err)
			}
		}
		var rows []string
		end := ""
		for i := 0; i < limit; i++ {
			row, rowTypes, tombstone, err := st.NextRow(ctx)
			if errors.Is(err, io.EOF) {
				end = "(end)\n"
				break
			}
			if err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			line := formatRow(row, rowTypes)
			if tombstone {
				line = formatTombstone(row, rowTypes)
			}
			rows = append(rows, line+"\n")
		}
		if d.HasArg("sorted") {
			// Rows from several partitions arrive in no fixed order.
			sort.Strings(rows)
		}
		return strings.Join(st.Columns(), " | ") + "\n" + strings.Join(rows, "") + end
	case "consume":
		var topic string
		d.ScanArgs(t, "topic", &topic)
		return h.consume(ctx, topic, d.HasArg("sorted"))
	case "needs-transactions":
		p, err := h.client.NewProducer(kafka.ProducerOptions{TransactionalID: "sql-test-check"})
		if errors.Is(err, kafka.ErrNoTransactions) {
			t.Skip("this Kafka client runs no transactions")
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		return ""
	case "restart":
		if err := h.shut(); err != nil {
			t.Fatal(err)
		}
		if d.HasArg("wipe-state") {
			if err := os.RemoveAll(filepath.Join(h.dataDir, "state-store")); err != nil {
				t.Fatal(err)
			}
		}
		h.open()
		return ""
	}
	t.Fatalf("unknown directive %q", d.Cmd)
	return ""
}

// splitPush splits a subscribe directive's input into its push query, up
// to the first line ending with ';', and the statements after it.
func splitPush(input string) (push, after string) {
	lines := strings.SplitAfter(input, "\n")
	for i, l := range lines {
		if strings.HasSuffix(strings.TrimSpace(l), ";") {
			return strings.Join(lines[:i+1], ""), strings.Join(lines[i+1:], "")
		}
	}
	return input, ""
}

func writeResult(b *strings.Builder, r result) {
	switch {
	case r.table != nil:
		b.WriteString(r.table.Text())
	case r.stream != nil:
		b.WriteString("push query " + r.stream.ID() + "\n")
		r.stream.Close()
	case r.message != "":
		b.WriteString(r.message + "\n")
	}
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// formatRow renders a push query row; ts are the values' types.
func formatRow(row []any, ts []*types.Type) string {
	parts := make([]string, len(row))
	for i, v := range row {
		parts[i] = types.FormatValue(v, ts[i])
	}
	return strings.Join(parts, " | ")
}

// formatTombstone prints a push query's delete as ksqlDB's CLI does: the
// columns it has no value for read <TOMBSTONE>.
func formatTombstone(row []any, ts []*types.Type) string {
	parts := make([]string, len(row))
	for i, v := range row {
		parts[i] = "<TOMBSTONE>"
		if v != nil {
			parts[i] = types.FormatValue(v, ts[i])
		}
	}
	return strings.Join(parts, " | ")
}

// parseRecord reads "[@ts] key value" where key or value may be _ (null).
func parseRecord(t *testing.T, topic, line string) *kafka.Record {
	rec := &kafka.Record{Topic: topic, Partition: -1}
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "@") {
		sp := strings.IndexByte(line, ' ')
		ms, err := strconv.ParseInt(line[1:sp], 10, 64)
		if err != nil {
			t.Fatalf("bad timestamp in %q", line)
		}
		rec.Timestamp = time.UnixMilli(ms)
		line = strings.TrimSpace(line[sp:])
	} else {
		rec.Timestamp = time.UnixMilli(0)
	}
	for strings.HasPrefix(line, "h:") {
		h, rest, _ := strings.Cut(line, " ")
		k, v, _ := strings.Cut(h[2:], "=")
		rec.Headers = append(rec.Headers, kafka.Header{Key: k, Value: []byte(v)})
		line = strings.TrimSpace(rest)
	}
	key, value, ok := strings.Cut(line, " ")
	if !ok {
		t.Fatalf("record needs a key and a value: %q", line)
	}
	if n, isInt := strings.CutPrefix(key, "int:"); isInt {
		v, err := strconv.ParseInt(n, 10, 32)
		if err != nil {
			t.Fatalf("record key %q: %v", key, err)
		}
		rec.Key = binary.BigEndian.AppendUint32(nil, uint32(v))
	} else if key != "_" {
		rec.Key = rawBytes(t, key)
	}
	if value = strings.TrimSpace(value); value != "_" {
		rec.Value = rawBytes(t, value)
	}
	return rec
}

// rawBytes is a produced key or value: hex:<digits> is those bytes (a
// record another client wrote in a binary format), anything else its
// text.
func rawBytes(t *testing.T, s string) []byte {
	h, ok := strings.CutPrefix(s, "hex:")
	if !ok {
		return []byte(s)
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatalf("record %q: %v", s, err)
	}
	return b
}

// consume prints every record now in topic, partition by partition: the
// partition, timestamp, key and value.
func (h *harness) consume(ctx context.Context, topic string, sorted bool) string {
	bounds, err := h.client.ListOffsets(ctx, topic)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	// Read committed, with the transaction markers counted as offsets
	// read (an exactly-once query writes in transactions).
	c, err := h.client.NewConsumer(kafka.ConsumerOptions{ReadCommitted: true, KeepControl: true})
	if err != nil {
		h.t.Fatal(err)
	}
	defer c.Close()
	assign := map[int32]int64{}
	left := 0
	for p, b := range bounds {
		if b.End > b.Start {
			assign[int32(p)] = b.Start
			left += int(b.End - b.Start)
		}
	}
	if left == 0 {
		return "(empty)\n"
	}
	c.Assign(map[string]map[int32]int64{topic: assign})
	var recs []*kafka.Record
	for left > 0 {
		got, err := c.Poll(ctx)
		if err != nil {
			h.t.Fatalf("consume %s: %v", topic, err)
		}
		for _, r := range got {
			left--
			if !r.Control {
				recs = append(recs, r)
			}
		}
	}
	if len(recs) == 0 {
		return "(empty)\n"
	}
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].Partition != recs[j].Partition {
			return recs[i].Partition < recs[j].Partition
		}
		return recs[i].Offset < recs[j].Offset
	})
	var lines []string
	for _, r := range recs {
		key, value := "_", "_"
		if r.Key != nil {
			key = fmt.Sprintf("%q", r.Key)
		}
		if r.Value != nil {
			value = printable(r.Value)
		}
		// A record without a key lands on any partition.
		part := fmt.Sprintf("p%d", r.Partition)
		if r.Key == nil {
			part = "p*"
		}
		// Headers print as produce takes them.
		var hdrs strings.Builder
		for _, hd := range r.Headers {
			fmt.Fprintf(&hdrs, "h:%s=%s ", hd.Key, printable(hd.Value))
		}
		lines = append(lines, fmt.Sprintf("%s @%d %s%s %s\n", part, r.Timestamp.UnixMilli(), hdrs.String(), key, value))
	}
	if sorted {
		sort.Strings(lines)
	}
	return strings.Join(lines, "")
}

// parseReference reads a register directive's ref=NAME:SUBJECT:VERSION.
func parseReference(t *testing.T, v string) registry.Reference {
	parts := strings.Split(v, ":")
	if len(parts) != 3 {
		t.Fatalf("ref takes NAME:SUBJECT:VERSION, got %q", v)
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil {
		t.Fatalf("ref %q: version: %v", v, err)
	}
	return registry.Reference{Name: parts[0], Subject: parts[1], Version: n}
}

// printable is a consumed value as text, quoted when it is not readable
// text (a binary format's bytes).
func printable(b []byte) string {
	if !utf8.Valid(b) || slices.ContainsFunc([]rune(string(b)), func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Sprintf("%q", b)
	}
	return string(b)
}
