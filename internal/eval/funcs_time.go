package eval

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/internal/javatime"
	"github.com/sluice-sql/sluice/internal/types"
)

// Clock returns the current time for UNIX_DATE() and UNIX_TIMESTAMP().
// Tests may replace it.
var Clock = time.Now

const msPerDay = 86400000

// unitMillis maps the time units DATEADD and its kin take, by the plural
// name the binder gives them, to milliseconds.
var unitMillis = map[string]int64{
	"MILLISECONDS": 1, "SECONDS": 1000, "MINUTES": 60000, "HOURS": 3600000, "DAYS": msPerDay,
}

// overload is one signature of a date/time function: the argument kinds
// (an INTEGER is accepted for a BIGINT) and the result type.
type overload struct {
	args []types.Kind
	ret  *types.Type
}

func kindType(k types.Kind) *types.Type {
	switch k {
	case types.Int:
		return types.IntType
	case types.Bigint:
		return types.BigintType
	case types.Timestamp:
		return types.TimestampType
	case types.Date:
		return types.DateType
	case types.Time:
		return types.TimeType
	}
	return types.StringType
}

func (o overload) String() string {
	s := make([]string, len(o.args))
	for i, k := range o.args {
		s[i] = kindType(k).String()
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func (o overload) accepts(ts []*types.Type) bool {
	if len(ts) != len(o.args) {
		return false
	}
	for i, t := range ts {
		if t != nil && t.Kind != o.args[i] && !(o.args[i] == types.Bigint && t.Kind == types.Int) {
			return false
		}
	}
	return true
}

// timeFunc registers a date/time function whose overloads differ in their
// number of arguments; build returns the implementation for n arguments.
func timeFunc(name, desc string, ols []overload, build func(n int) Impl) *Func {
	lower := strings.ToLower(name)
	match := func(ts []*types.Type) (overload, bool) {
		for _, o := range ols {
			if o.accepts(ts) {
				return o, true
			}
		}
		return overload{}, false
	}
	return &Func{
		Name: name, Description: desc,
		Check: func(ts []*types.Type) (*types.Type, error) {
			o, ok := match(ts)
			if !ok {
				alts := make([]string, len(ols))
				for i, o := range ols {
					alts[i] = lower + o.String()
				}
				return nil, fmt.Errorf("Function '%s' does not accept parameters %s. Valid alternatives are: %s",
					lower, typeList(ts), strings.Join(alts, ", "))
			}
			return o.ret, nil
		},
		Coerce: func(ts []*types.Type, i int, _ *types.Type) *types.Type {
			o, ok := match(ts)
			if !ok {
				return nil
			}
			if ts[i] == nil || ts[i].Kind != o.args[i] {
				return kindType(o.args[i])
			}
			return nil
		},
		Build: func(ts []*types.Type, _ *types.Type) (Impl, error) {
			return build(len(ts)), nil
		},
	}
}

func sigs(ret *types.Type, args ...types.Kind) overload { return overload{args: args, ret: ret} }

// patterns compiles date-time patterns for one call site: a pattern that
// stays the same from row to row, such as a literal, is compiled once.
type patterns struct {
	last atomic.Pointer[compiledPattern]
}

type compiledPattern struct {
	text string
	f    *javatime.Format
	err  error
}

func (p *patterns) get(s string) (*javatime.Format, error) {
	if c := p.last.Load(); c != nil && c.text == s {
		return c.f, c.err
	}
	f, err := javatime.Cached(s)
	p.last.Store(&compiledPattern{s, f, err})
	return f, err
}

func loadZone(id string) (*time.Location, error) {
	l, err := javatime.LoadZone(id)
	if err != nil {
		return nil, fmt.Errorf("Invalid time zone: %v", err)
	}
	return l, nil
}

// zoneArg returns the zone in argument i of a, or UTC when there is none.
func zoneArg(a []any, i int) (*time.Location, error) {
	if len(a) <= i {
		return javatime.UTC, nil
	}
	return loadZone(a[i].(string))
}

func formatTimestamp(p *patterns, ms int64, a []any) (any, error) {
	pattern := a[1].(string)
	f, err := p.get(pattern)
	if err != nil {
		return nil, fmt.Errorf("Failed to format timestamp %d with formatter '%s': %v", ms, pattern, err)
	}
	loc, err := zoneArg(a, 2)
	if err != nil {
		return nil, err
	}
	return f.Format(time.UnixMilli(ms).In(loc)), nil
}

func parseTimestamp(p *patterns, a []any) (int64, error) {
	text, pattern := a[0].(string), a[1].(string)
	f, err := p.get(pattern)
	if err == nil {
		var loc *time.Location
		if loc, err = zoneArg(a, 2); err != nil {
			return 0, err
		}
		var t time.Time
		if t, err = f.ParseTimestamp(text, loc); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("Failed to parse timestamp '%s' with formatter '%s': %v", text, pattern, err)
}

func formatDate(p *patterns, days int64, pattern string) (any, error) {
	f, err := p.get(pattern)
	var s string
	if err == nil {
		if s, err = f.FormatDate(days); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("Failed to format date %s with formatter '%s': %v", types.FormatDate(types.DateValue(days)), pattern, err)
}

func parseDate(p *patterns, text, pattern string, lenient bool) (int64, error) {
	f, err := p.get(pattern)
	var d int64
	if err == nil {
		if d, err = f.ParseDate(text, lenient); err == nil {
			return d, nil
		}
	}
	return 0, fmt.Errorf("Failed to parse date '%s' with formatter '%s': %v", text, pattern, err)
}

// shift registers one of DATEADD, DATESUB, TIMEADD, TIMESUB, TIMESTAMPADD
// and TIMESTAMPSUB: unit, interval, then the value of kind k.
func shift(name, desc string, k types.Kind, sign int64, apply func(v any, ms int64) any) *Func {
	f := timeFunc(name, desc, []overload{sigs(kindType(k), types.String, types.Int, k)}, func(int) Impl {
		return Strict(func(a []any) (any, error) {
			u, ok := unitMillis[a[0].(string)]
			if !ok {
				return nil, fmt.Errorf("unknown time unit %s", a[0])
			}
			return apply(a[2], sign*int64(a[1].(int32))*u), nil
		})
	})
	f.UnitArgs = []int{0}
	return f
}

func addDays(v any, ms int64) any { return types.DateValue(int64(v.(types.DateValue)) + ms/msPerDay) }

func addTime(v any, ms int64) any {
	t := (int64(v.(types.TimeValue)) + ms%msPerDay) % msPerDay
	if t < 0 {
		t += msPerDay
	}
	return types.TimeValue(t)
}

func addTimestamp(v any, ms int64) any {
	return types.TimestampValue(int64(v.(types.TimestampValue)) + ms)
}

func init() {
	var (
		S, I, B   = types.String, types.Int, types.Bigint
		TS, D, TM = types.Timestamp, types.Date, types.Time
	)
	Register(timeFunc("UNIX_DATE", "UNIX_DATE([date]): days since 1970-01-01 of a DATE, or of today (UTC) without argument.",
		[]overload{sigs(types.IntType), sigs(types.IntType, D)}, func(n int) Impl {
			if n == 0 {
				return func([]any, []ArgFunc) (any, error) {
					return int32(Clock().UTC().Unix() / 86400), nil
				}
			}
			return Strict1(func(a any) (any, error) { return int32(a.(types.DateValue)), nil })
		}))
	Register(timeFunc("UNIX_TIMESTAMP", "UNIX_TIMESTAMP([ts]): milliseconds since the epoch of a TIMESTAMP, or of now without argument.",
		[]overload{sigs(types.BigintType), sigs(types.BigintType, TS)}, func(n int) Impl {
			if n == 0 {
				return func([]any, []ArgFunc) (any, error) { return Clock().UnixMilli(), nil }
			}
			return Strict1(func(a any) (any, error) { return int64(a.(types.TimestampValue)), nil })
		}))
	Register(timeFunc("FROM_UNIXTIME", "FROM_UNIXTIME(ms): the TIMESTAMP ms milliseconds after the epoch.",
		[]overload{sigs(types.TimestampType, B)}, func(int) Impl {
			return Strict1(func(a any) (any, error) { return types.TimestampValue(a.(int64)), nil })
		}))
	Register(timeFunc("FROM_DAYS", "FROM_DAYS(days): the DATE days after 1970-01-01.",
		[]overload{sigs(types.DateType, I)}, func(int) Impl {
			return Strict1(func(a any) (any, error) { return types.DateValue(a.(int32)), nil })
		}))
	Register(timeFunc("DATETOSTRING", "DATETOSTRING(days, format): formats days since 1970-01-01 with a java.time pattern.",
		[]overload{sigs(types.StringType, I, S)}, func(int) Impl {
			p := &patterns{}
			return Strict(func(a []any) (any, error) { return formatDate(p, int64(a[0].(int32)), a[1].(string)) })
		}))
	Register(timeFunc("STRINGTODATE", "STRINGTODATE(s, format): parses a date with a java.time pattern into days since 1970-01-01.",
		[]overload{sigs(types.IntType, S, S)}, func(int) Impl {
			p := &patterns{}
			return Strict(func(a []any) (any, error) {
				d, err := parseDate(p, a[0].(string), a[1].(string), false)
				if err != nil {
					return nil, err
				}
				return int32(d), nil
			})
		}))
	Register(timeFunc("FORMAT_DATE", "FORMAT_DATE(date, format): formats a DATE with a java.time pattern.",
		[]overload{sigs(types.StringType, D, S)}, func(int) Impl {
			p := &patterns{}
			return Strict(func(a []any) (any, error) {
				return formatDate(p, int64(a[0].(types.DateValue)), a[1].(string))
			})
		}))
	Register(timeFunc("PARSE_DATE", "PARSE_DATE(s, format): parses a DATE with a java.time pattern.",
		[]overload{sigs(types.DateType, S, S)}, func(int) Impl {
			p := &patterns{}
			return Strict(func(a []any) (any, error) {
				d, err := parseDate(p, a[0].(string), a[1].(string), true)
				if err != nil {
					return nil, err
				}
				return types.DateValue(d), nil
			})
		}))
	Register(timeFunc("FORMAT_TIME", "FORMAT_TIME(time, format): formats a TIME with a java.time pattern.",
		[]overload{sigs(types.StringType, TM, S)}, func(int) Impl {
			p := &patterns{}
			return Strict(func(a []any) (any, error) {
				t, pattern := a[0].(types.TimeValue), a[1].(string)
				f, err := p.get(pattern)
				var s string
				if err == nil {
					if s, err = f.FormatTime(int64(t)); err == nil {
						return s, nil
					}
				}
				return nil, fmt.Errorf("Failed to format time %s with formatter '%s': %v", types.FormatTime(t), pattern, err)
			})
		}))
	Register(timeFunc("PARSE_TIME", "PARSE_TIME(s, format): parses a TIME with a java.time pattern.",
		[]overload{sigs(types.TimeType, S, S)}, func(int) Impl {
			p := &patterns{}
			return Strict(func(a []any) (any, error) {
				text, pattern := a[0].(string), a[1].(string)
				f, err := p.get(pattern)
				var ms int64
				if err == nil {
					if ms, err = f.ParseTime(text); err == nil {
						return types.TimeValue(ms), nil
					}
				}
				return nil, fmt.Errorf("Failed to parse time '%s' with formatter '%s': %v", text, pattern, err)
			})
		}))
	Register(timeFunc("TIMESTAMPTOSTRING", "TIMESTAMPTOSTRING(ms, format[, zone]): formats milliseconds since the epoch with a java.time pattern, in UTC or the zone.",
		[]overload{sigs(types.StringType, B, S), sigs(types.StringType, B, S, S)}, func(int) Impl {
			p := &patterns{}
			return Strict(func(a []any) (any, error) { return formatTimestamp(p, a[0].(int64), a) })
		}))
	Register(timeFunc("STRINGTOTIMESTAMP", "STRINGTOTIMESTAMP(s, format[, zone]): parses a timestamp with a java.time pattern into milliseconds since the epoch.",
		[]overload{sigs(types.BigintType, S, S), sigs(types.BigintType, S, S, S)}, func(int) Impl {
			p := &patterns{}
			return Strict(func(a []any) (any, error) {
				ms, err := parseTimestamp(p, a)
				if err != nil {
					return nil, err
				}
				return ms, nil
			})
		}))
	Register(timeFunc("FORMAT_TIMESTAMP", "FORMAT_TIMESTAMP(ts, format[, zone]): formats a TIMESTAMP with a java.time pattern, in UTC or the zone.",
		[]overload{sigs(types.StringType, TS, S), sigs(types.StringType, TS, S, S)}, func(int) Impl {
			p := &patterns{}
			return Strict(func(a []any) (any, error) { return formatTimestamp(p, int64(a[0].(types.TimestampValue)), a) })
		}))
	Register(timeFunc("PARSE_TIMESTAMP", "PARSE_TIMESTAMP(s, format[, zone]): parses a TIMESTAMP with a java.time pattern, in UTC or the zone.",
		[]overload{sigs(types.TimestampType, S, S), sigs(types.TimestampType, S, S, S)}, func(int) Impl {
			p := &patterns{}
			return Strict(func(a []any) (any, error) {
				ms, err := parseTimestamp(p, a)
				if err != nil {
					return nil, err
				}
				return types.TimestampValue(ms), nil
			})
		}))
	Register(timeFunc("CONVERT_TZ", "CONVERT_TZ(ts, from_zone, to_zone): shifts a TIMESTAMP by the difference of the zones' offsets.",
		[]overload{sigs(types.TimestampType, TS, S, S)}, func(int) Impl {
			return Strict(func(a []any) (any, error) {
				ms := int64(a[0].(types.TimestampValue))
				from, err := loadZone(a[1].(string))
				if err != nil {
					return nil, err
				}
				to, err := loadZone(a[2].(string))
				if err != nil {
					return nil, err
				}
				t := time.UnixMilli(ms)
				_, fo := t.In(from).Zone()
				_, tof := t.In(to).Zone()
				return types.TimestampValue(ms + int64(tof-fo)*1000), nil
			})
		}))
	Register(shift("DATEADD", "DATEADD(unit, n, date): adds n units, in whole days, to a DATE.", D, 1, addDays))
	Register(shift("DATESUB", "DATESUB(unit, n, date): subtracts n units, in whole days, from a DATE.", D, -1, addDays))
	Register(shift("TIMEADD", "TIMEADD(unit, n, time): adds n units to a TIME, wrapping around midnight.", TM, 1, addTime))
	Register(shift("TIMESUB", "TIMESUB(unit, n, time): subtracts n units from a TIME, wrapping around midnight.", TM, -1, addTime))
	Register(shift("TIMESTAMPADD", "TIMESTAMPADD(unit, n, ts): adds n units to a TIMESTAMP.", TS, 1, addTimestamp))
	Register(shift("TIMESTAMPSUB", "TIMESTAMPSUB(unit, n, ts): subtracts n units from a TIMESTAMP.", TS, -1, addTimestamp))
}
