package frontdoor

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// connLimiter caps the connections a server holds open. When the cap is
// reached, the connection idle the longest is closed to make room for the
// new one; when none is idle, Accept waits (the kernel's backlog holds the
// newcomers) until one closes, which the server's read and idle timeouts
// bound. So idle keep-alive connections can no longer use up the process's
// file descriptors and lock everybody else out.
//
// It counts connections itself (Accept to Close) and learns which are idle
// from the server's ConnState hook, which names them as the server sees
// them (a *tls.Conn around ours, with TLS).
type connLimiter struct {
	net.Listener
	max int

	mu    sync.Mutex
	open  int
	idle  map[net.Conn]time.Time // idle since, by the server's conn
	freed chan struct{}          // a token when a connection closes or turns idle
	done  chan struct{}          // closed by Close
	once  sync.Once
}

func newConnLimiter(ln net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: ln, max: max, idle: make(map[net.Conn]time.Time),
		freed: make(chan struct{}, 1), done: make(chan struct{})}
}

// Accept waits for room, then accepts.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			l.mu.Unlock()
			break
		}
		victim := l.longestIdleLocked()
		l.mu.Unlock()
		if victim != nil {
			// Not inline: a TLS close writes close_notify, and a peer that
			// reads nothing must not stall every Accept.
			go victim.Close()
		}
		select {
		case <-l.freed:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		l.release()
		return nil, err
	}
	return &limitedConn{Conn: c, l: l}, nil
}

// longestIdleLocked removes and returns the connection idle the longest, or
// nil.
func (l *connLimiter) longestIdleLocked() net.Conn {
	var victim net.Conn
	var since time.Time
	for c, t := range l.idle {
		if victim == nil || t.Before(since) {
			victim, since = c, t
		}
	}
	if victim != nil {
		delete(l.idle, victim)
	}
	return victim
}

func (l *connLimiter) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
	l.wake()
}

// wake tells a waiting Accept to look again: a connection closed or became
// idle (and can be closed).
func (l *connLimiter) wake() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// connState is the server's ConnState hook.
func (l *connLimiter) connState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	if s == http.StateIdle {
		l.idle[c] = time.Now()
	} else {
		delete(l.idle, c)
	}
	l.mu.Unlock()
	if s == http.StateIdle {
		l.wake()
	}
}

// Close stops waiting Accepts and closes the listener.
func (l *connLimiter) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back when closed.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.l.release)
	return err
}
