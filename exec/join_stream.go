package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
)

// defaultJoinGrace is the grace Kafka Streams' JoinWindows.of gives a join
// window of before + after when the query names no GRACE PERIOD: what is
// left of 24 hours.
const defaultJoinGrace = 24 * 60 * 60 * 1000

// streamJoin is the state of a stream-stream join. Each side's rows are
// kept in its state table under the join key, as one value listing the
// key's rows within the retention (record time, then the row), oldest
// first. Like Kafka Streams' window stores, each side's store has its own
// stream time (the latest time written to it) and hides, then drops when
// the key is next written, rows at or before that time minus the retention
// (before + after + grace). There is no other lateness check: a row whose
// window closed still looks up the other side's store, and an unmatched
// preserved row then goes out with nulls at once. With a GRACE PERIOD (Kafka
// Streams' JoinWindows.ofTimeDifferenceAndGrace), a preserved side's row
// that found no match waits in the outer table until its window closes
// and is emitted with nulls then, unless a match came meanwhile; without
// one (JoinWindows.of) it is emitted with nulls at once.
type streamJoin struct {
	before, after, grace int64
	// spuriousFix is Kafka Streams' delayed emission of unmatched rows.
	spuriousFix bool
	// outer names the table of unmatched rows waiting for their window
	// to close, keyed by time, side and join key.
	outer string
	// streamTime is the largest record time seen on either side and
	// storeTime each side store's; they are kept in the left state table
	// under timeKey so that a restart resumes them. waiting indexes the
	// rows of the outer table (key to time), read when the task starts,
	// and minTime is the earliest of their times (MaxInt64 for none).
	streamTime, minTime int64
	waiting             map[string]int64
	storeTime           [2]int64
	// timesDirty says the times moved since saveTimes last kept them;
	// loaded that load read them.
	timesDirty, loaded bool
	// codecs encode each side's whole rows: a stream's join key need
	// not be its key.
	codecs [2]rowCodec
	tbuf   []byte
}

// timeKey holds the stream time in the left state table; a join key
// always starts with a field tag, never 0xff.
var timeKey = []byte{0xff}

func (s *streamJoin) init(spec *topology.JoinSpec, schemas [2][]types.Column) {
	for side, schema := range schemas {
		s.codecs[side] = newRowCodec(schema, 0)
	}
	w := spec.Within
	s.before, s.after, s.grace = w.Before, w.After, w.Grace
	s.spuriousFix = w.Grace >= 0
	if w.Grace < 0 {
		s.grace = max(defaultJoinGrace-w.Before-w.After, 0)
	}
	s.outer = spec.ExtraState
	s.streamTime = math.MinInt64
	s.storeTime = [2]int64{math.MinInt64, math.MinInt64}
	s.minTime = math.MinInt64
}

// retention is how long a side's store keeps a row after its store time
// passed the row's time.
func (s *streamJoin) retention() int64 { return s.before + s.after + s.grace }

// live reports whether a row at t is still in side's store.
func (s *streamJoin) live(side int, t int64) bool {
	return s.storeTime[side] == math.MinInt64 || t > s.storeTime[side]-s.retention()
}

// saveTimes keeps the stream times in the left state table.
func (j *joinOp) saveTimes() error {
	s := &j.ss
	if !s.timesDirty {
		return nil
	}
	s.timesDirty = false
	v := make([]byte, 0, 24)
	v = binary.BigEndian.AppendUint64(v, uint64(s.streamTime))
	v = binary.BigEndian.AppendUint64(v, uint64(s.storeTime[leftPort]))
	v = binary.BigEndian.AppendUint64(v, uint64(s.storeTime[rightPort]))
	if err := j.cache.Put(j.tables[leftPort], timeKey, v); err != nil {
		return fmt.Errorf("exec: write join state: %w", err)
	}
	return nil
}

// load reads the stream times kept in state.
func (s *streamJoin) load(j *joinOp) error {
	s.loaded = true
	if err := j.loadWaiting(); err != nil {
		return err
	}
	v, ok, err := j.cache.Get(j.tables[leftPort], timeKey)
	if err != nil {
		return fmt.Errorf("exec: read join state: %w", err)
	}
	if ok && len(v) == 24 {
		s.streamTime = int64(binary.BigEndian.Uint64(v))
		s.storeTime[leftPort] = int64(binary.BigEndian.Uint64(v[8:]))
		s.storeTime[rightPort] = int64(binary.BigEndian.Uint64(v[16:]))
	}
	return nil
}

