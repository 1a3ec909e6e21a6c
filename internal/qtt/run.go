package qtt

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser"
)

// Status is the outcome of a run.
type Status string

// The run outcomes.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Result is the outcome of one run.
type Result struct {
	ID     string `json:"id"`
	File   string `json:"file"`
	Index  int    `json:"index"`
	Status Status `json:"status"`
	// Reason is the skip reason, or a one-line summary of the failure.
	Reason string `json:"reason,omitempty"`
	// Detail is the full failure: the record diff or the whole error.
	Detail string `json:"detail,omitempty"`
	// Unaccepted are the case's properties ("name=value") the engine
	// refused to SET; the run goes on without them.
	Unaccepted []string `json:"unacceptedProperties,omitempty"`
	Millis     int64    `json:"ms"`
}

// Clock is the engine's fixed wall clock in every run: the ROWTIME of rows
// inserted with INSERT VALUES without one.
func Clock() time.Time { return time.UnixMilli(0) }

// DefaultTimeout bounds one run.
const DefaultTimeout = 60 * time.Second

// RunOne runs r through a fresh engine over a fresh in-memory broker and
// returns its outcome. timeout bounds the run (DefaultTimeout when zero);
// runs skipped for a reason in attempt run anyway, to measure a capability
// being built.
func RunOne(ctx context.Context, r Run, timeout time.Duration, attempt map[string]bool) Result {
	start := time.Now()
	res := Result{ID: r.ID, File: r.File, Index: r.Index}
	if reason := SkipReason(r); reason != "" && !attempt[reason] {
		res.Status, res.Reason = Skip, reason
		return res
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h := &harness{run: r}
	err := h.execute(ctx)
	h.close()
	res.Unaccepted = h.unaccepted
	res.Millis = time.Since(start).Milliseconds()
	if err == nil {
		res.Status = Pass
		return res
	}
	res.Status = Fail
	res.Detail = err.Error()
	var m *Mismatch
	if errors.As(err, &m) {
		res.Detail = m.Error() + "\n" + m.Diff
	}
	res.Reason = firstLine(err.Error())
	return res
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// exec runs sql in the run's session.
func (h *harness) exec(ctx context.Context, sess *engine.Session, sql string) error {
	results, err := h.eng.Execute(ctx, sess, sql)
	for _, r := range results {
		if r.QueryID != "" && strings.HasPrefix(r.Message, "Created query") {
			h.queries = append(h.queries, r.QueryID)
		}
	}
	return err
}

// harness is the world of one run.
type harness struct {
	run Run
	// partitions is the count of the topics the case does not give one
	// (1 when zero).
	partitions int32
	broker     *kafka.Playground
	reg        *fixedIDs
	client     kafka.Client
	eng        *engine.Engine
	dataDir    string
	producer   kafka.Producer
	unaccepted []string
	// created lists sources in the order the statements created them.
	created []string
	// queries lists the persistent queries in the order the statements
	// started them.
	queries []string
	seen    map[string]bool
	// bounds holds, per multi-partition output topic, its end offsets
	// after the statements and after each input.
	bounds map[string][][]int64
}

func (h *harness) close() {
	if h.producer != nil {
		h.producer.Close()
	}
	if h.eng != nil {
		_ = h.eng.Close()
	}
	if h.client != nil {
		h.client.Close()
	}
	if h.broker != nil {
		h.broker.Close()
	}
	if h.dataDir != "" {
		_ = os.RemoveAll(h.dataDir)
	}
}

// start brings up the run's world before its statements: a fresh
// broker with the case's topics, a schema registry with its schemas, and
// a data directory.
func (h *harness) start(ctx context.Context) error {
	var err error
	h.seen = map[string]bool{}
	if h.broker, err = kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0"}); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	if h.client, err = kafka.NewFranz(kafka.Config{Brokers: []string{h.broker.Addr()}}); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	if h.dataDir, err = os.MkdirTemp("", "qtt-"); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	if err := h.createTopics(ctx); err != nil {
		return err
	}
	return h.registerSchemas(ctx)
}

// openEngine opens the run's engine over its broker and registry, with
// the fixed clock.
func (h *harness) openEngine(ctx context.Context) error {
	var err error
	h.eng, err = engine.Open(ctx, engine.Config{
		Kafka: h.client, DataDir: h.dataDir, Now: Clock, Registry: h.reg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	return nil
}

func (h *harness) execute(ctx context.Context) error {
	if err := h.start(ctx); err != nil {
		return err
	}
	if err := h.openEngine(ctx); err != nil {
		return err
	}
	sess := engine.NewSession()
	if err := h.exec(ctx, sess, "SET 'auto.offset.reset'='earliest';"); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	names := make([]string, 0, len(h.run.Properties))
	for k := range h.run.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := h.run.Properties[k]
		set := fmt.Sprintf("SET '%s'='%s';", k, strings.ReplaceAll(v, "'", "''"))
		if err := h.exec(ctx, sess, set); err != nil {
			h.unaccepted = append(h.unaccepted, k+"="+v)
		}
	}
	want := h.run.Case.expected()
	line0 := 0
	for _, stmt := range h.run.Statements {
		err := h.exec(ctx, sess, stmt)
		h.noteSources()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("run timed out in statement %q: %w", stmt, err)
			}
			if want == nil {
				return fmt.Errorf("statement failed: %s\n%w", oneLine(stmt), err)
			}
			return matchException(want, err, stmt, line0, sess)
		}
		line0 += strings.Count(stmt, "\n") + 1
		if err := h.eng.Flush(ctx); err != nil {
			return fmt.Errorf("runner: flush: %w", err)
		}
	}
	if want != nil {
		return fmt.Errorf("expected an error containing %q, but every statement succeeded", want.Message)
	}
	if err := h.feed(ctx); err != nil {
		return err
	}
	if err := h.check(ctx); err != nil {
		return err
	}
	return h.checkPost(ctx)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// noteSources records the sources the last statement created.
func (h *harness) noteSources() {
	var fresh []string
	for _, s := range h.eng.Catalog().Sources() {
		if !h.seen[s.Name] {
			h.seen[s.Name] = true
			fresh = append(fresh, s.Name)
		}
	}
	h.created = append(h.created, fresh...)
}

var (
	createSourceRE = regexp.MustCompile(`(?is)^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:SOURCE\s+)?(?:STREAM|TABLE)\b`)
	asSelectRE     = regexp.MustCompile(`(?i)\bAS\s+SELECT\b`)
	kafkaTopicRE   = regexp.MustCompile(`(?i)\bKAFKA_TOPIC\s*=\s*'((?:[^']|'')*)'`)
	partitionsRE   = regexp.MustCompile(`(?i)\bPARTITIONS\s*=`)
)

// topicPartitions is the count of a topic the case gives none.
func (h *harness) topicPartitions() int32 { return max(h.partitions, 1) }

// createTopics creates the topics the case needs before its statements
// run, as ksqlDB's test harness does: each declared topic (with its
// partitions), each topic of a CREATE STREAM/TABLE without PARTITIONS, and
// each input topic the statements do not create themselves (those without
// a count of their own get topicPartitions).
func (h *harness) createTopics(ctx context.Context) error {
	parts := map[string]int32{}
	var order []string
	add := func(name string, n int32) {
		if name == "" {
			return
		}
		if _, ok := parts[name]; !ok {
			order = append(order, name)
			parts[name] = n
		}
	}
	engineMade := map[string]bool{}
	var plain []string
	for _, s := range h.run.Statements {
		code := stripLiterals(s)
		if !createSourceRE.MatchString(s) || asSelectRE.MatchString(code) {
			continue
		}
		m := kafkaTopicRE.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		topic := strings.ReplaceAll(m[1], "''", "'")
		if partitionsRE.MatchString(code) {
			engineMade[topic] = true
			continue
		}
		plain = append(plain, topic)
	}
	for _, t := range h.run.Case.Topics {
		n := t.Partitions
		if n <= 0 {
			if engineMade[t.Name] { // the statement's PARTITIONS decide
				continue
			}
			n = h.topicPartitions()
		}
		add(t.Name, n)
	}
	for _, topic := range plain {
		add(topic, h.topicPartitions())
	}
	for _, r := range h.run.Case.Inputs {
		if !engineMade[r.Topic] {
			add(r.Topic, h.topicPartitions())
		}
	}
	for _, name := range order {
		err := h.client.CreateTopic(ctx, kafka.TopicSpec{Name: name, Partitions: parts[name]})
		if err != nil && !errors.Is(err, kafka.ErrTopicExists) {
			return fmt.Errorf("runner: create topic %s: %w", name, err)
		}
	}
	return nil
}

// sourceOn returns the source over topic: for reading outputs, one written
// by a query when there is one; otherwise the first the statements created.
func (h *harness) sourceOn(topic string, output bool) *catalog.Source {
	cat := h.eng.Catalog()
	var first *catalog.Source
	for _, name := range h.created {
		s, ok := cat.Source(name)
		if !ok || s.Topic != topic {
			continue
		}
		if output && len(cat.Writers(name)) > 0 {
			return s
		}
		if first == nil {
			first = s
		}
	}
	return first
}

// outputTopics returns the topics named in outputs, in order.
func (h *harness) outputTopics() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range h.run.Case.Outputs {
		if !seen[r.Topic] {
			seen[r.Topic] = true
			out = append(out, r.Topic)
		}
	}
	return out
}

