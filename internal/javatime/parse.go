package javatime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// field identifies a value read while parsing.
type field uint8

const (
	fEra field = iota
	fYearOfEra
	fYear
	fQuarter
	fMonth
	fDayOfYear
	fDay
	fDayOfWeek
	fAmPm
	fHour
	fClockHourOfDay
	fHourOfAmPm
	fClockHourOfAmPm
	fMinute
	fSecond
	fNano
	fMilliOfDay
	fNanoOfDay
	fieldCount
)

var fieldNames = [fieldCount]string{
	"Era", "YearOfEra", "Year", "QuarterOfYear", "MonthOfYear", "DayOfYear", "DayOfMonth",
	"DayOfWeek", "AmPmOfDay", "HourOfDay", "ClockHourOfDay", "HourOfAmPm", "ClockHourOfAmPm",
	"MinuteOfHour", "SecondOfMinute", "NanoOfSecond", "MilliOfDay", "NanoOfDay",
}

var fieldRange = [fieldCount][2]int64{
	{0, 1}, {1, 999999999}, {-999999999, 999999999}, {1, 4}, {1, 12}, {1, 366}, {1, 31},
	{1, 7}, {0, 1}, {0, 23}, {1, 24}, {0, 11}, {1, 12}, {0, 59}, {0, 59}, {0, 999999999},
	{0, 86399999}, {0, 86399999999999},
}

func isDateField(f field) bool { return f <= fDayOfWeek }

// parsed holds the fields read from a text.
type parsed struct {
	set  [fieldCount]bool
	val  [fieldCount]int64
	zone *time.Location
	off  int
	// hasOff is set when an offset was read (and zone is nil).
	hasOff bool
}

type parseError struct {
	text string
	msg  string
}

func (e *parseError) Error() string { return "Text '" + e.text + "' " + e.msg }

func (p *parsed) put(f field, v int64) error {
	r := fieldRange[f]
	if v < r[0] || v > r[1] {
		return fmt.Errorf("Invalid value for %s (valid values %d - %d): %d", fieldNames[f], r[0], r[1], v)
	}
	if p.set[f] && p.val[f] != v {
		return fmt.Errorf("Conflict found: %s %d differs from %s %d", fieldNames[f], p.val[f], fieldNames[f], v)
	}
	p.set[f], p.val[f] = true, v
	return nil
}

// parse reads s with the pattern: all of it, or a prefix when prefix is
// set.
func (f *Format) parse(s string, prefix bool) (*parsed, error) {
	p := &parsed{}
	n, err := parseItems(f.items, s, 0, p)
	if err != nil {
		if pe, ok := err.(*parseError); ok {
			return nil, pe
		}
		return nil, &parseError{s, "could not be parsed: " + err.Error()}
	}
	if n != len(s) && !prefix {
		return nil, &parseError{s, "could not be parsed, unparsed text found at index " + strconv.Itoa(n)}
	}
	return p, nil
}

func parseItems(items []item, s string, pos int, p *parsed) (int, error) {
	for _, it := range items {
		switch it.kind {
		case itemLiteral:
			if len(s)-pos < len(it.lit) || !strings.EqualFold(s[pos:pos+len(it.lit)], it.lit) {
				return pos, atIndex(s, pos)
			}
			pos += len(it.lit)
		case itemOptional:
			saved := *p
			n, err := parseItems(it.sub, s, pos, p)
			if err != nil {
				*p = saved
				continue
			}
			pos = n
		case itemField:
			n, err := parseField(it, s, pos, p)
			if err != nil {
				return pos, err
			}
			pos = n
		}
	}
	return pos, nil
}

func atIndex(s string, pos int) error {
	return &parseError{s, "could not be parsed at index " + strconv.Itoa(pos)}
}

// matchText reads the longest of names (case-insensitively) at pos and
// returns its index.
func matchText(s string, pos int, names []string) (int, int, bool) {
	best, bestLen := -1, 0
	for i, n := range names {
		if len(n) > bestLen && len(s)-pos >= len(n) && strings.EqualFold(s[pos:pos+len(n)], n) {
			best, bestLen = i, len(n)
		}
	}
	return best, pos + bestLen, best >= 0
}