// window returns how far before and after a row of side its matches lie.
func (s *streamJoin) window(side int) (before, after int64) {
	if side == leftPort {
		return s.before, s.after
	}
	return s.after, s.before
}

func (j *joinOp) streamStream(side int, b *Batch, i int) error {
	s := &j.ss
	row, t := b.Row(i), b.Time(i)
	if b.Kind(i).Base() == NullValue || b.Kind(i)&KeyAbsent != 0 || !j.joinKey(side, row) {
		return nil
	}
	if t > s.streamTime || t > s.storeTime[side] {
		s.streamTime = max(s.streamTime, t)
		s.storeTime[side] = max(s.storeTime[side], t)
		s.timesDirty = true
	}
	before, after := s.window(side)
	if s.spuriousFix && t == s.streamTime {
		emitted, err := j.emitClosed()
		if err != nil {
			return err
		}
		if emitted {
			// Emitting set the join key to the closed rows'.
			j.joinKey(side, row)
		}
	}
	key := j.kbuf
	if s.live(side, t) {
		if err := j.keepStreamRow(side, key, row, t); err != nil {
			return err
		}
	}
	matched := false
	err := j.scanStreamRows(1-side, key, t-before, t+after, func(other []any, ot int64) error {
		matched = true
		if s.spuriousFix && j.preserved[1-side] {
			if err := j.unwait(j.outerKey(1-side, key, ot)); err != nil {
				return err
			}
		}
		if side == leftPort {
			j.emit(row, other, row, max(t, ot))
		} else {
			j.emit(other, row, row, max(t, ot))
		}
		return nil
	})
	if err != nil || matched || !j.preserved[side] {
		return err
	}
	if !s.spuriousFix || t+after < s.streamTime {
		j.emitUnmatched(side, row, t)
		return nil
	}
	v, err := s.codecs[side].value(row)
	if err != nil {
		j.errs.RowError("cannot keep the row of the join: "+err.Error(), row)
		return nil
	}
	okey := j.outerKey(side, key, t)
	if err := j.cache.Put(s.outer, okey, v); err != nil {
		return fmt.Errorf("exec: write join state: %w", err)
	}
	s.waiting[string(okey)] = t
	s.minTime = min(s.minTime, t)
	return nil
}

// unwait removes a row that found a match from the outer table, if it
// waits there.
func (j *joinOp) unwait(key []byte) error {
	if _, ok := j.ss.waiting[string(key)]; !ok {
		return nil
	}
	delete(j.ss.waiting, string(key))
	if err := j.cache.Delete(j.ss.outer, key); err != nil {
		return fmt.Errorf("exec: write join state: %w", err)
	}
	return nil
}

func (j *joinOp) emitUnmatched(side int, row []any, t int64) {
	if side == leftPort {
		j.emit(row, nil, row, t)
	} else {
		j.emit(nil, row, row, t)
	}
}

// outerKey is the outer table's key of side's row at time t under the
// join key bytes key: the time, so that a scan meets rows in time order,
// then the side (1 for left, 0 for right: right rows first on a tie, as in
// Kafka Streams' outer store) and the key.
func (j *joinOp) outerKey(side int, key []byte, t int64) []byte {
	b := binary.BigEndian.AppendUint64(j.ss.tbuf[:0], uint64(t)^(1<<63))
	b = append(b, byte(1-side))
	j.ss.tbuf = append(b, key...)
	return j.ss.tbuf
}

// emitClosed emits, with nulls for the other side, the unmatched rows of
// the outer table whose window closed: a left row at t once the stream
// time passed t + after + grace, a right row at t + before + grace. As
// Kafka Streams does, it walks the rows in the outer table's order and
// stops at the first whose window is still open.
func (j *joinOp) emitClosed() (emitted bool, err error) {
	s := &j.ss
	if len(s.waiting) == 0 || s.minTime+min(s.before, s.after)+s.grace >= s.streamTime {
		return false, nil
	}
	// Only rows within the shorter lookback of the stream time can have
	// closed; they come first in the table's order.
	var due []string
	for k, t := range s.waiting {
		if t+min(s.before, s.after)+s.grace < s.streamTime {
			due = append(due, k)
		}
	}
	slices.Sort(due)
	for _, k := range due {
		t := s.waiting[k]
		side := 1 - int(k[8])
		_, after := s.window(side)
		if t+after+s.grace >= s.streamTime {
			break
		}
		v, found, err := j.cache.Get(s.outer, []byte(k))
		if err != nil {
			return emitted, fmt.Errorf("exec: read join state: %w", err)
		}
		delete(s.waiting, k)
		if !found {
			continue
		}
		row := j.slab.alloc(len(j.schemas[side]))
		if err := s.codecs[side].decode(nil, v, row); err != nil {
			return emitted, fmt.Errorf("exec: corrupt join state in %s: %w", s.outer, err)
		}
		if err := j.cache.Delete(s.outer, []byte(k)); err != nil {
			return emitted, fmt.Errorf("exec: write join state: %w", err)
		}
		if !j.joinKey(side, row) {
			continue
		}
		j.emitUnmatched(side, row, t)
		emitted = true
	}
	s.minTime = math.MaxInt64
	for _, t := range s.waiting {
		s.minTime = min(s.minTime, t)
	}
	return emitted, nil
}

