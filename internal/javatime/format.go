package javatime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// What a formatted value carries; a field outside it fails as in Java
// (a LocalDate has no hour), unless it sits in an optional section, which
// is then left out.
const (
	hasDate = 1 << iota
	hasTime
	hasZone
)

var (
	monthsLong  = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	monthsShort = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	daysLong    = [...]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	daysShort   = [...]string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
	quarters    = [...]string{"1st quarter", "2nd quarter", "3rd quarter", "4th quarter"}
)

// javaField names the java.time field of a letter, for error messages.
var javaField = map[byte]string{
	'G': "Era", 'y': "YearOfEra", 'u': "Year", 'Q': "QuarterOfYear", 'q': "QuarterOfYear",
	'M': "MonthOfYear", 'L': "MonthOfYear", 'D': "DayOfYear", 'd': "DayOfMonth", 'E': "DayOfWeek",
	'a': "AmPmOfDay", 'H': "HourOfDay", 'k': "ClockHourOfDay", 'K': "HourOfAmPm", 'h': "ClockHourOfAmPm",
	'm': "MinuteOfHour", 's': "SecondOfMinute", 'S': "NanoOfSecond", 'n': "NanoOfSecond",
	'A': "MilliOfDay", 'N': "NanoOfDay", 'O': "OffsetSeconds", 'X': "OffsetSeconds",
	'x': "OffsetSeconds", 'Z': "OffsetSeconds",
}

func needs(letter byte) int {
	switch letter {
	case 'G', 'y', 'u', 'Q', 'q', 'M', 'L', 'D', 'd', 'E':
		return hasDate
	case 'V', 'z', 'O', 'X', 'x', 'Z':
		return hasZone
	}
	return hasTime
}

// Format writes t, in its location, with the pattern.
func (f *Format) Format(t time.Time) string {
	var b strings.Builder
	f.write(&b, f.items, t, hasDate|hasTime|hasZone)
	return b.String()
}

// FormatDate writes the date days after 1970-01-01, as Java formats a
// LocalDate: a time or zone field is an error.
func (f *Format) FormatDate(days int64) (string, error) {
	var b strings.Builder
	t := time.Unix(days*86400, 0).UTC()
	if err := f.write(&b, f.items, t, hasDate); err != nil {
		return "", err
	}
	return b.String(), nil
}

// FormatTime writes the time of day ms milliseconds after midnight, as
// Java formats a LocalTime: a date or zone field is an error.
func (f *Format) FormatTime(ms int64) (string, error) {
	var b strings.Builder
	t := time.UnixMilli(ms).UTC()
	if err := f.write(&b, f.items, t, hasTime); err != nil {
		return "", err
	}
	return b.String(), nil
}

func unsupported(it item, t time.Time, have int) error {
	if needs(it.letter) == hasZone && (it.letter == 'V' || it.letter == 'z') {
		var s string
		if have&hasDate != 0 {
			s = t.Format("2006-01-02")
		} else {
			s = t.Format("15:04")
		}
		return fmt.Errorf("Unable to extract ZoneId from temporal %s", s)
	}
	return fmt.Errorf("Unsupported field: %s", javaField[it.letter])
}

func available(items []item, have int) bool {
	for _, it := range items {
		switch it.kind {
		case itemField:
			if needs(it.letter)&have == 0 {
				return false
			}
		case itemOptional:
			if !available(it.sub, have) {
				return false
			}
		}
	}
	return true
}

func (f *Format) write(b *strings.Builder, items []item, t time.Time, have int) error {
	for _, it := range items {
		switch it.kind {
		case itemLiteral:
			b.WriteString(it.lit)
		case itemOptional:
			if available(it.sub, have) {
				if err := f.write(b, it.sub, t, have); err != nil {
					return err
				}
			}
		case itemField:
			if needs(it.letter)&have == 0 {
				return unsupported(it, t, have)
			}
			writeField(b, it, t)
		}
	}
	return nil
}

func pad(b *strings.Builder, v int64, width int) {
	s := strconv.FormatInt(v, 10)
	neg := v < 0
	if neg {
		b.WriteByte('-')
		s = s[1:]
	}
	for i := len(s); i < width; i++ {
		b.WriteByte('0')
	}
	b.WriteString(s)
}

// year writes a year as Java's appendValue(field, n, 19, EXCEEDS_PAD):
// padded to n digits, with a + when it has more than n digits (n >= 4).
func year(b *strings.Builder, y int64, n int) {
	if n >= 4 && y >= 0 && len(strconv.FormatInt(y, 10)) > n {
		b.WriteByte('+')
	}
	pad(b, y, n)
}

