package engine_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/registry"
)

// The replay fixture guards stored plans: for every file of the SQL
// corpus, the command log its run left (every CREATE, CSAS, CTAS and
// INSERT INTO as the server then wrote it), the records of the topics its
// queries read, and what those queries wrote when a fresh server replayed
// that log over those records. TestReplayFixture replays each log on the
// current code and compares every running query's output, record for
// record, with what the server that wrote the fixture produced.
//
// The fixture is written by the same test with -update-replay-fixture, on
// the commit whose plans it keeps:
//
//	go test ./engine -run TestReplayFixture -update-replay-fixture
//
// Writing it replays each log replayRuns times, every other time with the
// partitions of each input produced in reverse order, and each output is kept
// in the strictest form all those replays agree on (see replayOutput's
// Mode), so that the fixture never asserts what the old server did not do
// reliably either.
//
// The fixture's command logs are an old server's, with plans of before
// plan versions (internal/topology's TestUpgradeStoredPlans reads them as
// such): a deliberate change of what a replay writes edits the expected
// records of a file, not its commands.
var updateReplayFixture = flag.Bool("update-replay-fixture", false, "rewrite testdata/replay from the SQL corpus")

// rewriteReplay names fixture files (comma-separated, without .json)
// whose expected outputs TestReplayFixture records again from their own
// logs, as a deliberate change of what a replay writes needs:
//
//	go test ./engine -run TestReplayFixture -rewrite-replay-outputs pull_windows
var rewriteReplay = flag.String("rewrite-replay-outputs", "", "record again the outputs of these testdata/replay files (comma-separated names), keeping their logs")

const replayFixtureDir = "../testdata/replay"

// replayRuns is how many times writing the fixture replays each log.
const replayRuns = 5

// replayFile is one corpus file's fixture.
type replayFile struct {
	// Corpus is the corpus file the log comes from.
	Corpus string `json:"corpus"`
	// Commands are the command log's record values, in log order, as the
	// server wrote them.
	Commands []string `json:"commands"`
	// Schemas are the registry's schemas, in id order.
	Schemas []registry.Schema `json:"schemas,omitempty"`
	// Topics are every topic of the run but the command log, with the
	// records of those the queries read (their outputs are left empty).
	Topics []replayTopic `json:"topics"`
	// Cases are one per persistent query of the log: the log up to and
	// including the command that created it, replayed alone.
	Cases []replayCase `json:"cases"`
}

// replayCase is one persistent query's replay: the first Upto commands of
// the log, ending with the query's own.
type replayCase struct {
	Query string `json:"query"`
	Upto  int    `json:"upto"`
	// Outputs are what each topic written by a query running after those
	// commands held once the replay caught up.
	Outputs []replayOutput `json:"outputs"`
}

type replayTopic struct {
	Name       string         `json:"name"`
	Partitions int32          `json:"partitions"`
	Records    []replayRecord `json:"records,omitempty"`
}

type replayRecord struct {
	Partition int32          `json:"p"`
	Timestamp int64          `json:"ts"`
	Key       *replayBytes   `json:"k"`
	Value     *replayBytes   `json:"v"`
	Headers   []replayHeader `json:"h,omitempty"`
}

type replayHeader struct {
	Key   string       `json:"k"`
	Value *replayBytes `json:"v"`
}

// replayBytes are a key, value or header: JSON text when they are UTF-8,
// else {"base64": ...}.
type replayBytes []byte

func (b replayBytes) MarshalJSON() ([]byte, error) {
	if utf8.Valid(b) {
		return json.Marshal(string(b))
	}
	return json.Marshal(map[string][]byte{"base64": b})
}

func (b *replayBytes) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*b = replayBytes(s)
		return nil
	}
	var m map[string][]byte
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*b = m["base64"]
	return nil
}

type replayOutput struct {
	Topic   string   `json:"topic"`
	Queries []string `json:"queries"`
	// Mode is "ordered" (compared record for record, in offset order
	// within each partition and key; see texts), "unordered" (compared as a multiset), "final" (only the
	// last record of each key is compared: a table fed by several
	// partitions, whose changes interleave in any order but converge) or
	// "unstable" (not compared; Reason says why).
	Mode    string         `json:"mode"`
	Reason  string         `json:"reason,omitempty"`
	Records []replayRecord `json:"records"`
}

func strp(b []byte) *replayBytes {
	if b == nil {
		return nil
	}
	r := replayBytes(b)
	return &r
}

func bytesOf(b *replayBytes) []byte {
	if b == nil {
		return nil
	}
	if *b == nil {
		return []byte{}
	}
	return *b
}

