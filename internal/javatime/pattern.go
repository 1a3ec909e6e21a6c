package javatime

import (
	"fmt"
	"strings"
	"sync"
)

type itemKind uint8

const (
	itemLiteral itemKind = iota
	itemField
	itemOptional
)

// item is one element of a compiled pattern: literal text, a field (a run
// of count copies of a pattern letter) or an optional section.
type item struct {
	kind   itemKind
	lit    string
	letter byte
	count  int
	sub    []item
	// reserve is, for a variable-width number, the digits taken by the
	// fixed-width numbers that directly follow it (adjacent value parsing:
	// yyyyMMdd reads the year from the first 4 of 8 digits).
	reserve int
}

// Format is a compiled pattern. It is immutable and safe for concurrent
// use.
type Format struct {
	pattern string
	items   []item
}

// String returns the pattern the Format was compiled from.
func (f *Format) String() string { return f.pattern }

// maxCount is the longest run of each supported letter.
var maxCount = map[byte]int{
	'G': 5, 'y': 19, 'u': 19, 'Q': 5, 'q': 5, 'M': 5, 'L': 5, 'D': 3, 'd': 2,
	'E': 5, 'a': 1, 'H': 2, 'k': 2, 'K': 2, 'h': 2, 'm': 2, 's': 2, 'S': 9,
	'n': 19, 'A': 19, 'N': 19, 'V': 2, 'z': 4, 'O': 4, 'X': 5, 'x': 5, 'Z': 5,
}

// knownLetters are letters of Java's pattern language; those without an
// entry in maxCount are recognized but not supported here.
const knownLetters = "GyuQqMLDdgEecFaBhKkHmsSAnNVvzOXxZWwYp"

// Parse compiles a DateTimeFormatter pattern.
func Parse(pattern string) (*Format, error) {
	items, rest, err := compile(pattern, 0, false)
	if err != nil {
		return nil, err
	}
	if rest != len(pattern) {
		return nil, fmt.Errorf("Pattern invalid as it contains ] without previous [")
	}
	setReserve(items)
	return &Format{pattern: pattern, items: items}, nil
}

// MustParse is Parse for patterns known to be valid; it panics otherwise.
func MustParse(pattern string) *Format {
	f, err := Parse(pattern)
	if err != nil {
		panic(err)
	}
	return f
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

func compile(p string, i int, inOptional bool) ([]item, int, error) {
	var items []item
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			items = append(items, item{kind: itemLiteral, lit: lit.String()})
			lit.Reset()
		}
	}
	for i < len(p) {
		c := p[i]
		switch {
		case isLetter(c):
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			if !strings.ContainsRune(knownLetters, rune(c)) {
				return nil, 0, fmt.Errorf("Unknown pattern letter: %c", c)
			}
			max, ok := maxCount[c]
			if !ok {
				return nil, 0, fmt.Errorf("Unsupported pattern letter: %c", c)
			}
			if n > max || c == 'V' && n != 2 {
				if c == 'V' {
					return nil, 0, fmt.Errorf("Pattern letter count must be 2: V")
				}
				return nil, 0, fmt.Errorf("Too many pattern letters: %c", c)
			}
			if (c == 'O' && n != 1 && n != 4) || (c == 'z' && n > 4) {
				return nil, 0, fmt.Errorf("Pattern letter count must be 1 or 4: %c", c)
			}
			flush()
			items = append(items, item{kind: itemField, letter: c, count: n})
			i += n
		case c == '\'':
			j := i + 1
			var q strings.Builder
			closed := false
			for j < len(p) {
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						q.WriteByte('\'')
						j += 2
						continue
					}
					closed = true
					break
				}
				q.WriteByte(p[j])
				j++
			}
			if !closed {
				return nil, 0, fmt.Errorf("Pattern ends with an incomplete string literal: %s", p)
			}
			if j == i+1 {
				lit.WriteByte('\'')
			} else {
				lit.WriteString(q.String())
			}
			i = j + 1
		case c == '[':
			flush()
			sub, next, err := compile(p, i+1, true)
			if err != nil {
				return nil, 0, err
			}
			items = append(items, item{kind: itemOptional, sub: sub})
			i = next
		case c == ']':
			if !inOptional {
				return nil, 0, fmt.Errorf("Pattern invalid as it contains ] without previous [")
			}
			flush()
			return items, i + 1, nil
		case c == '{' || c == '}' || c == '#':
			return nil, 0, fmt.Errorf("Pattern includes reserved character: '%c'", c)
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return items, i, nil
}

// numeric reports the digit widths a field item reads when parsed, and
// whether it is a number at all.
func (it *item) numeric() (min, max int, ok bool) {
	if it.kind != itemField {
		return 0, 0, false
	}
	n := it.count
	switch it.letter {
	case 'y', 'u':
		switch n {
		case 1:
			return 1, 19, true
		case 2:
			return 2, 2, true
		}
		return n, 19, true
	case 'M', 'L', 'Q', 'q':
		if n <= 2 {
			return n, 2, true
		}
	case 'd', 'H', 'k', 'K', 'h', 'm', 's':
		return n, 2, true
	case 'D':
		if n == 1 {
			return 1, 3, true
		}
		return n, 3, true
	case 'S':
		return n, n, true
	case 'n', 'A', 'N':
		return n, 19, true
	}
	return 0, 0, false
}

func setReserve(items []item) {
	for i := range items {
		if items[i].kind == itemOptional {
			setReserve(items[i].sub)
			continue
		}
		lo, hi, ok := items[i].numeric()
		if !ok || lo == hi {
			continue
		}
		r := 0
		for j := i + 1; j < len(items); j++ {
			a, b, ok := items[j].numeric()
			if !ok || a != b {
				break
			}
			r += a
		}
		items[i].reserve = r
	}
}

const cacheSize = 1000

var (
	cacheMu sync.Mutex
	cache   = map[string]cached{}
)

type cached struct {
	f   *Format
	err error
}

// Cached is Parse with a bounded cache, for patterns that vary per row.
func Cached(pattern string) (*Format, error) {
	cacheMu.Lock()
	c, ok := cache[pattern]
	cacheMu.Unlock()
	if ok {
		return c.f, c.err
	}
	f, err := Parse(pattern)
	cacheMu.Lock()
	if len(cache) >= cacheSize {
		clear(cache)
	}
	cache[pattern] = cached{f, err}
	cacheMu.Unlock()
	return f, err
}
