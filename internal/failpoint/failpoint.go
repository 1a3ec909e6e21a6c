package failpoint

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Env is the environment variable naming the armed points.
const Env = "SLUICE_FAILPOINTS"

// Points are armed failpoints: each name with the hit that kills, and the
// hits counted so far.
type Points struct {
	mu    sync.Mutex
	at    map[string]int
	hits  map[string]int
	out   io.Writer
	kill  func()
	armed atomic.Bool
}

// Parse reads a SLUICE_FAILPOINTS value: comma-separated name=N with N >= 1.
// kill ends the process; out receives the line saying which point fired.
func Parse(spec string, out io.Writer, kill func()) (*Points, error) {
	p := &Points{at: map[string]int{}, hits: map[string]int{}, out: out, kill: kill}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, n, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		at, err := strconv.Atoi(strings.TrimSpace(n))
		if !ok || name == "" || err != nil || at < 1 {
			return nil, fmt.Errorf("failpoint: %s: %q is not name=N with N a whole number from 1", Env, item)
		}
		p.at[name] = at
	}
	p.armed.Store(len(p.at) > 0)
	return p, nil
}

// Hit counts one pass through the point name and kills the process on the
// armed hit.
func (p *Points) Hit(name string) {
	if p == nil || !p.armed.Load() {
		return
	}
	p.mu.Lock()
	at, ok := p.at[name]
	if !ok {
		p.mu.Unlock()
		return
	}
	p.hits[name]++
	n := p.hits[name]
	p.mu.Unlock()
	if n == at {
		fmt.Fprintf(p.out, "failpoint %s hit %d: killing\n", name, n)
		p.kill()
	}
}

var process atomic.Pointer[Points]

func init() {
	spec := os.Getenv(Env)
	if spec == "" {
		return
	}
	p, err := Parse(spec, os.Stderr, killSelf)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	process.Store(p)
}

func killSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal ends the process
}

// Hit counts one pass through the failpoint name of this process (see the
// package comment).
func Hit(name string) {
	if p := process.Load(); p != nil {
		p.Hit(name)
	}
}

// Enabled reports whether any failpoint of this process is armed, for
// code that does extra work only to give a point its place.
func Enabled() bool {
	p := process.Load()
	return p != nil && p.armed.Load()
}
