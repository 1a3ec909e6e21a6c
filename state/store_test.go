package state

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestPebbleLoggerAdapter(t *testing.T) {
	var buf bytes.Buffer
	l := pebbleLogger{l: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	l.Infof("quiet %d", 1)
	l.Errorf("loud %d", 2)
	if out := buf.String(); strings.Contains(out, "quiet") || !strings.Contains(out, "loud 2") {
		t.Fatalf("log output = %q", out)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Fatalf did not panic")
		}
	}()
	l.Fatalf("boom")
}

func TestOpenWithLogger(t *testing.T) {
	var buf bytes.Buffer
	s, err := Open(t.TempDir(), Options{Logger: slog.New(slog.NewTextHandler(&buf, nil)), BloomBitsPerKey: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Restore("q", 0, "t", []Entry{{Key: []byte("k"), Value: []byte("v")}}, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("pebble logged at Info or above: %s", buf.String())
	}
}

func TestCloseWhileReading(t *testing.T) {
	s := openT(t, t.TempDir())
	if err := s.Restore("q", 0, "t", []Entry{{Key: []byte("k"), Value: []byte("v")}}, 1); err != nil {
		t.Fatal(err)
	}
	tb := s.Table("q", 0, "t")
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for {
				v, ok, err := tb.Get([]byte("k"))
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil || !ok || string(v) != "v" {
					t.Errorf("Get = %q %v %v", v, ok, err)
					return
				}
			}
		}()
	}
	close(start)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

func TestPrefixEnd(t *testing.T) {
	cases := []struct{ in, want []byte }{
		{[]byte("ab"), []byte("ac")},
		{[]byte{'a', 0xff}, []byte{'b'}},
		{[]byte{0xff, 0xff}, nil},
	}
	for _, c := range cases {
		if got := prefixEnd(c.in); !bytes.Equal(got, c.want) {
			t.Errorf("prefixEnd(%x) = %x, want %x", c.in, got, c.want)
		}
	}
	// No table prefix is a prefix of another table's, whatever the names.
	a, b := tablePrefix("q", 0, "a"), tablePrefix("q", 0, "a/b")
	if bytes.HasPrefix(b, a) || bytes.HasPrefix(a, b) {
		t.Fatalf("ambiguous prefixes %x %x", a, b)
	}
}
