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
//
// It also caps the connections of one client address (perAddr; an IPv6
// client's /64 counts as one address, as a host gets a whole /64): a
// connection beyond it is closed as soon as it is accepted. So one
// address, however slowly it sends its headers, holds at most perAddr of
// the max slots, and the others are left to everybody else (one address
// held them all with slowloris headers, and probes waited 8.8 s).
type connLimiter struct {
	net.Listener
	max     int
	perAddr int

	mu     sync.Mutex
	open   int
	byAddr map[string]int         // open connections by addrKey
	idle   map[net.Conn]time.Time // idle since, by the server's conn
	freed  chan struct{}          // a token when a connection closes or turns idle
	done   chan struct{}          // closed by Close
	once   sync.Once
}

func newConnLimiter(ln net.Listener, max, perAddr int) *connLimiter {
	if perAddr < 1 || perAddr > max {
		perAddr = max
	}
	return &connLimiter{Listener: ln, max: max, perAddr: perAddr, byAddr: make(map[string]int),
		idle: make(map[net.Conn]time.Time), freed: make(chan struct{}, 1), done: make(chan struct{})}
}

// addrKey is the address a connection's peer counts under: its IP, or the
// /64 of an IPv6 address ("" when it has none, as on a pipe).
func addrKey(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return ""
	}
	if ip4 := tcp.IP.To4(); ip4 != nil {
		return ip4.String()
	}
	return tcp.IP.Mask(net.CIDRMask(64, 128)).String() + "/64"
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
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			l.release()
			return nil, err
		}
		key := addrKey(c.RemoteAddr())
		l.mu.Lock()
		full := l.byAddr[key] >= l.perAddr
		if !full {
			l.byAddr[key]++
		}
		l.mu.Unlock()
		if full {
			c.Close() // the slot stays reserved for the next connection
			continue
		}
		return &limitedConn{Conn: c, l: l, key: key}, nil
	}
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

func (l *connLimiter) release() { l.releaseAddr("", false) }

// releaseAddr gives a slot back, and one of key's when counted.
func (l *connLimiter) releaseAddr(key string, counted bool) {
	l.mu.Lock()
	l.open--
	if counted {
		if l.byAddr[key]--; l.byAddr[key] <= 0 {
			delete(l.byAddr, key)
		}
	}
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
	key  string // addrKey of the peer
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.releaseAddr(c.key, true) })
	return err
}
