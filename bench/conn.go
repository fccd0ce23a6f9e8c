package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"strconv"
	"time"
)

// connPool is a minimal HTTP/1.1 client for plain-http endpoints: each
// exchange borrows one keep-alive connection, writes one request and reads
// one response. It exists because net/http's client, with its per-request
// goroutine hand-offs and header maps, cost as much CPU on a shared
// machine as the server under test. https endpoints use net/http.
type connPool struct {
	addr string // host:port to dial
	host string // Host header
	idle chan *httpConn
}

// httpConn is one keep-alive connection and its buffers.
type httpConn struct {
	net.Conn
	r   *bufio.Reader
	req []byte
}

func newConnPool(addr, host string, size int) *connPool {
	return &connPool{addr: addr, host: host, idle: make(chan *httpConn, size)}
}

func (p *connPool) get(ctx context.Context) (*httpConn, error) {
	select {
	case c := <-p.idle:
		return c, nil
	default:
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	return &httpConn{Conn: nc, r: bufio.NewReaderSize(nc, 16<<10)}, nil
}

func (p *connPool) put(c *httpConn) {
	select {
	case p.idle <- c:
	default:
		c.Close()
	}
}

// errRetry marks a failure on a reused connection before any answer came:
// the server may have closed it while idle, so the request is sent again
// on a new connection.
var errRetry = errors.New("connection closed while idle")

// post sends POST / with the given extra header lines (each "Name: value")
// and body, and reads the answer's status and body into resp.
func (p *connPool) post(ctx context.Context, headers []string, body []byte, resp *bytes.Buffer) (int, error) {
	for attempt := 0; ; attempt++ {
		c, err := p.get(ctx)
		if err != nil {
			return 0, err
		}
		status, keep, err := c.exchange(ctx, p.host, headers, body, resp)
		if err == nil {
			if keep {
				p.put(c)
			} else {
				c.Close()
			}
			return status, nil
		}
		c.Close()
		if !errors.Is(err, errRetry) || attempt > 0 {
			return 0, err
		}
	}
}

func (c *httpConn) exchange(ctx context.Context, host string, headers []string, body []byte, resp *bytes.Buffer) (status int, keep bool, err error) {
	if ctx.Done() != nil {
		// Cancelling the context interrupts the exchange through a past
		// deadline; a connection that got one is not kept.
		stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
		defer func() {
			if !stop() {
				keep = false
			}
		}()
	}
	b := c.req[:0]
	b = append(b, "POST / HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	for _, h := range headers {
		b = append(b, "\r\n"...)
		b = append(b, h...)
	}
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	c.req = b
	if _, err := c.Write(b); err != nil {
		return 0, false, fmt.Errorf("%w: %v", errRetry, err)
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		if err == io.EOF && len(line) == 0 {
			return 0, false, fmt.Errorf("%w: %v", errRetry, err)
		}
		return 0, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, fmt.Errorf("malformed status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("malformed status line %q", line)
	}
	length, chunked, keep := -1, false, line[7] == '1'
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("malformed header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, false, fmt.Errorf("malformed Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				keep = false
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				keep = true
			}
		}
	}
	resp.Reset()
	switch {
	case chunked:
		_, err = resp.ReadFrom(httputil.NewChunkedReader(c.r))
		if err == nil { // the trailer section: lines until an empty one
			for {
				line, rerr := c.r.ReadSlice('\n')
				if rerr != nil {
					return 0, false, rerr
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					break
				}
			}
		}
	case length >= 0:
		resp.Grow(length)
		_, err = io.CopyN(resp, c.r, int64(length))
	default: // the body ends with the connection
		keep = false
		_, err = resp.ReadFrom(c.r)
	}
	return status, keep, err
}