// feed produces the inputs one at a time, each processed fully (Flush)
// before the next.
func (h *harness) feed(ctx context.Context) error {
	h.bounds = map[string][][]int64{}
	for _, t := range h.outputTopics() {
		if info, err := h.client.DescribeTopic(ctx, t); err == nil && info.Partitions > 1 {
			h.bounds[t] = nil
		}
	}
	h.noteBounds(ctx)
	if len(h.run.Case.Inputs) == 0 {
		return nil
	}
	var err error
	if h.producer, err = h.client.NewProducer(kafka.ProducerOptions{ClientID: "qtt-inputs"}); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	serdes := map[string]*serde{}
	for i, in := range h.run.Case.Inputs {
		sd, ok := serdes[in.Topic]
		if !ok {
			sd = newSerde(h.sourceOn(in.Topic, false), h.reg)
			serdes[in.Topic] = sd
		}
		var ts int64
		if in.Timestamp != nil {
			ts = *in.Timestamp
		}
		rec := &kafka.Record{
			Topic: in.Topic, Partition: -1, Timestamp: time.UnixMilli(ts),
			Key: sd.encodeKey(in.Key, in.Window), Value: sd.encodeValue(in.Value),
		}
		for _, hd := range in.Headers {
			var v []byte
			if hd.Value != nil {
				if v, err = base64.StdEncoding.DecodeString(*hd.Value); err != nil {
					return fmt.Errorf("input %d: header %s is not base64: %w", i, hd.Key, err)
				}
			}
			rec.Headers = append(rec.Headers, kafka.Header{Key: hd.Key, Value: v})
		}
		if err := h.producer.Produce(ctx, []*kafka.Record{rec}); err != nil {
			return fmt.Errorf("runner: produce input %d to %s: %w", i, in.Topic, err)
		}
		if err := h.eng.Flush(ctx); err != nil {
			return fmt.Errorf("runner: flush after input %d: %w", i, err)
		}
		h.noteBounds(ctx)
	}
	return nil
}

