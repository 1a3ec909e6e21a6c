package javatime

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // zones do not depend on the host's tz database
)

var zones sync.Map // zone ID → *time.Location

// UTC is the zone ksqlDB uses when a function is given none.
var UTC = time.UTC

// LoadZone resolves a zone ID as java.time.ZoneId.of does: "Z", an offset
// (+h, +hh, +hh:mm, +hhmm, +hh:mm:ss, +hhmmss), UTC, GMT or UT optionally
// followed by an offset, or a region ID of the tz database such as
// America/Los_Angeles.
func LoadZone(id string) (*time.Location, error) {
	if l, ok := zones.Load(id); ok {
		return l.(*time.Location), nil
	}
	l, err := loadZone(id)
	if err != nil {
		return nil, err
	}
	zones.Store(id, l)
	return l, nil
}

func loadZone(id string) (*time.Location, error) {
	if id == "Z" {
		return time.FixedZone("Z", 0), nil
	}
	if strings.HasPrefix(id, "+") || strings.HasPrefix(id, "-") {
		off, n, ok := parseOffsetText(id, true)
		if !ok || n != len(id) {
			return nil, fmt.Errorf("Invalid ID for ZoneOffset, invalid format: %s", id)
		}
		return offsetZone(off), nil
	}
	for _, p := range []string{"UTC", "GMT", "UT"} {
		if id == p {
			return time.FixedZone(id, 0), nil
		}
		if strings.HasPrefix(id, p) && len(id) > len(p) && (id[len(p)] == '+' || id[len(p)] == '-') {
			off, n, ok := parseOffsetText(id[len(p):], true)
			if !ok || n != len(id)-len(p) {
				return nil, fmt.Errorf("Invalid ID for offset-based ZoneId: %s", id)
			}
			if off == 0 {
				return time.FixedZone(p, 0), nil
			}
			return time.FixedZone(p+offsetID(off), off), nil
		}
	}
	if !validRegion(id) {
		return nil, fmt.Errorf("Invalid ID for region-based ZoneId, invalid format: %s", id)
	}
	l, err := time.LoadLocation(id)
	if err != nil {
		return nil, fmt.Errorf("Unknown time-zone ID: %s", id)
	}
	return l, nil
}

func validRegion(id string) bool {
	if len(id) < 2 || id == "Local" || !isLetter(id[0]) {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && !strings.ContainsRune("~/._+-", rune(c)) {
			return false
		}
	}
	return true
}

// offsetZone returns a fixed zone named as Java names a ZoneOffset.
func offsetZone(off int) *time.Location {
	if off == 0 {
		return time.FixedZone("Z", 0)
	}
	return time.FixedZone(offsetID(off), off)
}

// offsetID writes an offset as ZoneOffset.getId does: +05:00, -03:30:15.
func offsetID(off int) string {
	if off == 0 {
		return "Z"
	}
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	s := fmt.Sprintf("%c%02d:%02d", sign, off/3600, off/60%60)
	if off%60 != 0 {
		s += fmt.Sprintf(":%02d", off%60)
	}
	return s
}

// parseOffsetText reads an offset at the start of s: a sign, then hours
// (one or two digits when lenientHour, else two), then optionally minutes
// and seconds, with or without colons. It returns the offset in seconds
// and the bytes read.
func parseOffsetText(s string, lenientHour bool) (int, int, bool) {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return 0, 0, false
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	i := 1
	d := digitsAt(s, i, 2)
	if d == 0 || d == 1 && !lenientHour {
		return 0, 0, false
	}
	h, _ := strconv.Atoi(s[i : i+d])
	i += d
	var parts [2]int
	for k := 0; k < 2; k++ {
		j := i
		colon := j < len(s) && s[j] == ':'
		if colon {
			j++
		}
		if digitsAt(s, j, 2) != 2 {
			break
		}
		parts[k], _ = strconv.Atoi(s[j : j+2])
		i = j + 2
	}
	if h > 18 || parts[0] > 59 || parts[1] > 59 {
		return 0, 0, false
	}
	return sign * (h*3600 + parts[0]*60 + parts[1]), i, true
}

func digitsAt(s string, i, max int) int {
	n := 0
	for i+n < len(s) && n < max && s[i+n] >= '0' && s[i+n] <= '9' {
		n++
	}
	return n
}