var letterField = map[byte]field{
	'y': fYearOfEra, 'u': fYear, 'Q': fQuarter, 'q': fQuarter, 'M': fMonth, 'L': fMonth,
	'D': fDayOfYear, 'd': fDay, 'H': fHour, 'k': fClockHourOfDay, 'K': fHourOfAmPm,
	'h': fClockHourOfAmPm, 'm': fMinute, 's': fSecond, 'n': fNano, 'A': fMilliOfDay, 'N': fNanoOfDay,
}

func parseField(it item, s string, pos int, p *parsed) (int, error) {
	if lo, hi, ok := it.numeric(); ok {
		avail := digitsAt(s, pos, 19)
		if hi > lo {
			avail -= it.reserve
		}
		n := min(avail, hi)
		if n < lo {
			return pos, atIndex(s, pos)
		}
		v, err := strconv.ParseInt(s[pos:pos+n], 10, 64)
		if err != nil {
			return pos, atIndex(s, pos)
		}
		switch {
		case it.letter == 'S':
			for i := n; i < 9; i++ {
				v *= 10
			}
			return pos + n, p.put(fNano, v)
		case (it.letter == 'y' || it.letter == 'u') && it.count == 2:
			v += 2000
		}
		return pos + n, p.put(letterField[it.letter], v)
	}
	switch it.letter {
	case 'G':
		names := []string{"BC", "AD"}
		if it.count == 4 {
			names = []string{"Before Christ", "Anno Domini"}
		} else if it.count == 5 {
			names = []string{"B", "A"}
		}
		i, n, ok := matchText(s, pos, names)
		if !ok {
			return pos, atIndex(s, pos)
		}
		return n, p.put(fEra, int64(i))
	case 'M', 'L':
		names := monthsShort[:]
		switch it.count {
		case 4:
			names = monthsLong[:]
		case 5:
			names = make([]string, 12)
			for i, m := range monthsLong {
				names[i] = m[:1]
			}
		}
		i, n, ok := matchText(s, pos, names)
		if !ok {
			return pos, atIndex(s, pos)
		}
		return n, p.put(fMonth, int64(i+1))
	case 'Q', 'q':
		var names []string
		if it.count == 3 {
			names = []string{"Q1", "Q2", "Q3", "Q4"}
		} else if it.count == 4 {
			names = quarters[:]
		} else {
			names = []string{"1", "2", "3", "4"}
		}
		i, n, ok := matchText(s, pos, names)
		if !ok {
			return pos, atIndex(s, pos)
		}
		return n, p.put(fQuarter, int64(i+1))
	case 'E':
		names := daysShort[:]
		switch it.count {
		case 4:
			names = daysLong[:]
		case 5:
			names = make([]string, 7)
			for i, d := range daysLong {
				names[i] = d[:1]
			}
		}
		i, n, ok := matchText(s, pos, names)
		if !ok {
			return pos, atIndex(s, pos)
		}
		return n, p.put(fDayOfWeek, int64(i+1))
	case 'a':
		i, n, ok := matchText(s, pos, []string{"AM", "PM"})
		if !ok {
			return pos, atIndex(s, pos)
		}
		return n, p.put(fAmPm, int64(i))
	case 'V', 'z':
		l, n, ok := parseZoneText(s[pos:], it.letter == 'z')
		if !ok {
			return pos, atIndex(s, pos)
		}
		p.zone = l
		return pos + n, nil
	case 'O':
		if len(s)-pos < 3 || !strings.EqualFold(s[pos:pos+3], "GMT") {
			return pos, atIndex(s, pos)
		}
		off, n, ok := parseOffsetText(s[pos+3:], true)
		if !ok {
			off, n = 0, 0
		}
		return p.offset(off, pos+3+n)
	case 'X', 'x', 'Z':
		if pos < len(s) && (s[pos] == 'Z' || s[pos] == 'z') && (it.letter == 'X' || it.letter == 'Z' && it.count == 5) {
			return p.offset(0, pos+1)
		}
		if it.letter == 'Z' && it.count == 4 {
			if len(s)-pos >= 3 && strings.EqualFold(s[pos:pos+3], "GMT") {
				off, n, ok := parseOffsetText(s[pos+3:], false)
				if !ok {
					off, n = 0, 0
				}
				return p.offset(off, pos+3+n)
			}
			return pos, atIndex(s, pos)
		}
		off, n, ok := parseOffsetText(s[pos:], false)
		if !ok {
			return pos, atIndex(s, pos)
		}
		return p.offset(off, pos+n)
	}
	return pos, atIndex(s, pos)
}