// noteBounds records the end offsets of the multi-partition output topics,
// so that records read back can be ordered by the input that caused them.
func (h *harness) noteBounds(ctx context.Context) {
	for t := range h.bounds {
		offs, err := h.client.ListOffsets(ctx, t)
		if err != nil {
			continue
		}
		ends := make([]int64, len(offs))
		for i, o := range offs {
			ends[i] = o.End
		}
		h.bounds[t] = append(h.bounds[t], ends)
	}
}

// check reads back every output topic and compares it with the expected
// records.
func (h *harness) check(ctx context.Context) error {
	ex := Expectation{IgnoreZeroTimestamp: len(h.run.Case.Inputs) == 0}
	for _, topic := range h.outputTopics() {
		var want []Record
		for _, r := range h.run.Case.Outputs {
			if r.Topic == topic {
				want = append(want, r)
			}
		}
		recs, err := h.readTopic(ctx, topic)
		if err != nil {
			return err
		}
		sd := newSerde(h.sourceOn(topic, true), h.reg)
		got := make([]Actual, len(recs))
		for i, r := range recs {
			key, win := sd.decodeKey(r.Key)
			got[i] = Actual{
				Key: key, Window: win, Value: sd.decodeValue(r.Value),
				Timestamp: r.Timestamp.UnixMilli(), Partition: r.Partition, Offset: r.Offset,
			}
			for _, hd := range r.Headers {
				got[i].Headers = append(got[i].Headers, ActualHeader(hd))
			}
		}
		h.interleave(topic, want, got, sd.shape, ex)
		if m := CompareRecords(topic, want, got, sd.shape, ex); m != nil {
			return m
		}
	}
	return nil
}

