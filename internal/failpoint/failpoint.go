package failpoint

import (
	"context"
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
// hits counted so far; and the pause points that hold every caller.
type Points struct {
	mu     sync.Mutex
	at     map[string]int
	hits   map[string]int
	paused map[string]bool
	out    io.Writer
	kill   func()
	armed  atomic.Bool
}

// Parse reads a SLUICE_FAILPOINTS value: comma-separated name=N with N >= 1
// (a kill point) or name=pause (a pause point). kill ends the process; out
// receives the line saying which point fired.
func Parse(spec string, out io.Writer, kill func()) (*Points, error) {
	p := &Points{at: map[string]int{}, hits: map[string]int{}, paused: map[string]bool{}, out: out, kill: kill}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, n, ok := strings.Cut(item, "=")
		name, n = strings.TrimSpace(name), strings.TrimSpace(n)
		if ok && name != "" && n == "pause" {
			p.paused[name] = true
			continue
		}
		at, err := strconv.Atoi(n)
		if !ok || name == "" || err != nil || at < 1 {
			return nil, fmt.Errorf("failpoint: %s: %q is not name=N with N a whole number from 1, nor name=pause", Env, item)
		}
		p.at[name] = at
	}
	p.armed.Store(len(p.at) > 0 || len(p.paused) > 0)
	return p, nil
}

// Wait passes the pause point name: when the point is armed (name=pause),
// it blocks until ctx ends and returns ctx's cause; otherwise it returns
// nil at once.
func (p *Points) Wait(ctx context.Context, name string) error {
	if p == nil || !p.armed.Load() || !p.paused[name] {
		return nil
	}
	fmt.Fprintf(p.out, "failpoint %s: pausing until the caller gives up\n", name)
	<-ctx.Done()
	return context.Cause(ctx)
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

// Wait passes the pause point name of this process. Armed by name=pause in
// SLUICE_FAILPOINTS, it blocks until ctx ends and returns ctx's cause;
// armed by Pause (in a test), it blocks until ctx ends or the Hold is
// released (then nil). Unarmed, it returns nil at once, at the cost of two
// atomic loads.
func Wait(ctx context.Context, name string) error {
	if err := process.Load().Wait(ctx, name); err != nil {
		return err
	}
	if holds.n.Load() == 0 {
		return nil
	}
	holds.mu.Lock()
	h := holds.by[name]
	holds.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.wait(ctx)
}

// holds are the pause points armed by Pause, by name.
var holds struct {
	n  atomic.Int32
	mu sync.Mutex
	by map[string]*Hold
}

// Hold is a pause point armed in this process by Pause: until Release,
// every Wait on its name blocks until its caller's context ends.
type Hold struct {
	name    string
	reached chan struct{}
	left    chan error
	release chan struct{}
	once    sync.Once
}

// holdSignals is how many hits and returns a Hold's channels keep unread;
// more are dropped.
const holdSignals = 256

// Pause arms the pause point name in this process, for a test that holds
// a caller there: each Wait(ctx, name) then signals Reached, blocks until
// ctx ends or Release is called, and sends what it returns (ctx's cause,
// or nil once released) on Left. One Hold per name at a time: a second
// Pause of the same name replaces the first, which is released.
func Pause(name string) *Hold {
	h := &Hold{name: name, reached: make(chan struct{}, holdSignals), left: make(chan error, holdSignals), release: make(chan struct{})}
	holds.mu.Lock()
	if holds.by == nil {
		holds.by = map[string]*Hold{}
	}
	old := holds.by[name]
	holds.by[name] = h
	if old == nil {
		holds.n.Add(1)
	}
	holds.mu.Unlock()
	if old != nil {
		old.unblock()
	}
	return h
}

// Reached receives a value each time a caller starts waiting at the point.
func (h *Hold) Reached() <-chan struct{} { return h.reached }

// Left receives what each waiting caller's Wait returned: its context's
// cause, or nil when it was released.
func (h *Hold) Left() <-chan error { return h.left }

// Release disarms the point and lets the callers waiting there go on.
// Safe to call twice.
func (h *Hold) Release() {
	holds.mu.Lock()
	if holds.by[h.name] == h {
		delete(holds.by, h.name)
		holds.n.Add(-1)
	}
	holds.mu.Unlock()
	h.unblock()
}

func (h *Hold) unblock() { h.once.Do(func() { close(h.release) }) }

func (h *Hold) wait(ctx context.Context) error {
	select {
	case h.reached <- struct{}{}:
	default:
	}
	var err error
	select {
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-h.release:
	}
	select {
	case h.left <- err:
	default:
	}
	return err
}

// Enabled reports whether any failpoint of this process is armed, for
// code that does extra work only to give a point its place.
func Enabled() bool {
	p := process.Load()
	return p != nil && p.armed.Load()
}
