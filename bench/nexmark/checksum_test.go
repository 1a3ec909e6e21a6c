package nexmark

import (
	"encoding/binary"
	"testing"

	"github.com/sluice-sql/sluice/kafka"
)

func TestSummarize(t *testing.T) {
	key := func(k int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(k)) }
	upd := Query{Name: "u", Updating: true}
	// Two update streams with the same final rows: one emits every
	// update, the other only the last; a deleted key is absent from both.
	a := []*kafka.Record{
		{Key: key(1), Value: []byte(`{"N":1}`)}, {Key: key(1), Value: []byte(`{"N":2}`)},
		{Key: key(2), Value: []byte(`{"N":5.0}`)}, {Key: key(3), Value: []byte(`{"N":1}`)}, {Key: key(3)},
	}
	b := []*kafka.Record{{Key: key(2), Value: []byte(`{"n":5}`)}, {Key: key(1), Value: []byte(`{"n":2}`)}}
	ra, err := Summarize(upd, a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Summarize(upd, b)
	if err != nil {
		t.Fatal(err)
	}
	if ra.Checksum != rb.Checksum || ra.Final != 2 || ra.Rows != 5 {
		t.Errorf("updating: %+v vs %+v", ra, rb)
	}
	// Append-only: a multiset, in any order; a repeated row counts.
	app := Query{Name: "a"}
	r1, _ := Summarize(app, []*kafka.Record{{Key: key(1), Value: []byte(`{"X":0.1}`)}, {Key: key(2), Value: []byte(`{"X":0.2}`)}})
	r2, _ := Summarize(app, []*kafka.Record{{Key: key(2), Value: []byte(`{"X":0.2000000000001}`)}, {Key: key(1), Value: []byte(`{"X":0.1}`)}})
	r3, _ := Summarize(app, []*kafka.Record{{Key: key(2), Value: []byte(`{"X":0.2}`)}, {Key: key(1), Value: []byte(`{"X":0.1}`)}, {Key: key(1), Value: []byte(`{"X":0.1}`)}})
	if r1.Checksum != r2.Checksum || r1.Checksum == r3.Checksum {
		t.Errorf("append-only: %s %s %s", r1.Checksum, r2.Checksum, r3.Checksum)
	}
	// Windowed keys: the same key in two windows are two rows.
	win := Query{Name: "w", Updating: true, Windowed: TimeWindows}
	wk := func(k, start int64) []byte { return binary.BigEndian.AppendUint64(key(k), uint64(start)) }
	rw, err := Summarize(win, []*kafka.Record{{Key: wk(1, 0), Value: []byte(`{"C":1}`)}, {Key: wk(1, 10), Value: []byte(`{"C":1}`)}})
	if err != nil || rw.Final != 2 {
		t.Errorf("windowed: %+v %v", rw, err)
	}
}