// zoneNames maps a zone ID to its English standard and daylight names,
// short and long, for the zones whose names Java knows best. Other zones
// use the tz database abbreviation, or GMT±hh:mm when it has none.
var zoneNames = map[string][4]string{
	"America/Los_Angeles": {"PST", "PDT", "Pacific Standard Time", "Pacific Daylight Time"},
	"America/Denver":      {"MST", "MDT", "Mountain Standard Time", "Mountain Daylight Time"},
	"America/Phoenix":     {"MST", "MDT", "Mountain Standard Time", "Mountain Daylight Time"},
	"America/Chicago":     {"CST", "CDT", "Central Standard Time", "Central Daylight Time"},
	"America/New_York":    {"EST", "EDT", "Eastern Standard Time", "Eastern Daylight Time"},
	"America/Anchorage":   {"AKST", "AKDT", "Alaska Standard Time", "Alaska Daylight Time"},
	"Pacific/Honolulu":    {"HST", "HDT", "Hawaii-Aleutian Standard Time", "Hawaii-Aleutian Daylight Time"},
	"Europe/London":       {"GMT", "BST", "Greenwich Mean Time", "British Summer Time"},
	"Europe/Dublin":       {"GMT", "IST", "Greenwich Mean Time", "Irish Standard Time"},
	"Europe/Lisbon":       {"WET", "WEST", "Western European Standard Time", "Western European Summer Time"},
	"Europe/Paris":        {"CET", "CEST", "Central European Standard Time", "Central European Summer Time"},
	"Europe/Berlin":       {"CET", "CEST", "Central European Standard Time", "Central European Summer Time"},
	"Europe/Bucharest":    {"EET", "EEST", "Eastern European Standard Time", "Eastern European Summer Time"},
	"Europe/Moscow":       {"MSK", "MSK", "Moscow Standard Time", "Moscow Summer Time"},
	"Asia/Kolkata":        {"IST", "IST", "India Standard Time", "India Standard Time"},
	"Asia/Tokyo":          {"JST", "JDT", "Japan Standard Time", "Japan Daylight Time"},
	"Asia/Seoul":          {"KST", "KDT", "Korean Standard Time", "Korean Daylight Time"},
	"Asia/Shanghai":       {"CST", "CDT", "China Standard Time", "China Daylight Time"},
	"Asia/Singapore":      {"SGT", "SGT", "Singapore Standard Time", "Singapore Standard Time"},
	"Asia/Hong_Kong":      {"HKT", "HKST", "Hong Kong Standard Time", "Hong Kong Summer Time"},
	"Australia/Sydney":    {"AEST", "AEDT", "Australian Eastern Standard Time", "Australian Eastern Daylight Time"},
	"Australia/Adelaide":  {"ACST", "ACDT", "Australian Central Standard Time", "Australian Central Daylight Time"},
	"Australia/Perth":     {"AWST", "AWDT", "Australian Western Standard Time", "Australian Western Daylight Time"},
	"Pacific/Auckland":    {"NZST", "NZDT", "New Zealand Standard Time", "New Zealand Daylight Time"},
	"UTC":                 {"UTC", "UTC", "Coordinated Universal Time", "Coordinated Universal Time"},
	"Etc/UTC":             {"UTC", "UTC", "Coordinated Universal Time", "Coordinated Universal Time"},
	"GMT":                 {"GMT", "GMT", "Greenwich Mean Time", "Greenwich Mean Time"},
	"Etc/GMT":             {"GMT", "GMT", "Greenwich Mean Time", "Greenwich Mean Time"},
}

// nameZones maps a zone name, upper-cased, to the zone ID Java resolves it
// to when parsing.
var nameZones = func() map[string]string {
	m := map[string]string{}
	// Preferred zones first: the first ID to claim a name keeps it.
	for _, id := range []string{
		"America/Los_Angeles", "America/Denver", "America/Chicago", "America/New_York",
		"America/Anchorage", "Pacific/Honolulu", "UTC", "GMT", "Europe/London",
		"Europe/Paris", "Europe/Bucharest", "Europe/Lisbon", "Europe/Moscow", "Asia/Kolkata",
		"Asia/Tokyo", "Asia/Seoul", "Asia/Singapore", "Asia/Hong_Kong", "Australia/Sydney",
		"Australia/Adelaide", "Australia/Perth", "Pacific/Auckland", "Europe/Dublin",
		"Asia/Shanghai",
	} {
		for _, n := range zoneNames[id] {
			if _, ok := m[strings.ToUpper(n)]; !ok {
				m[strings.ToUpper(n)] = id
			}
		}
	}
	return m
}()

// zoneName returns the name Java's z (long: zzzz) prints for t's zone.
func zoneName(t time.Time, long bool) string {
	loc := t.Location()
	id := loc.String()
	abbr, off := t.Zone()
	if fixedID(id) {
		return id
	}
	if n, ok := zoneNames[id]; ok {
		k := 0
		if t.IsDST() {
			k = 1
		}
		if long {
			k += 2
		}
		return n[k]
	}
	if long || abbr == "" || abbr[0] == '+' || abbr[0] == '-' {
		return "GMT" + offsetID(off)
	}
	return abbr
}

// fixedID reports whether id names an offset zone, printed as its ID.
func fixedID(id string) bool {
	return id == "Z" || strings.HasPrefix(id, "+") || strings.HasPrefix(id, "-") ||
		(len(id) > 3 && (strings.HasPrefix(id, "UTC") || strings.HasPrefix(id, "GMT")) && (id[3] == '+' || id[3] == '-')) ||
		(len(id) > 2 && strings.HasPrefix(id, "UT") && (id[2] == '+' || id[2] == '-'))
}

// parseZoneText reads a zone name or ID at the start of s, preferring the
// longest match, and returns its zone and the bytes read.
func parseZoneText(s string, names bool) (*time.Location, int, bool) {
	for _, p := range []string{"UTC", "GMT", "UT"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			if off, n, ok := parseOffsetText(s[len(p):], true); ok {
				return time.FixedZone(p+offsetID(off), off), len(p) + n, true
			}
		}
	}
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		if off, n, ok := parseOffsetText(s, true); ok {
			return offsetZone(off), n, true
		}
		return nil, 0, false
	}
	end := 0
	for end < len(s) && (isLetter(s[end]) || s[end] >= '0' && s[end] <= '9' || strings.ContainsRune("~/._+- ", rune(s[end]))) {
		end++
	}
	for n := end; n > 0; n-- {
		cand := s[:n]
		if names {
			if id, ok := nameZones[strings.ToUpper(cand)]; ok {
				l, err := LoadZone(id)
				if err == nil {
					return l, n, true
				}
			}
		}
		if strings.ContainsRune(cand, ' ') {
			continue
		}
		if cand == "Z" || strings.EqualFold(cand, "UTC") || strings.EqualFold(cand, "GMT") || cand == "UT" {
			l, _ := LoadZone(strings.ToUpper(cand))
			return l, n, true
		}
		if validRegion(cand) && strings.ContainsRune(cand, '/') {
			if l, err := LoadZone(cand); err == nil {
				return l, n, true
			}
		}
	}
	return nil, 0, false
}
