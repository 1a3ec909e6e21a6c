package engine

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser/ast"
)

// printColumns are the columns of PRINT's rows.
var printColumns = []types.Column{
	{Name: "ROWTIME", Type: types.TimestampType},
	{Name: "PARTITION", Type: types.IntType},
	{Name: "OFFSET", Type: types.BigintType},
	{Name: "KEY_FORMAT", Type: types.StringType},
	{Name: "KEY", Type: types.StringType},
	{Name: "VALUE_FORMAT", Type: types.StringType},
	{Name: "VALUE", Type: types.StringType},
}

// print streams a topic's records as they are, with the format each key and
// value looks like. A PRINT takes one of the server's push query places
// (ksql.max.push.queries) until its Stream is closed.
func (e *Engine) print(ctx context.Context, st *ast.Print) (Result, error) {
	release, err := e.reservePush()
	if err != nil {
		return Result{}, err
	}
	started := false
	defer func() {
		if !started {
			release()
		}
	}()
	topic, err := e.findTopic(ctx, st)
	if err != nil {
		return Result{}, err
	}
	if err := e.checkTopic(st.Pos, usePrint, topic); err != nil {
		return Result{}, err
	}
	bounds, err := e.cfg.Kafka.ListOffsets(ctx, topic)
	if err != nil {
		return Result{}, internal("cannot read topic %s: %v", topic, err)
	}
	c, err := e.cfg.Kafka.NewConsumer(kafka.ConsumerOptions{ClientID: "sluice-print"})
	if err != nil {
		return Result{}, internal("%v", err)
	}
	assign := map[int32]int64{}
	for p, b := range bounds {
		if st.FromBeginning {
			assign[int32(p)] = b.Start
		} else {
			assign[int32(p)] = b.End
		}
	}
	c.Assign(map[string]map[int32]int64{topic: assign})
	interval := st.Interval
	if interval <= 0 {
		interval = 1
	}
	limit := int64(-1)
	if st.Limit != nil {
		limit = *st.Limit
	}
	// A windowed source over the topic says how to split its keys.
	var window *topology.KeyWindow
	for _, src := range e.cat.Sources() {
		if src.Topic == topic && src.Window != nil {
			window = src.Window
		}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rows := make(chan []any, pushBuffer)
	done := make(chan struct{})
	var runErr error
	var limited atomic.Bool
	go func() {
		defer close(done)
		defer c.Close()
		var seen, sent int64
		for limit < 0 || sent < limit {
			recs, err := c.Poll(runCtx)
			if runCtx.Err() != nil {
				return
			}
			if err != nil {
				runErr = err
				return
			}
			for _, r := range recs {
				seen++
				if (seen-1)%interval != 0 {
					continue
				}
				kf, k := detectKey(r.Key, window)
				vf, v := detect(r.Value)
				row := []any{types.TimestampValue(r.Timestamp.UnixMilli()), r.Partition, r.Offset, kf, k, vf, v}
				select {
				case rows <- row:
				case <-runCtx.Done():
					return
				}
				sent++
				if limit >= 0 && sent >= limit {
					limited.Store(true)
					return
				}
			}
		}
	}()
	var once sync.Once
	closeFn := func() { once.Do(func() { cancel(); <-done; release() }) }
	next := func(ctx context.Context) ([]any, error) {
		select {
		case r := <-rows:
			return r, nil
		case <-done:
			select {
			case r := <-rows:
				return r, nil
			default:
			}
			if runErr != nil {
				return nil, runErr
			}
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	started = true
	end := func() api.EndReason {
		if limited.Load() {
			return api.EndLimit
		}
		return api.EndClosed
	}
	ps := api.NewStream("print_"+topic, api.Columns(printColumns, 0), next, closeFn, end)
	ps.Print = true
	return Result{Kind: ResultRows, Stream: ps}, nil
}

// findTopic resolves PRINT's topic: its exact name, else the one topic
// whose name matches ignoring case.
func (e *Engine) findTopic(ctx context.Context, st *ast.Print) (string, error) {
	_, err := e.cfg.Kafka.DescribeTopic(ctx, st.Topic)
	if err == nil {
		return st.Topic, nil
	}
	if !errors.Is(err, kafka.ErrUnknownTopic) {
		return "", internal("cannot describe topic %s: %v", st.Topic, err)
	}
	all, err := e.cfg.Kafka.ListTopics(ctx)
	if err != nil {
		return "", internal("cannot list topics: %v", err)
	}
	var match []string
	for _, t := range all {
		if strings.EqualFold(t.Name, st.Topic) {
			match = append(match, t.Name)
		}
	}
	if len(match) == 1 {
		return match[0], nil
	}
	if len(match) > 1 {
		return "", userError(st.Pos, "topic name %s matches %s ignoring case; quote the exact name, e.g. PRINT '%s'", st.Topic, strings.Join(match, ", "), match[0])
	}
	return "", userError(st.Pos, "Could not find topic '%s', or the KSQL user does not have permissions to list the topic. Topic names are case-sensitive.\nSHOW TOPICS lists the topics.", st.Topic)
}

// detectKey renders a key as detect does; a windowed key shows its window
// after it, as ksqlDB prints it: key@start/end.
func detectKey(b []byte, w *topology.KeyWindow) (format, text string) {
	if w == nil || b == nil {
		return detect(b)
	}
	start, end, rest, err := exec.SplitWindowedKey(b, w)
	if err != nil {
		return detect(b)
	}
	format, text = detect(rest)
	return format, fmt.Sprintf("%s@%d/%d", text, start, end)
}

// detect guesses the format of a key or value and renders it.
func detect(b []byte) (format, text string) {
	switch {
	case b == nil:
		return "NULL", "<null>"
	case len(b) > 0 && (b[0] == '{' || b[0] == '[') && json.Valid(b):
		return "JSON", string(b)
	case utf8.Valid(b) && printable(string(b)):
		return "KAFKA_STRING", string(b)
	case len(b) == 4:
		return "KAFKA_INT", fmt.Sprint(int32(binary.BigEndian.Uint32(b)))
	case len(b) == 8:
		return "KAFKA_BIGINT or KAFKA_DOUBLE", fmt.Sprint(int64(binary.BigEndian.Uint64(b)))
	}
	return "BYTES", "0x" + hex.EncodeToString(b)
}

func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}
