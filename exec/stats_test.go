package exec

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/kafka"
)

// endsClient is a Kafka client that only lists offsets.
type endsClient struct {
	kafka.Client
	ends map[string][]kafka.Offsets
}

func (c endsClient) ListOffsets(_ context.Context, topic string) ([]kafka.Offsets, error) {
	return c.ends[topic], nil
}

func TestStatsAndLag(t *testing.T) {
	tk := offlineTask(t, testGraph(t))
	recs := testRecords(20)
	recs[3].Value = []byte(`{"name":`)
	recs[5].Value = nil
	tk.polled = recs
	tk.decode(recs)
	tk.stats.in.Add(int64(len(recs)))
	if err := tk.push(context.Background(), 0, &tk.in); err != nil {
		t.Fatal(err)
	}
	q := tk.q
	q.tasks = []*task{tk}
	s := q.Stats()
	// amounts 0..19 but the bad record's 3 and the null value's 5: 9
	// above 10 go out, 9 are filtered, 1 errored, 1 null value dropped.
	if s.RecordsIn != 20 || s.RecordsOut != 9 || s.Filtered != 9 || s.Errors != 1 || s.NullsDropped != 1 || s.Late != 0 || s.Restoring || s.RestorePercent != 100 {
		t.Errorf("stats = %+v", s)
	}
	if s.RecordsIn != s.RecordsOut+s.Filtered+s.Errors+s.NullsDropped {
		t.Errorf("in %d != out %d + filtered %d + errored %d + nulls dropped %d", s.RecordsIn, s.RecordsOut, s.Filtered, s.Errors, s.NullsDropped)
	}

	now := time.UnixMilli(10_000)
	q.deps.Now = func() time.Time { return now }
	q.deps.Kafka = endsClient{ends: map[string][]kafka.Offsets{"orders": {{Start: 0, End: 20}}}}
	q.started = time.UnixMilli(4_000)
	tk.pos.Store(20)
	if lag, err := q.Lag(context.Background()); err != nil || lag != (Lag{}) {
		t.Errorf("caught up: lag %+v, %v", lag, err)
	}
	// Nothing processed yet, 20 records waiting: behind since the start.
	tk.pos.Store(0)
	if lag, err := q.Lag(context.Background()); err != nil || lag != (Lag{Records: 20, Seconds: 6}) {
		t.Errorf("nothing processed: lag %+v, %v", lag, err)
	}
	// 15 processed, the last at 7.5 s.
	tk.pos.Store(15)
	tk.stats.lastTime.Store(7_500)
	if lag, err := q.Lag(context.Background()); err != nil || lag != (Lag{Records: 5, Seconds: 2.5}) {
		t.Errorf("behind: lag %+v, %v", lag, err)
	}
}