func writeField(b *strings.Builder, it item, t time.Time) {
	n := it.count
	y := int64(t.Year())
	switch it.letter {
	case 'G':
		ad := y > 0
		switch {
		case n == 4:
			b.WriteString(map[bool]string{true: "Anno Domini", false: "Before Christ"}[ad])
		case n == 5:
			b.WriteString(map[bool]string{true: "A", false: "B"}[ad])
		default:
			b.WriteString(map[bool]string{true: "AD", false: "BC"}[ad])
		}
	case 'y', 'u':
		if it.letter == 'y' && y <= 0 {
			y = 1 - y
		}
		switch n {
		case 1:
			pad(b, y, 1)
		case 2:
			pad(b, ((y%100)+100)%100, 2)
		case 3:
			pad(b, y, 3)
		default:
			year(b, y, n)
		}
	case 'Q', 'q':
		q := (int(t.Month()) - 1) / 3
		switch n {
		case 1, 2:
			pad(b, int64(q+1), n)
		case 3:
			b.WriteString("Q" + strconv.Itoa(q+1))
		case 4:
			b.WriteString(quarters[q])
		default:
			b.WriteString(strconv.Itoa(q + 1))
		}
	case 'M', 'L':
		m := int(t.Month()) - 1
		switch n {
		case 1, 2:
			pad(b, int64(m+1), n)
		case 3:
			b.WriteString(monthsShort[m])
		case 4:
			b.WriteString(monthsLong[m])
		default:
			b.WriteString(monthsLong[m][:1])
		}
	case 'D':
		pad(b, int64(t.YearDay()), n)
	case 'd':
		pad(b, int64(t.Day()), n)
	case 'E':
		d := (int(t.Weekday()) + 6) % 7
		switch n {
		case 4:
			b.WriteString(daysLong[d])
		case 5:
			b.WriteString(daysLong[d][:1])
		default:
			b.WriteString(daysShort[d])
		}
	case 'a':
		if t.Hour() < 12 {
			b.WriteString("AM")
		} else {
			b.WriteString("PM")
		}
	case 'H':
		pad(b, int64(t.Hour()), n)
	case 'k':
		h := t.Hour()
		if h == 0 {
			h = 24
		}
		pad(b, int64(h), n)
	case 'K':
		pad(b, int64(t.Hour()%12), n)
	case 'h':
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		pad(b, int64(h), n)
	case 'm':
		pad(b, int64(t.Minute()), n)
	case 's':
		pad(b, int64(t.Second()), n)
	case 'S':
		s := fmt.Sprintf("%09d", t.Nanosecond())
		b.WriteString(s[:n])
	case 'n':
		pad(b, int64(t.Nanosecond()), n)
	case 'A', 'N':
		h, m, s := t.Clock()
		nod := (int64(h)*3600+int64(m)*60+int64(s))*1e9 + int64(t.Nanosecond())
		if it.letter == 'A' {
			nod /= 1e6
		}
		pad(b, nod, n)
	case 'V':
		b.WriteString(t.Location().String())
	case 'z':
		b.WriteString(zoneName(t, n == 4))
	case 'O':
		_, off := t.Zone()
		writeLocalizedOffset(b, off, n == 4)
	case 'X', 'x', 'Z':
		_, off := t.Zone()
		writeOffset(b, it.letter, n, off)
	}
}

// writeLocalizedOffset writes GMT+8 (short) or GMT+08:00 (long); GMT for
// zero.
func writeLocalizedOffset(b *strings.Builder, off int, long bool) {
	b.WriteString("GMT")
	if off == 0 {
		return
	}
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	b.WriteByte(sign)
	h, m, s := off/3600, off/60%60, off%60
	if long {
		fmt.Fprintf(b, "%02d:%02d", h, m)
		if s != 0 {
			fmt.Fprintf(b, ":%02d", s)
		}
		return
	}
	b.WriteString(strconv.Itoa(h))
	if m != 0 || s != 0 {
		fmt.Fprintf(b, ":%02d", m)
		if s != 0 {
			fmt.Fprintf(b, ":%02d", s)
		}
	}
}

// writeOffset writes an offset for X, x and Z as Java's appendOffset with
// the pattern and no-offset text each count stands for.
func writeOffset(b *strings.Builder, letter byte, n int, off int) {
	if off == 0 {
		switch {
		case letter == 'X' || letter == 'Z' && n == 5:
			b.WriteString("Z")
			return
		case letter == 'Z' && n == 4:
			b.WriteString("GMT")
			return
		}
	}
	if letter == 'Z' && n == 4 {
		writeLocalizedOffset(b, off, true)
		return
	}
	sign := byte('+')
	a := off
	if a < 0 {
		sign, a = '-', -a
	}
	h, m, s := a/3600, a/60%60, a%60
	// kind: 0 +HHmm (minutes when non-zero), 1 +HHMM, 2 +HH:MM,
	// 3 +HHMMss, 4 +HH:MM:ss.
	kind := n - 1
	if letter == 'Z' {
		kind = 1
		if n == 5 {
			kind = 4
		}
	}
	b.WriteByte(sign)
	fmt.Fprintf(b, "%02d", h)
	colon := kind == 2 || kind == 4
	if kind == 0 && m == 0 && s == 0 {
		return
	}
	if colon {
		b.WriteByte(':')
	}
	fmt.Fprintf(b, "%02d", m)
	if (kind == 3 || kind == 4) && s != 0 {
		if colon {
			b.WriteByte(':')
		}
		fmt.Fprintf(b, "%02d", s)
	}
}
