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
// It also caps the connections of one client address that are idle or
// still reading their headers (perAddr; an IPv6 client's /64 counts as one
// address, as a host gets a whole /64): a connection beyond it takes the
// place of one of the address's own idle or slow ones, or is closed as
// soon as it is accepted. So one address, however slowly it sends its
// headers, holds at most perAddr of the max slots without being served,
// and the others are left to everybody else (one address held them all
// with slowloris headers, and probes waited 8.8 s); connections being
// served (long polls through a proxy that all clients share) do not count.
type connLimiter struct {
	net.Listener
	max     int
	perAddr int

	mu     sync.Mutex
	open   int
	byAddr map[string]int         // open connections by addrKey
	idle   map[net.Conn]time.Time // idle since, by the server's conn
	// reading are the connections reading a request's headers (new, or
	// active and not yet handed to a handler), since when: past
	// headerGrace they may be closed for a newcomer, as idle ones are.
	reading     map[net.Conn]time.Time
	headerGrace time.Duration
	freed       chan struct{} // a token when a connection closes or turns idle
	done        chan struct{} // closed by Close
	once        sync.Once
}

func newConnLimiter(ln net.Listener, max, perAddr int) *connLimiter {
	if perAddr < 1 || perAddr > max {
		perAddr = max
	}
	return &connLimiter{Listener: ln, max: max, perAddr: perAddr, byAddr: make(map[string]int),
		idle: make(map[net.Conn]time.Time), reading: make(map[net.Conn]time.Time), headerGrace: headerGrace,
		freed: make(chan struct{}, 1), done: make(chan struct{})}
}

// headerGrace is how long a connection may take to send a request's
// headers before it counts as a slot to reclaim at the cap: a client that
// means it sends them in one write. (The server's header timeout, 10 s,
// still closes it in any case.)
const headerGrace = 2 * time.Second

// serving is called when a handler starts on c: its headers are in.
func (l *connLimiter) serving(c net.Conn) {
	l.mu.Lock()
	delete(l.reading, c)
	l.mu.Unlock()
}

// markServing wraps the server's handler so that the limiter learns when
// a connection's headers are in (ConnContext puts the conn in the
// request's context).
func (l *connLimiter) markServing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			l.serving(c)
		}
		h.ServeHTTP(w, r)
	})
}

// connKey is the request context key of its connection.
type connKey struct{}

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
		victim := l.longestIdleLocked(anyAddr)
		if victim == nil {
			victim = l.slowestReadingLocked(anyAddr)
		}
		// With nothing to close yet, look again when the oldest reader
		// passes its grace.
		var graceOver <-chan time.Time
		if victim == nil {
			if oldest, ok := l.oldestReadingLocked(); ok {
				graceOver = time.After(time.Until(oldest.Add(l.headerGrace)) + 10*time.Millisecond)
			}
		}
		l.mu.Unlock()
		if victim != nil {
			// Not inline: a TLS close writes close_notify, and a peer that
			// reads nothing must not stall every Accept.
			go victim.Close()
		}
		select {
		case <-l.freed:
		case <-graceOver:
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
		full := l.stalledLocked(key) >= l.perAddr
		var victim net.Conn
		if full {
			// At its share, an address's newcomer takes the place of
			// its own longest-idle connection, or of its own slowest
			// header reader past the grace, as at the global cap.
			if victim = l.longestIdleLocked(key); victim == nil {
				victim = l.slowestReadingLocked(key)
			}
		}
		if !full || victim != nil {
			l.byAddr[key]++
		}
		l.mu.Unlock()
		if victim != nil {
			go victim.Close()
		} else if full {
			c.Close() // the slot stays reserved for the next connection
			continue
		}
		return &limitedConn{Conn: c, l: l, key: key}, nil
	}
}

// stalledLocked is how many connections of the address key are idle or
// still reading a request's headers: what its share caps. A connection
// whose handler runs (a long poll, above all) does not count, so the
// clients behind one proxy or NAT, which share its address, are not cut
// off while they are being served; one that holds slots without sending
// a request is.
func (l *connLimiter) stalledLocked(key string) int {
	n := 0
	for c := range l.idle {
		if addrKey(c.RemoteAddr()) == key {
			n++
		}
	}
	for c := range l.reading {
		if addrKey(c.RemoteAddr()) == key {
			n++
		}
	}
	return n
}

// anyAddr makes longestIdleLocked and slowestReadingLocked consider the
// connections of every address.
const anyAddr = "\x00any"

// longestIdleLocked removes and returns the connection idle the longest
// (of the address key, or of any), or nil.
func (l *connLimiter) longestIdleLocked(key string) net.Conn {
	return takeOldest(l.idle, key, func(time.Time) bool { return true })
}

// slowestReadingLocked removes and returns the connection that has been
// reading its headers the longest, if that is longer than headerGrace, or
// nil (of the address key, or of any).
func (l *connLimiter) slowestReadingLocked(key string) net.Conn {
	return takeOldest(l.reading, key, func(since time.Time) bool { return time.Since(since) > l.headerGrace })
}

// takeOldest removes from m and returns the connection (of the address
// key, or of any) with the earliest time among those eligible accepts, or
// nil.
func takeOldest(m map[net.Conn]time.Time, key string, eligible func(since time.Time) bool) net.Conn {
	var victim net.Conn
	var since time.Time
	for c, t := range m {
		if key != anyAddr && addrKey(c.RemoteAddr()) != key {
			continue
		}
		if eligible(t) && (victim == nil || t.Before(since)) {
			victim, since = c, t
		}
	}
	if victim != nil {
		delete(m, victim)
	}
	return victim
}

// oldestReadingLocked is when the connection reading its headers the
// longest started to.
func (l *connLimiter) oldestReadingLocked() (time.Time, bool) {
	var oldest time.Time
	found := false
	for _, t := range l.reading {
		if !found || t.Before(oldest) {
			oldest, found = t, true
		}
	}
	return oldest, found
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
	switch s {
	case http.StateNew, http.StateActive:
		// From the accept, or from a keep-alive request's first byte.
		if _, ok := l.reading[c]; !ok {
			l.reading[c] = time.Now()
		}
	default:
		delete(l.reading, c)
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