// readTopic returns every record of topic, ordered by the input that
// caused it, then partition and offset (check then interleaves the
// partitions of one input's records). A missing topic has no records.
func (h *harness) readTopic(ctx context.Context, topic string) ([]*kafka.Record, error) {
	offs, err := h.client.ListOffsets(ctx, topic)
	if errors.Is(err, kafka.ErrUnknownTopic) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("runner: offsets of %s: %w", topic, err)
	}
	assign := map[int32]int64{}
	want := 0
	for p, o := range offs {
		if o.End > o.Start {
			assign[int32(p)] = o.Start
			want += int(o.End - o.Start)
		}
	}
	if want == 0 {
		return nil, nil
	}
	c, err := h.client.NewConsumer(kafka.ConsumerOptions{ClientID: "qtt-outputs"})
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	defer c.Close()
	c.Assign(map[string]map[int32]int64{topic: assign})
	var out []*kafka.Record
	for len(out) < want {
		recs, err := c.Poll(ctx)
		if err != nil {
			return nil, fmt.Errorf("runner: read %s (%d of %d records): %w", topic, len(out), want, err)
		}
		for _, r := range recs {
			if r.Offset < offs[r.Partition].End {
				out = append(out, r)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if sa, sb := h.step(topic, a.Partition, a.Offset), h.step(topic, b.Partition, b.Offset); sa != sb {
			return sa < sb
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Offset < b.Offset
	})
	return out, nil
}

// step returns the input after which the record at offset of partition
// of a multi-partition output topic was written: 0 for the statements,
// i+1 for the i-th input.
func (h *harness) step(topic string, partition int32, offset int64) int {
	bounds := h.bounds[topic]
	for i, ends := range bounds {
		if int(partition) < len(ends) && offset < ends[partition] {
			return i
		}
	}
	return len(bounds)
}

// interleave reorders the records one input caused in a multi-partition
// topic, which Kafka orders within each partition only, to follow the
// expected order where one of the interleavings allows it: at each place,
// of the next records of each partition the one that matches the
// expected record there, or else the first. Each partition keeps its
// order.
func (h *harness) interleave(topic string, want []Record, got []Actual, shape Shape, ex Expectation) {
	if _, ok := h.bounds[topic]; !ok {
		return
	}
	for lo := 0; lo < len(got); {
		hi := lo + 1
		st := h.step(topic, got[lo].Partition, got[lo].Offset)
		for hi < len(got) && h.step(topic, got[hi].Partition, got[hi].Offset) == st {
			hi++
		}
		for i := lo; i < hi && i < len(want); i++ {
			pick := i
			seen := map[int32]bool{}
			for j := i; j < hi; j++ {
				p := got[j].Partition
				if seen[p] {
					continue
				}
				seen[p] = true
				if compareOne(want[i], got[j], shape, ex) == nil {
					pick = j
					break
				}
			}
			// Move the pick to i; the records it passes keep their order.
			a := got[pick]
			copy(got[i+1:pick+1], got[i:pick])
			got[i] = a
		}
		lo = hi
	}
}

// syntaxMessageRE matches the messages ksqlDB gives for errors of its
// grammar.
var syntaxMessageRE = regexp.MustCompile(`(?i)syntax error|mismatched input|extraneous input|no viable alternative|missing '.*' at`)

// expectedPosRE finds the position in an expected message. ksqlDB's AST
// builder ("Failed to prepare statement: line L:C") reports a column one
// past the token; the grammar's "line L:C" is exact.
var expectedPosRE = regexp.MustCompile(`(Failed to prepare statement: )?line (\d+):(\d+)`)

// matchException reports (as an error) whether err, from statement stmt
// whose first line is line0+1 of the case's statements joined by newlines,
// is the expected failure: its message contains the expected one, or both
// are syntax errors and the position matches where the expected message
// gives one.
func matchException(want *Exception, err error, stmt string, line0 int, sess *engine.Session) error {
	msg := err.Error()
	if strings.Contains(msg, want.Message) || matchWrapped(want.Message, msg, line0) {
		return nil
	}
	if !strings.HasSuffix(want.Type, "ParseFailedException") && !syntaxMessageRE.MatchString(want.Message) {
		return fmt.Errorf("error differs: expected a message containing %q, got %q", want.Message, firstLine(msg))
	}
	pe := syntaxErrorOf(stmt, sess)
	if pe == nil {
		return fmt.Errorf("expected a syntax error (%q), got %q", want.Message, firstLine(msg))
	}
	m := expectedPosRE.FindStringSubmatch(want.Message)
	if m == nil {
		return nil
	}
	line, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	if m[1] != "" {
		col--
	}
	if line0+pe.Line != line || pe.Col != col {
		return fmt.Errorf("syntax error at line %d:%d, expected at %d:%d (%q); got %q", line0+pe.Line, pe.Col, line, col, want.Message, firstLine(msg))
	}
	return nil
}

// wrappedRE matches the wrapping ksqlDB puts around some statement
// errors: a prefix naming the phase, then the position counted in lines
// of the case's statements joined by newlines.
var wrappedRE = regexp.MustCompile(`^(?:Exception while preparing statement: |Failed to prepare statement: )?(?:Line: (\d+), Col: (\d+): )?`)

// errPosRE finds the position a statement error starts with.
var errPosRE = regexp.MustCompile(`^line (\d+):(\d+): `)

// matchWrapped reports whether msg, from a statement whose first line is
// line0+1, is the expected message without ksqlDB's wrapping, at the
// position the wrapping names if it names one.
func matchWrapped(want, msg string, line0 int) bool {
	m := wrappedRE.FindStringSubmatch(want)
	if m == nil || m[0] == "" {
		return false
	}
	if !strings.Contains(msg, want[len(m[0]):]) {
		return false
	}
	if m[1] == "" {
		return true
	}
	got := errPosRE.FindStringSubmatch(msg)
	if got == nil {
		return false
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	gl, _ := strconv.Atoi(got[1])
	gc, _ := strconv.Atoi(got[2])
	return line0+gl == line && gc == col
}

// syntaxErrorOf parses stmt as the engine does (session variables
// substituted) and returns its syntax error, or nil when it parses.
func syntaxErrorOf(stmt string, sess *engine.Session) *parser.Error {
	lookup := func(name string) (string, bool) {
		v, ok := sess.Variables[strings.ToUpper(name)]
		return v, ok
	}
	var pe *parser.Error
	sc, err := parser.NewScript(stmt)
	if err != nil {
		if errors.As(err, &pe) {
			return pe
		}
		return nil
	}
	for {
		_, err := sc.Next(lookup)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if errors.As(err, &pe) {
				return pe
			}
			return nil
		}
	}
}
