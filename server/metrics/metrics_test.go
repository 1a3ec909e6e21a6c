package metrics

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
)

func TestWrite(t *testing.T) {
	qs := []engine.QueryMetrics{
		{ID: "CSAS_BIG_1", Type: "PERSISTENT", Status: "RUNNING",
			Stats: exec.Stats{RecordsIn: 7, RecordsOut: 3, Filtered: 2, Errors: 1, Late: 0, NullsDropped: 1, RestorePercent: 100, LastRecord: time.UnixMilli(26000),
				Time: exec.TaskTime{Poll: 1500 * time.Millisecond, Work: 2 * time.Second, Produce: 250 * time.Millisecond, Commit: time.Second / 8, Persist: 0}},
			Lag: exec.Lag{Records: 4, Seconds: 1.5}},
		{ID: `odd"id\`, Type: "PUSH", Status: "ERROR: boom\nagain", Stats: exec.Stats{RestorePercent: 40}, LagErr: errors.New("no kafka")},
	}
	var b bytes.Buffer
	Write(&b, qs, "v1.2.3", time.Unix(100, 0),
		Family{Name: "sluice_logins_failed_total", Type: "counter", Help: "Failed logins.", Samples: []Sample{{Value: 3}}},
		Family{Name: "sluice_skipped_total", Type: "counter", Help: "Skipped.", Samples: []Sample{{Labels: []string{"topic", `a"b`, "reason", "x"}, Value: 2}}})
	out := b.String()
	for _, want := range []string{
		`sluice_build_info{version="v1.2.3",goversion="go`,
		"# TYPE sluice_query_records_in_total counter\n",
		`sluice_query_info{query="CSAS_BIG_1",type="PERSISTENT",status="RUNNING"} 1` + "\n",
		`sluice_query_info{query="odd\"id\\",type="PUSH",status="ERROR"} 1` + "\n",
		`sluice_query_records_in_total{query="CSAS_BIG_1"} 7` + "\n",
		`sluice_query_records_out_total{query="CSAS_BIG_1"} 3` + "\n",
		`sluice_query_records_filtered_total{query="CSAS_BIG_1"} 2` + "\n",
		`sluice_query_records_errored_total{query="CSAS_BIG_1"} 1` + "\n",
		`sluice_query_records_late_total{query="CSAS_BIG_1"} 0` + "\n",
		"# HELP sluice_query_records_null_dropped_total Records of a stream with a null value",
		`sluice_query_records_null_dropped_total{query="CSAS_BIG_1"} 1` + "\n",
		`sluice_query_consumer_lag_records{query="CSAS_BIG_1"} 4` + "\n",
		`sluice_query_consumer_lag_seconds{query="CSAS_BIG_1"} 1.5` + "\n",
		`sluice_query_restore_progress_ratio{query="odd\"id\\"} 0.4` + "\n",
		`sluice_query_last_record_timestamp_seconds{query="CSAS_BIG_1"} 26` + "\n",
		`sluice_query_task_poll_seconds_total{query="CSAS_BIG_1"} 1.5` + "\n",
		`sluice_query_task_work_seconds_total{query="CSAS_BIG_1"} 2` + "\n",
		`sluice_query_task_produce_seconds_total{query="CSAS_BIG_1"} 0.25` + "\n",
		`sluice_query_task_commit_seconds_total{query="CSAS_BIG_1"} 0.125` + "\n",
		`sluice_query_task_persist_seconds_total{query="CSAS_BIG_1"} 0` + "\n",
		"process_start_time_seconds 100\n",
		"# TYPE sluice_logins_failed_total counter\nsluice_logins_failed_total 3\n",
		`sluice_skipped_total{topic="a\"b",reason="x"} 2` + "\n",
		"# TYPE go_goroutines gauge\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %q:\n%s", want, out)
		}
	}
	// A query whose lag could not be measured has no lag sample.
	if strings.Contains(out, `sluice_query_consumer_lag_records{query="odd`) {
		t.Errorf("a lag sample without a measurement:\n%s", out)
	}
	// Every sample line belongs to a family declared before it.
	declared := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			declared[strings.Fields(f)[0]] = true
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		name := strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]
		if !declared[name] {
			t.Errorf("sample of an undeclared family: %s", line)
		}
	}
}
