package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/wire"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// The default limits of what a push query may buffer for a client that
// does not keep up.
const (
	DefaultPushMaxRows  = 10_000
	DefaultPushMaxBytes = 16 << 20
	// DefaultPushStallTimeout is how long a full buffer waits for its
	// client to take a row before the client is dropped.
	DefaultPushStallTimeout = 10 * time.Second
)

// pushSink is where a push query's messages go: an Execute stream or a
// PushQuery stream. Calls come from one goroutine.
type pushSink struct {
	header func(*sluicev1.StreamHeader) error
	row    func(*sluicev1.Row) error
	end    func(*sluicev1.StreamEnd) error
}

// pushQueue holds a push query's rows between the goroutine that reads
// them from the engine and the one that sends them to the client, up to
// the row and byte limits. A full queue holds back the query's delivery
// (backpressure on that query's own tasks only: a read shared with other
// push queries goes on, see engine's shared readers) until the client
// takes a row; a client that takes none for the stall timeout is dropped.
type pushQueue struct {
	maxRows  int
	maxBytes int64

	mu    sync.Mutex
	wake  chan struct{} // signalled when rows arrive or the queue ends
	room  chan struct{} // signalled when the client took a row
	rows  []queued
	bytes int64
	// done is set once no row will come; err is then the reader's error,
	// io.EOF when the query ended on its own.
	done bool
	err  error
	// dropped is set when the client was dropped; the text says why.
	dropped string
}

func (q *pushQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// queued is a row and its encoded size.
type queued struct {
	row  *sluicev1.Row
	size int64
}

// push adds a row. While the queue is full it waits for the client to
// take a row, up to stall; false when the client took none in that time
// (it is then marked dropped) or ctx ended.
func (q *pushQueue) push(ctx context.Context, id string, r *sluicev1.Row, stall time.Duration) bool {
	n := int64(proto.Size(r))
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		q.mu.Lock()
		if len(q.rows) == 0 || (len(q.rows) < q.maxRows && q.bytes+n <= q.maxBytes) {
			// A row larger than the byte limit still goes through alone.
			q.rows = append(q.rows, queued{r, n})
			q.bytes += n
			q.mu.Unlock()
			q.signal()
			return true
		}
		q.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(stall)
		}
		select {
		case <-q.room:
			continue
		case <-ctx.Done():
			return false
		case <-timer.C:
		}
		q.mu.Lock()
		q.dropped = fmt.Sprintf("push query %s dropped: client did not keep up: %d rows / %d bytes buffered (limits %d rows / %d bytes); it read no row for %s. Read the rows faster, or raise the server's push query limits",
			id, len(q.rows), q.bytes, q.maxRows, q.maxBytes, stall)
		q.rows, q.bytes = nil, 0
		q.mu.Unlock()
		q.signal()
		return false
	}
}

func (q *pushQueue) finish(err error) {
	q.mu.Lock()
	q.done, q.err = true, err
	q.mu.Unlock()
	q.signal()
}

// pop returns the next row, or nil with the queue's end: dropped text, or
// done with err.
func (q *pushQueue) pop() (r *sluicev1.Row, dropped string, done bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dropped != "" {
		return nil, q.dropped, true, nil
	}
	if len(q.rows) > 0 {
		it := q.rows[0]
		q.rows[0] = queued{}
		q.rows = q.rows[1:]
		q.bytes -= it.size
		select {
		case q.room <- struct{}{}:
		default:
		}
		return it.row, "", false, nil
	}
	return nil, "", q.done, q.err
}

// pushQuery streams a push query's header, rows and end to sink until the
// query ends, the client goes away or is dropped, or the server stops.
// limit, when positive, ends it after that many rows. index is the
// statement's index for errors.
func (s *Server) pushQuery(ctx context.Context, r api.Result, index int, limit int64, sink pushSink) error {
	st := r.Stream
	defer st.Close()
	header := &sluicev1.StreamHeader{Statement: wire.ValidUTF8(r.Statement), QueryId: wire.ValidUTF8(st.ID),
		Columns: wire.EncodeColumns(st.Columns), Pull: st.Pull, Print: st.Print}
	if err := sink.header(header); err != nil {
		return err
	}
	typed := st.TypedColumns()
	var limited atomic.Bool

	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.shutdown, cancel)()

	q := &pushQueue{maxRows: s.pushMaxRows(), maxBytes: s.pushMaxBytes(), wake: make(chan struct{}, 1), room: make(chan struct{}, 1)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		var n int64
		for {
			row, err := st.NextRow(qctx)
			if err != nil {
				q.finish(err)
				return
			}
			enc := wire.EncodeRow(row.Values, typed)
			enc.Tombstone = row.Tombstone
			if !q.push(qctx, st.ID, enc, s.pushStall()) {
				if qctx.Err() == nil {
					// Stop the query now: its rows have nowhere to go.
					st.Close()
					s.log.Warn("push query client dropped: it did not keep up", "query", st.ID)
					if s.onDrop != nil {
						s.onDrop(st.ID)
					}
				}
				return
			}
			if n++; limit > 0 && n >= limit {
				limited.Store(true)
				q.finish(io.EOF)
				return
			}
		}
	}()
	defer func() {
		cancel()
		<-read
	}()

	for {
		row, dropped, done, err := q.pop()
		switch {
		case dropped != "":
			return status.Error(codes.ResourceExhausted, dropped)
		case row != nil:
			if err := sink.row(row); err != nil {
				return err
			}
			continue
		case !done:
			select {
			case <-q.wake:
			case <-ctx.Done():
				return status.FromContextError(ctx.Err()).Err()
			}
			continue
		}
		switch {
		case errors.Is(err, io.EOF):
			reason := st.End()
			if limited.Load() {
				reason = api.EndLimit
			}
			return sink.end(wire.EncodeEnd(reason, nil))
		case ctx.Err() != nil:
			return status.FromContextError(ctx.Err()).Err()
		case s.shutdown.Err() != nil:
			if err := sink.end(&sluicev1.StreamEnd{Reason: sluicev1.EndReason_END_REASON_SERVER_SHUTDOWN}); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "the server is shutting down; push query "+st.ID+" was stopped")
		default:
			s.log.Error("push query failed", "query", st.ID, "err", err)
			return s.statusOf(err, index)
		}
	}
}

func (s *Server) pushStall() time.Duration {
	if s.opts.PushStallTimeout > 0 {
		return s.opts.PushStallTimeout
	}
	return DefaultPushStallTimeout
}

func (s *Server) pushMaxRows() int {
	if s.opts.PushMaxRows > 0 {
		return s.opts.PushMaxRows
	}
	return DefaultPushMaxRows
}

func (s *Server) pushMaxBytes() int64 {
	if s.opts.PushMaxBytes > 0 {
		return s.opts.PushMaxBytes
	}
	return DefaultPushMaxBytes
}