// toReplayRecord keeps a record as the fixture does: a record without a
// key has partition -1, since its partition is the producer's choice.
func toReplayRecord(r *kafka.Record) replayRecord {
	p := r.Partition
	if r.Key == nil {
		p = -1
	}
	out := replayRecord{Partition: p, Timestamp: r.Timestamp.UnixMilli(), Key: strp(r.Key), Value: strp(r.Value)}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, replayHeader{Key: h.Key, Value: strp(h.Value)})
	}
	return out
}

func (r replayRecord) text() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// logSinks reads a command log and returns the topics its queries write:
// for every query still running at its end (live), and for every query it
// created (all), the topic mapped to the queries writing it.
func logSinks(commands []string) (live, all map[string][]string) {
	topics := map[string]string{}  // source name -> topic
	queries := map[string]string{} // query id -> sink topic
	all = map[string][]string{}
	for _, v := range commands {
		c, err := catalog.DecodeCommand([]byte(v))
		if err != nil {
			continue
		}
		switch c.Kind {
		case catalog.CreateSource:
			if c.Source != nil {
				topics[c.Source.Name] = c.Source.Topic
			}
		case catalog.CreateQuery:
			if c.Source != nil {
				topics[c.Source.Name] = c.Source.Topic
			}
			// A source table's query materializes its own topic: it
			// writes none.
			if c.Query != nil && (c.Query.Plan == nil || c.Query.Plan.Source == nil || c.Query.Plan.Source.Name != c.Query.Sink) {
				if topic, ok := topics[c.Query.Sink]; ok {
					queries[c.Query.ID] = topic
					all[topic] = append(all[topic], c.Query.ID)
				}
			}
		case catalog.TerminateQuery:
			delete(queries, c.QueryID)
		}
	}
	live = map[string][]string{}
	for id, topic := range queries {
		live[topic] = append(live[topic], id)
	}
	for _, ids := range live {
		sort.Strings(ids)
	}
	return live, all
}

// captureCorpusFile runs one corpus file and returns its fixture without
// cases. The topics are read after every directive, so that one dropped
// before the end keeps the records it last held.
func captureCorpusFile(t *testing.T, path string) *replayFile {
	h := newHarness(t, kafka.NewFranz, inProcess)
	defer h.close()
	const log = "_sluice-sluice-command-log"
	seen := map[string]replayTopic{}
	snapshot := func() {
		ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
		defer cancel()
		topics, err := h.client.ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range topics {
			if ti.Name == log {
				continue
			}
			rt := replayTopic{Name: ti.Name, Partitions: ti.Partitions}
			// Internal topics (changelogs, repartitions) and the
			// processing log start empty: the replay fills them.
			if !strings.HasPrefix(ti.Name, "_") && ti.Name != "sluice_processing_log" {
				recs, err := kafka.ReadAll(ctx, h.client, ti.Name)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					rt.Records = append(rt.Records, toReplayRecord(r))
				}
			}
			seen[ti.Name] = rt
		}
	}
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		out := h.run(t, d)
		snapshot()
		return out
	})
	ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
	defer cancel()
	if err := h.eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	snapshot()
	f := &replayFile{Corpus: filepath.Base(path)}
	recs, err := kafka.ReadAll(ctx, h.client, log)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		f.Commands = append(f.Commands, string(r.Value))
	}
	subjects, err := h.reg.SubjectsDeleted(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, subject := range subjects {
		versions, err := h.reg.Versions(ctx, subject, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range versions {
			s, err := h.reg.VersionDeleted(ctx, subject, v, true)
			if err != nil {
				t.Fatal(err)
			}
			s.Subject, s.Version = subject, v
			f.Schemas = append(f.Schemas, s)
		}
	}
	sort.SliceStable(f.Schemas, func(i, j int) bool {
		if f.Schemas[i].ID != f.Schemas[j].ID {
			return f.Schemas[i].ID < f.Schemas[j].ID
		}
		return f.Schemas[i].Subject < f.Schemas[j].Subject
	})
	var names []string
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f.Topics = append(f.Topics, seen[name])
	}
	return f
}

