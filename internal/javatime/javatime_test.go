package javatime

import (
	"strings"
	"testing"
	"time"
)

func zone(t *testing.T, id string) *time.Location {
	t.Helper()
	l, err := LoadZone(id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestFormat(t *testing.T) {
	la := zone(t, "America/Los_Angeles")
	london := zone(t, "Europe/London")
	ts := time.UnixMilli(1526075913000) // 2018-05-11T21:58:33Z, a Friday
	tests := []struct {
		pattern string
		t       time.Time
		want    string
	}{
		{"yyyy-MM-dd HH:mm:ss", ts.UTC(), "2018-05-11 21:58:33"},
		{"yyyy-MM-dd HH:mm:ss zzz", ts.In(la), "2018-05-11 14:58:33 PDT"},
		{"yyyy-MM-dd HH:mm:ss zzz", ts.In(london), "2018-05-11 22:58:33 BST"},
		{"yyyy-MM-dd HH:mm:ss zzz", time.UnixMilli(1515715200000).In(london), "2018-01-12 00:00:00 GMT"},
		{"zzzz", ts.In(la), "Pacific Daylight Time"},
		{"yyyy-MM-dd'T'HH:mm:ssX", ts.UTC(), "2018-05-11T21:58:33Z"},
		{"yyyy-MM-dd'T'HH:mm:ssX", ts.In(la), "2018-05-11T14:58:33-07"},
		{"XXX", ts.In(la), "-07:00"},
		{"xx", ts.UTC(), "+0000"},
		{"Z", ts.In(la), "-0700"},
		{"ZZZZ", ts.In(la), "GMT-07:00"},
		{"O", ts.In(la), "GMT-7"},
		{"VV", ts.In(la), "America/Los_Angeles"},
		{"VV", ts.In(zone(t, "+05:30")), "+05:30"},
		{"dd-MMM-yyyy", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), "01-Jan-2022"},
		{"EEE, d MMMM yy", ts.UTC(), "Fri, 11 May 18"},
		{"EEEE", ts.UTC(), "Friday"},
		{"h:mm a", ts.UTC(), "9:58 PM"},
		{"hh 'o''clock' a", time.Date(2020, 1, 1, 0, 5, 0, 0, time.UTC), "12 o'clock AM"},
		{"HH:mm:ss.SSS", time.UnixMilli(1234).UTC(), "00:00:01.234"},
		{"ss.S", time.UnixMilli(1200).UTC(), "01.2"},
		{"yyyy-MM-dd[ HH:mm]", ts.UTC(), "2018-05-11 21:58"},
		{"''yyyy''", ts.UTC(), "'2018'"},
		{"D G Q", ts.UTC(), "131 AD 2"},
	}
	for _, tc := range tests {
		f, err := Parse(tc.pattern)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.pattern, err)
			continue
		}
		if got := f.Format(tc.t); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.pattern, got, tc.want)
		}
	}
}

