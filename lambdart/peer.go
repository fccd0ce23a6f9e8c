package lambdart

import (
	"log/slog"
	"net"
	"sync"
)

// The Runtime API listens on 127.0.0.1 without authentication, as Lambda's
// does (a runtime cannot sign), so any process of the machine could connect
// to it: take the next invocation (its messages) and answer it, which
// deletes the batch unprocessed. On Linux the API therefore answers only
// connections from processes of the server's own user (the function's
// processes are: a process of that user can read the server's memory and
// data directory anyway); others are closed unanswered. Where the owner of
// a connection cannot be told, the API answers it (logged once).

// ownerListener accepts only connections that peerIsOurs admits.
type ownerListener struct {
	net.Listener
	log  *slog.Logger
	once sync.Once
}

func (l *ownerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ours, err := peerIsOurs(c)
		if err != nil {
			l.once.Do(func() {
				l.log.Warn("lambda runtime API: cannot tell which user a connection comes from; answering every local connection", "err", err)
			})
			return c, nil
		}
		if ours {
			return c, nil
		}
		l.log.Warn("lambda runtime API: refused a connection from a process of another user", "remote", c.RemoteAddr().String())
		c.Close()
	}
}