// replay replays the first upto commands of a fixture's log over its
// topics on a fresh broker and engine (the topics the replayed queries
// write start empty) and returns what every topic written by a running
// query holds once the queries caught up.
//
// With reversed set, each input topic's partitions are produced last
// first, so that the queries meet them in another interleaving.
func replay(t *testing.T, f *replayFile, upto int, reversed bool) map[string][]replayRecord {
	commands := f.Commands[:upto]
	live, written := logSinks(commands)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{broker.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	reg := registry.NewMemory()
	for _, s := range f.Schemas {
		got, err := reg.RegisterSchema(ctx, s.Subject, registry.Schema{Type: s.Type, Schema: s.Schema, References: s.References})
		if err != nil {
			t.Fatalf("registry: %s version %d: %v", s.Subject, s.Version, err)
		}
		if got.ID != s.ID {
			t.Fatalf("registry: %s version %d got id %d, want %d", s.Subject, s.Version, got.ID, s.ID)
		}
	}
	prod, err := client.NewProducer(kafka.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	const log = "_sluice-sluice-command-log"
	if err := client.CreateTopic(ctx, kafka.TopicSpec{Name: log, Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	for _, topic := range f.Topics {
		if err := client.CreateTopic(ctx, kafka.TopicSpec{Name: topic.Name, Partitions: topic.Partitions}); err != nil {
			t.Fatal(err)
		}
		if written[topic.Name] != nil {
			continue
		}
		var recs []*kafka.Record
		for _, r := range topic.Records {
			p := r.Partition
			if p < 0 {
				p = 0
			}
			kr := &kafka.Record{Topic: topic.Name, Partition: p, Key: bytesOf(r.Key), Value: bytesOf(r.Value), Timestamp: time.UnixMilli(r.Timestamp)}
			for _, h := range r.Headers {
				kr.Headers = append(kr.Headers, kafka.Header{Key: h.Key, Value: bytesOf(h.Value)})
			}
			recs = append(recs, kr)
		}
		if reversed {
			sort.SliceStable(recs, func(i, j int) bool { return recs[i].Partition > recs[j].Partition })
		}
		if len(recs) > 0 {
			if err := prod.Produce(ctx, recs); err != nil {
				t.Fatal(err)
			}
		}
	}
	var cmds []*kafka.Record
	for _, v := range commands {
		cmds = append(cmds, &kafka.Record{Topic: log, Partition: 0, Value: []byte(v)})
	}
	if err := prod.Produce(ctx, cmds); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(ctx, engine.Config{Kafka: client, DataDir: filepath.Join(dir, "state"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: fixedClock, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	out := map[string][]replayRecord{}
	for topic := range live {
		recs, err := kafka.ReadAll(ctx, client, topic)
		if err != nil {
			t.Fatalf("read %s: %v", topic, err)
		}
		sort.SliceStable(recs, func(i, j int) bool {
			if recs[i].Partition != recs[j].Partition {
				return recs[i].Partition < recs[j].Partition
			}
			return recs[i].Offset < recs[j].Offset
		})
		got := []replayRecord{}
		for _, r := range recs {
			got = append(got, toReplayRecord(r))
		}
		out[topic] = got
	}
	return out
}

// finalTexts returns the last record of each partition and key, sorted,
// without its timestamp.
func finalTexts(rs []replayRecord) []string {
	last := map[string]string{}
	for _, r := range rs {
		k := ""
		if r.Key != nil {
			k = string(*r.Key)
		}
		r.Timestamp = 0
		last[fmt.Sprintf("%d/%q", r.Partition, k)] = r.text()
	}
	out := make([]string, 0, len(last))
	for _, t := range last {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func sortedTexts(rs []replayRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.text()
	}
	sort.Strings(out)
	return out
}

func TestReplayFixture(t *testing.T) {
	if *updateReplayFixture {
		writeReplayFixture(t)
		return
	}
	if *rewriteReplay != "" {
		rewriteReplayOutputs(t, strings.Split(*rewriteReplay, ","))
		return
	}
	paths, err := filepath.Glob(filepath.Join(replayFixtureDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no replay fixture in " + replayFixtureDir)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			f := readReplayFile(t, path)
			for _, c := range f.Cases {
				t.Run(c.Query, func(t *testing.T) {
					got := replay(t, f, c.Upto, false)
					for _, o := range c.Outputs {
						g := got[o.Topic]
						switch o.Mode {
						case "ordered":
							if !reflect.DeepEqual(texts(g), texts(o.Records)) {
								t.Errorf("%s (%s): replay wrote\n%s\nwant\n%s", o.Topic, strings.Join(o.Queries, ", "), strings.Join(texts(g), "\n"), strings.Join(texts(o.Records), "\n"))
							}
						case "unordered":
							if !reflect.DeepEqual(sortedTexts(g), sortedTexts(o.Records)) {
								t.Errorf("%s (%s): replay wrote, in any order,\n%s\nwant\n%s", o.Topic, strings.Join(o.Queries, ", "), strings.Join(sortedTexts(g), "\n"), strings.Join(sortedTexts(o.Records), "\n"))
							}
						case "final":
							if !reflect.DeepEqual(finalTexts(g), finalTexts(o.Records)) {
								t.Errorf("%s (%s): replay's last record per key\n%s\nwant\n%s", o.Topic, strings.Join(o.Queries, ", "), strings.Join(finalTexts(g), "\n"), strings.Join(finalTexts(o.Records), "\n"))
							}
						}
					}
				})
			}
		})
	}
}

// texts returns the records of each partition and key in offset order,
// the keys in partition and key order, then the records without a key
// sorted. Kafka orders the records of one key only: those of different
// keys (from different input partitions, or different queries) interleave
// in any order, and the partition of a record without a key, and so its
// order among others, is the producer's choice.
func texts(rs []replayRecord) []string {
	var keyed []replayRecord
	var keyless []string
	for _, r := range rs {
		if r.Key == nil {
			keyless = append(keyless, r.text())
			continue
		}
		keyed = append(keyed, r)
	}
	sort.SliceStable(keyed, func(i, j int) bool {
		if keyed[i].Partition != keyed[j].Partition {
			return keyed[i].Partition < keyed[j].Partition
		}
		return string(*keyed[i].Key) < string(*keyed[j].Key)
	})
	out := make([]string, 0, len(rs))
	for _, r := range keyed {
		out = append(out, r.text())
	}
	sort.Strings(keyless)
	return append(out, keyless...)
}

// recordCase replays the first upto commands of f's log replayRuns times
// and keeps each output in the strictest form all those replays agree on
// (see replayOutput's Mode).
func recordCase(t *testing.T, f *replayFile, query string, upto int) replayCase {
	live, _ := logSinks(f.Commands[:upto])
	var runs []map[string][]replayRecord
	for i := range replayRuns {
		runs = append(runs, replay(t, f, upto, i%2 == 1))
	}
	rc := replayCase{Query: query, Upto: upto}
	var names []string
	for topic := range live {
		names = append(names, topic)
	}
	sort.Strings(names)
	for _, topic := range names {
		o := replayOutput{Topic: topic, Queries: live[topic], Mode: "ordered", Records: runs[0][topic]}
		for _, r := range runs[1:] {
			if o.Mode == "ordered" && !reflect.DeepEqual(texts(r[topic]), texts(o.Records)) {
				o.Mode = "unordered"
			}
			if o.Mode == "unordered" && !reflect.DeepEqual(sortedTexts(r[topic]), sortedTexts(o.Records)) {
				o.Mode = "final"
			}
			if o.Mode == "final" && !reflect.DeepEqual(finalTexts(r[topic]), finalTexts(o.Records)) {
				counts := make([]string, len(runs))
				for i, r := range runs {
					counts[i] = fmt.Sprint(len(r[topic]))
				}
				o.Mode, o.Reason = "unstable", fmt.Sprintf("%d replays wrote %s records, and differently", len(runs), strings.Join(counts, ", "))
				t.Logf("%s %s unstable:\n%s\n---\n%s", query, topic, strings.Join(sortedTexts(runs[0][topic]), "\n"), strings.Join(sortedTexts(r[topic]), "\n"))
				o.Records = nil
				break
			}
		}
		rc.Outputs = append(rc.Outputs, o)
	}
	return rc
}

// readReplayFile reads one fixture file.
func readReplayFile(t *testing.T, path string) *replayFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f replayFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &f
}

// rewriteReplayOutputs records again the outputs of the named fixture
// files, keeping their command logs and input records: for a deliberate
// change of what a replay writes.
func rewriteReplayOutputs(t *testing.T, names []string) {
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(replayFixtureDir, name+".json")
			f := readReplayFile(t, path)
			for i, c := range f.Cases {
				f.Cases[i] = recordCase(t, f, c.Query, c.Upto)
			}
			out, err := json.MarshalIndent(f, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func writeReplayFixture(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "sql", "*.test"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(replayFixtureDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".test")
		t.Run(name, func(t *testing.T) {
			f := captureCorpusFile(t, path)
			for i, v := range f.Commands {
				c, err := catalog.DecodeCommand([]byte(v))
				if err != nil || c.Kind != catalog.CreateQuery || c.Query == nil {
					continue
				}
				upto := i + 1
				f.Cases = append(f.Cases, recordCase(t, f, c.Query.ID, upto))
			}
			if len(f.Cases) == 0 {
				return // the file creates no persistent query
			}
			b, err := json.MarshalIndent(f, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(replayFixtureDir, name+".json"), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}