// loadWaiting reads the rows waiting in the outer table into s.waiting,
// once, when the task starts.
func (j *joinOp) loadWaiting() error {
	s := &j.ss
	s.waiting = map[string]int64{}
	s.minTime = math.MaxInt64
	if !s.spuriousFix || !j.preserved[leftPort] && !j.preserved[rightPort] {
		return nil
	}
	var derr error
	err := j.cache.Table(s.outer).Scan(nil, nil, func(k, _ []byte) bool {
		if len(k) < 9 || k[8] > 1 {
			derr = fmt.Errorf("bad key %q", k)
			return false
		}
		t := int64(binary.BigEndian.Uint64(k) ^ (1 << 63))
		s.waiting[string(k)] = t
		s.minTime = min(s.minTime, t)
		return true
	})
	if err != nil {
		return fmt.Errorf("exec: read join state: %w", err)
	}
	if derr != nil {
		return fmt.Errorf("exec: corrupt join state in %s: %w", s.outer, derr)
	}
	return nil
}

// keepStreamRow adds side's row at time t to the key's rows in the side's
// state table, dropping those past the retention.
func (j *joinOp) keepStreamRow(side int, key []byte, row []any, t int64) error {
	s := &j.ss
	old, _, err := j.cache.Get(j.tables[side], key)
	if err != nil {
		return fmt.Errorf("exec: read join state: %w", err)
	}
	v := make([]byte, 0, len(old)+64)
	for len(old) > 0 {
		et, n := binary.Varint(old)
		if n <= 0 {
			return fmt.Errorf("exec: corrupt join state in %s", j.tables[side])
		}
		l, m := binary.Uvarint(old[n:])
		if m <= 0 || l > uint64(len(old)-n-m) {
			return fmt.Errorf("exec: corrupt join state in %s", j.tables[side])
		}
		end := n + m + int(l)
		if s.live(side, et) {
			v = append(v, old[:end]...)
		}
		old = old[end:]
	}
	enc, err := s.codecs[side].value(row)
	if err != nil {
		j.errs.RowError("cannot keep the row of the join: "+err.Error(), row)
		return nil
	}
	v = binary.AppendVarint(v, t)
	v = binary.AppendUvarint(v, uint64(len(enc)))
	v = append(v, enc...)
	if err := j.cache.Put(j.tables[side], key, v); err != nil {
		return fmt.Errorf("exec: write join state: %w", err)
	}
	return nil
}

// scanStreamRows calls fn with each row side keeps under key whose time
// lies in [from, to], oldest first.
func (j *joinOp) scanStreamRows(side int, key []byte, from, to int64, fn func(row []any, t int64) error) error {
	v, found, err := j.cache.Get(j.tables[side], key)
	if err != nil {
		return fmt.Errorf("exec: read join state: %w", err)
	}
	if !found {
		return nil
	}
	for len(v) > 0 {
		et, n := binary.Varint(v)
		if n <= 0 {
			return fmt.Errorf("exec: corrupt join state in %s", j.tables[side])
		}
		l, m := binary.Uvarint(v[n:])
		if m <= 0 || l > uint64(len(v)-n-m) {
			return fmt.Errorf("exec: corrupt join state in %s", j.tables[side])
		}
		enc := v[n+m : n+m+int(l)]
		v = v[n+m+int(l):]
		if et < from || et > to || !j.ss.live(side, et) {
			continue
		}
		row := j.slab.alloc(len(j.schemas[side]))
		if err := j.ss.codecs[side].decode(nil, enc, row); err != nil {
			return fmt.Errorf("exec: corrupt join state in %s: %w", j.tables[side], err)
		}
		if err := fn(row, et); err != nil {
			return err
		}
	}
	return nil
}