func (p *parsed) offset(off, next int) (int, error) {
	if p.zone == nil {
		p.off, p.hasOff = off, true
	}
	return next, nil
}

// location returns the zone read from the text, or def.
func (p *parsed) location(def *time.Location) *time.Location {
	switch {
	case p.zone != nil:
		return p.zone
	case p.hasOff:
		return offsetZone(p.off)
	}
	return def
}

// date resolves the date fields; missing ones default to year 1970,
// month 1 and day 1 when lenient and are an error otherwise.
func (p *parsed) date(lenient bool) (int, time.Month, int, error) {
	y := int64(1970)
	haveYear := true
	switch {
	case p.set[fYear]:
		y = p.val[fYear]
		if p.set[fYearOfEra] {
			yoe := p.val[fYearOfEra]
			if p.set[fEra] && p.val[fEra] == 0 {
				yoe = 1 - yoe
			}
			if yoe != y {
				return 0, 0, 0, fmt.Errorf("Conflict found: Year %d differs from YearOfEra %d", y, p.val[fYearOfEra])
			}
		}
	case p.set[fYearOfEra]:
		y = p.val[fYearOfEra]
		if p.set[fEra] && p.val[fEra] == 0 {
			y = 1 - y
		}
	default:
		haveYear = false
	}
	if p.set[fDayOfYear] && !p.set[fMonth] && !p.set[fDay] {
		if !haveYear && !lenient {
			return 0, 0, 0, fmt.Errorf("Unable to obtain LocalDate from TemporalAccessor")
		}
		leap := y%4 == 0 && (y%100 != 0 || y%400 == 0)
		if p.val[fDayOfYear] == 366 && !leap {
			return 0, 0, 0, fmt.Errorf("Invalid date 'DayOfYear 366' as '%d' is not a leap year", y)
		}
		t := time.Date(int(y), 1, int(p.val[fDayOfYear]), 0, 0, 0, 0, time.UTC)
		return p.checkWeekday(t.Year(), t.Month(), t.Day())
	}
	if !lenient && (!haveYear || !p.set[fMonth] || !p.set[fDay]) {
		return 0, 0, 0, fmt.Errorf("Unable to obtain LocalDate from TemporalAccessor")
	}
	m := int64(1)
	if p.set[fMonth] {
		m = p.val[fMonth]
	}
	if p.set[fQuarter] && (m-1)/3+1 != p.val[fQuarter] {
		return 0, 0, 0, fmt.Errorf("Conflict found: QuarterOfYear %d differs from MonthOfYear %d", p.val[fQuarter], m)
	}
	d := int64(1)
	if p.set[fDay] {
		d = p.val[fDay]
	}
	// Java's smart resolver moves a day past the month's end back to it.
	last := int64(time.Date(int(y), time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day())
	d = min(d, last)
	if p.set[fDayOfYear] {
		t := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
		if int64(t.YearDay()) != p.val[fDayOfYear] {
			return 0, 0, 0, fmt.Errorf("Conflict found: DayOfYear %d differs from date %s", p.val[fDayOfYear], t.Format("2006-01-02"))
		}
	}
	return p.checkWeekday(int(y), time.Month(m), int(d))
}

func (p *parsed) checkWeekday(y int, m time.Month, d int) (int, time.Month, int, error) {
	if !p.set[fDayOfWeek] {
		return y, m, d, nil
	}
	t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	got := int64((int(t.Weekday())+6)%7 + 1)
	if got == p.val[fDayOfWeek] {
		return y, m, d, nil
	}
	if p.set[fDay] || p.set[fDayOfYear] {
		return 0, 0, 0, fmt.Errorf("Conflict found: Field DayOfWeek %d differs from DayOfWeek %d derived from %s", got, p.val[fDayOfWeek], t.Format("2006-01-02"))
	}
	t = t.AddDate(0, 0, int(p.val[fDayOfWeek]-got))
	return t.Year(), t.Month(), t.Day(), nil
}

// clock resolves the time fields to nanoseconds of the day; ok is false
// when no hour was read.
func (p *parsed) clock() (nod int64, ok bool, err error) {
	if p.set[fNanoOfDay] {
		return p.val[fNanoOfDay], true, nil
	}
	if p.set[fMilliOfDay] {
		return p.val[fMilliOfDay] * 1e6, true, nil
	}
	var h int64
	switch {
	case p.set[fHour]:
		h, ok = p.val[fHour], true
	case p.set[fClockHourOfDay]:
		h, ok = p.val[fClockHourOfDay]%24, true
	case p.set[fHourOfAmPm] || p.set[fClockHourOfAmPm]:
		h, ok = p.val[fHourOfAmPm], true
		if p.set[fClockHourOfAmPm] {
			h = p.val[fClockHourOfAmPm] % 12
		}
		h += 12 * p.val[fAmPm]
	case p.set[fAmPm]:
		h = 12 * p.val[fAmPm]
	}
	if p.set[fHour] && p.set[fAmPm] && h/12 != p.val[fAmPm] {
		return 0, false, fmt.Errorf("Conflict found: Field AmPmOfDay %d differs from AmPmOfDay %d derived from %02d:00", h/12, p.val[fAmPm], h)
	}
	nod = ((h*60+p.val[fMinute])*60+p.val[fSecond])*1e9 + p.val[fNano]
	return nod, ok || p.set[fMinute] || p.set[fSecond] || p.set[fNano], nil
}

// ParseTimestamp parses s as ksqlDB parses timestamps: fields missing from
// the text default to 1970-01-01T00:00:00, and a zone or offset in the text
// overrides loc. A local time that falls in a daylight-saving gap moves
// forward by the gap; one in an overlap takes the earlier offset.
func (f *Format) ParseTimestamp(s string, loc *time.Location) (time.Time, error) {
	p, err := f.parse(s, false)
	if err != nil {
		return time.Time{}, err
	}
	y, m, d, err := p.date(true)
	if err != nil {
		return time.Time{}, &parseError{s, "could not be parsed: " + err.Error()}
	}
	nod, _, err := p.clock()
	if err != nil {
		return time.Time{}, &parseError{s, "could not be parsed: " + err.Error()}
	}
	local := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Add(time.Duration(nod))
	return resolveLocal(local, p.location(loc)), nil
}

// resolveLocal returns the instant at which the wall clock of loc shows
// local (given in UTC), as java.time.ZonedDateTime.of does.
func resolveLocal(local time.Time, loc *time.Location) time.Time {
	x := local.Unix()
	offAt := func(u int64) int64 {
		_, o := time.Unix(u, 0).In(loc).Zone()
		return int64(o)
	}
	early, late := offAt(x-86400), offAt(x+86400)
	valid := func(o int64) bool { return offAt(x-o) == o }
	var o int64
	switch {
	case valid(early):
		o = early
	case valid(late):
		o = late
	default:
		o = early
	}
	return time.Unix(x-o, int64(local.Nanosecond())).In(loc)
}

// ParseDate parses s as a date and returns its days since 1970-01-01. A
// time field in the pattern is an error. Lenient parsing defaults a missing
// month or day to 1 (and year to 1970) and ignores text after the pattern
// (as ksqlDB's PARSE_DATE does); strict parsing needs all the fields and
// all the text.
func (f *Format) ParseDate(s string, lenient bool) (int64, error) {
	p, err := f.parse(s, lenient)
	if err != nil {
		return 0, err
	}
	for i := fAmPm; i < fieldCount; i++ {
		if p.set[i] {
			return 0, fmt.Errorf("Date format contains time field.")
		}
	}
	y, m, d, err := p.date(lenient)
	if err != nil {
		return 0, &parseError{s, "could not be parsed: " + err.Error()}
	}
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400, nil
}

// ParseTime parses s as a time of day and returns its milliseconds since
// midnight. A date field in the pattern is an error.
func (f *Format) ParseTime(s string) (int64, error) {
	p, err := f.parse(s, false)
	if err != nil {
		return 0, err
	}
	for i := field(0); i < fieldCount; i++ {
		if p.set[i] && isDateField(i) {
			return 0, fmt.Errorf("Unsupported field: %s", fieldNames[i])
		}
	}
	nod, ok, err := p.clock()
	if err == nil && !ok {
		err = fmt.Errorf("Unable to obtain LocalTime from TemporalAccessor")
	}
	if err != nil {
		return 0, &parseError{s, "could not be parsed: " + err.Error()}
	}
	return nod / 1e6, nil
}
