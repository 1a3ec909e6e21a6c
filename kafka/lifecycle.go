package kafka

import (
	"sync"
)

// lifecycle tracks whether a client is closed and the producers and
// consumers it handed out, so that closing the client closes them too.
type lifecycle struct {
	mu       sync.Mutex
	closed   bool
	children map[interface{ Close() }]struct{}
}

// isClosed reports whether close has run.
func (l *lifecycle) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// add registers c to be closed with the client; it returns ErrClosed, after
// closing c, when the client is already closed.
func (l *lifecycle) add(c interface{ Close() }) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		c.Close()
		return ErrClosed
	}
	if l.children == nil {
		l.children = make(map[interface{ Close() }]struct{})
	}
	l.children[c] = struct{}{}
	l.mu.Unlock()
	return nil
}

// remove forgets c after it closed itself.
func (l *lifecycle) remove(c interface{ Close() }) {
	l.mu.Lock()
	delete(l.children, c)
	l.mu.Unlock()
}

// close marks the client closed and closes every registered child. It
// returns false if the client was already closed.
func (l *lifecycle) close() bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	l.closed = true
	children := l.children
	l.children = nil
	l.mu.Unlock()
	for c := range children {
		c.Close()
	}
	return true
}