func TestFormatDateTime(t *testing.T) {
	tests := []struct {
		pattern string
		days    int64
		want    string
		err     string
	}{
		{"yyyy-MM-dd", 17662, "2018-05-11", ""},
		{"dd/MM/yyyy", 18027, "11/05/2019", ""},
		{"dd-MMM-yyyy", 18993, "01-Jan-2022", ""},
		{"dd-MM-yyyy", 0, "01-01-1970", ""},
		{"dd-MM-yyyy'Sophia'", -1, "31-12-1969Sophia", ""},
		{"yyyy-MM-dd[ HH:mm]", 0, "1970-01-01", ""},
		{"yyyy HH", 0, "", "Unsupported field: HourOfDay"},
		{"yyyy zzz", 0, "", "Unable to extract ZoneId"},
	}
	for _, tc := range tests {
		got, err := MustParse(tc.pattern).FormatDate(tc.days)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.pattern, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q %d: got %q, %v; want %q", tc.pattern, tc.days, got, err, tc.want)
		}
	}
	got, err := MustParse("HH:mm:ss.SSS").FormatTime(45296789)
	if err != nil || got != "12:34:56.789" {
		t.Errorf("FormatTime: %q, %v", got, err)
	}
	if _, err := MustParse("yyyy HH").FormatTime(0); err == nil || !strings.Contains(err.Error(), "YearOfEra") {
		t.Errorf("FormatTime with year: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, p := range []string{"yyyy-MM-dd'T", "yyyy]", "bb", "{", "aa", "VVV", "SSSSSSSSSS", "zzzzz", "OO"} {
		if _, err := Parse(p); err == nil {
			t.Errorf("Parse(%q) succeeded", p)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	la := zone(t, "America/Los_Angeles")
	tests := []struct {
		pattern, text string
		loc           *time.Location
		want          int64
		err           bool
	}{
		{"yyyy-MM-dd'T'HH:mm:ssX", "2018-05-11T21:58:33Z", time.UTC, 1526075913000, false},
		{"yyyy-MM-dd'T'HH:mm:ssX", "2019-05-11T21:58:33Z", time.UTC, 1557611913000, false},
		{"yyyy-MM-dd'T'HH:mm:ssX", "2020-05-11T21:58:33z", time.UTC, 1589234313000, false},
		{"yyyy-MM-dd'T'HH:mm:ss.SX", "2019-08-27T13:31:09.2+0000", time.UTC, 1566912669200, false},
		{"yyyy-MM-dd'T'HH:mm:ss", "2018-05-11T21:58:33", time.UTC, 1526075913000, false},
		{"yyyy-MM-dd'T'HH:mm:ss zzz", "2018-05-11T21:58:33 PST", time.UTC, 1526101113000, false},
		{"yyyy-MM-dd'T'HH:mm:ss zzz", "2020-05-11T21:58:33 PST", time.UTC, 1589259513000, false},
		{"yyyy-MM-dd'T'HH:mm:ss", "2018-05-11T14:58:33", la, 1526075913000, false},
		{"yyyy-MM-dd HH:mm:ss VV", "2018-05-11 14:58:33 America/Los_Angeles", time.UTC, 1526075913000, false},
		{"yyyy-MM-dd HH:mm:ssXXX", "2018-05-11 14:58:33-07:00", time.UTC, 1526075913000, false},
		{"yyyyMMddHHmmssSSS", "20180511215833123", time.UTC, 1526075913123, false},
		{"yyyy-MM-dd", "1970-01-02", time.UTC, 86400000, false},
		{"HH:mm", "01:00", time.UTC, 3600000, false},
		{"dd-MMM-yyyy hh:mm a", "11-may-2018 09:58 pm", time.UTC, 1526075880000, false},
		{"yyyy-MM-dd[ HH:mm]", "1970-01-01 01:00", time.UTC, 3600000, false},
		{"yyyy-MM-dd[ HH:mm]", "1970-01-01", time.UTC, 0, false},
		// 02:30 does not exist on 2020-03-08 in Los Angeles: moved to 03:30 PDT.
		{"yyyy-MM-dd HH:mm", "2020-03-08 02:30", la, 1583663400000, false},
		// 01:30 happens twice on 2020-11-01: the earlier (PDT) one.
		{"yyyy-MM-dd HH:mm", "2020-11-01 01:30", la, 1604219400000, false},
		{"yyyy-MM-dd", "2020-02-30", time.UTC, 1582934400000, false},
		{"yyyy-MM-dd", "2020-13-01", time.UTC, 0, true},
		{"yyyy-MM-dd", "not a date", time.UTC, 0, true},
		{"yyyy-MM-dd", "2020-01-01x", time.UTC, 0, true},
		{"yyyy-MM-dd'T'HH:mm:ssX", "not a timestamp", time.UTC, 0, true},
	}
	for _, tc := range tests {
		got, err := MustParse(tc.pattern).ParseTimestamp(tc.text, tc.loc)
		if tc.err {
			if err == nil {
				t.Errorf("%q %q: no error, got %v", tc.pattern, tc.text, got)
			}
			continue
		}
		if err != nil || got.UnixMilli() != tc.want {
			t.Errorf("%q %q: got %d, %v; want %d", tc.pattern, tc.text, got.UnixMilli(), err, tc.want)
		}
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		pattern, text string
		lenient       bool
		want          int64
		err           bool
	}{
		{"yyyy-MM-dd'Lit'", "2018-05-11Lit", true, 17662, false},
		{"dd/MM/yyyy", "11/05/2019", true, 18027, false},
		{"dd-MMM-yyyy", "01-Jan-2022", true, 18993, false},
		{"dd-MMM-yyyy", "01-JAN-2022", true, 18993, false},
		{"MMM-yyyy", "JAN-2022", true, 18993, false},
		{"MMM-yyyy", "JAN-2022", false, 0, true},
		{"yyyyMMdd", "19700102", false, 1, false},
		{"dd-MM-yyyy", "01-01-1970", false, 0, false},
		{"yyyy-MM-dd HH", "2020-01-01 10", true, 0, true},
		{"yyyy-MM-dd", "2022", true, 0, true},
		{"yyyy-MM-dd", "2003-12-24-01-01", true, 12410, false},
		{"yyyy-MM-dd", "2003-12-24-01-01", false, 0, true},
	}
	for _, tc := range tests {
		got, err := MustParse(tc.pattern).ParseDate(tc.text, tc.lenient)
		if tc.err != (err != nil) || got != tc.want {
			t.Errorf("%q %q: got %d, %v; want %d (err %v)", tc.pattern, tc.text, got, err, tc.want, tc.err)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		pattern, text string
		want          int64
		err           bool
	}{
		{"HH:mm:ss.SSS", "12:34:56.789", 45296789, false},
		{"HH:mm", "00:01", 60000, false},
		{"hh:mm a", "12:01 AM", 60000, false},
		{"hh:mm a", "12:01 PM", 43260000, false},
		{"yyyy HH", "2020 10", 0, true},
		{"mm", "10", 600000, false},
		{"HH:mm", "25:00", 0, true},
	}
	for _, tc := range tests {
		got, err := MustParse(tc.pattern).ParseTime(tc.text)
		if tc.err != (err != nil) || got != tc.want {
			t.Errorf("%q %q: got %d, %v; want %d (err %v)", tc.pattern, tc.text, got, err, tc.want, tc.err)
		}
	}
}

func TestLoadZone(t *testing.T) {
	ok := map[string]int{"UTC": 0, "Z": 0, "+05:30": 19800, "-08": -28800, "GMT+2": 7200, "UTC-03:00": -10800, "Europe/London": -1}
	for id, off := range ok {
		l, err := LoadZone(id)
		if err != nil {
			t.Errorf("LoadZone(%q): %v", id, err)
			continue
		}
		if off >= 0 || id[0] == '-' {
			if _, o := time.Unix(0, 0).In(l).Zone(); off != -1 && o != off {
				t.Errorf("LoadZone(%q) offset %d, want %d", id, o, off)
			}
		}
	}
	for _, id := range []string{"", "Local", "PST", "Mars/Olympus", "+25:00", "foo bar"} {
		if _, err := LoadZone(id); err == nil {
			t.Errorf("LoadZone(%q) succeeded", id)
		}
	}
}

func TestCached(t *testing.T) {
	a, err := Cached("yyyy")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Cached("yyyy")
	if a != b {
		t.Error("Cached compiled a pattern twice")
	}
	if _, err := Cached("bb"); err == nil {
		t.Error("Cached accepted a bad pattern")
	}
}
