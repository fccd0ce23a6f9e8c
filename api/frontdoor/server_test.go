package frontdoor

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq/internal/testcert"
)

// serve runs h on a loopback listener with c (defaults filled in) and
// returns its address.
func serve(t *testing.T, h http.Handler, c ServerConfig) string {
	t.Helper()
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = c.ReadTimeout + LongestPoll + time.Second
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxConnsPerAddr == 0 {
		c.MaxConnsPerAddr = c.MaxConns // the tests' clients share 127.0.0.1
	}
	s, err := NewServer(h, c)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return ln.Addr().String()
}

// partSend opens a connection and sends a POST's headers claiming n body
// bytes, and part of them (which must fit the sockets' buffers if the
// server does not read them).
func partSend(t *testing.T, addr string, n, part int) net.Conn {
	t.Helper()
	return partSendFrom(t, "127.0.0.1", addr, n, part)
}

// partSendFrom is partSend from the local address from (any 127.x.y.z is
// this machine).
func partSendFrom(t *testing.T, from, addr string, n, part int) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n", n)
	if _, err := c.Write(make([]byte, part)); err != nil {
		t.Fatal(err)
	}
	return c
}

// Large bodies take budget before they are read: with room for two 8 MiB
// bodies, a third half-sent one is not let in until one of the first ends.
// (Before, 100 half-sent 8 MiB bodies held 815 MiB.)
func TestLargeBodiesWaitForBudget(t *testing.T) {
	const size = 8 << 20
	entered := make(chan struct{}, 8)
	d := New(Config{MaxBody: size, MaxBodyMemory: 2 * size})
	d.Protocol("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		io.Copy(io.Discard, r.Body)
	}))
	addr := serve(t, d, ServerConfig{})
	// From three clients, so that no client's own share is the limit.
	first := partSendFrom(t, "127.0.0.1", addr, size, size/2)
	partSendFrom(t, "127.0.0.2", addr, size, size/2)
	for range 2 {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("a body within the budget was not let in")
		}
	}
	third := partSendFrom(t, "127.0.0.3", addr, size, 1<<10)
	select {
	case <-entered:
		t.Fatal("a third 8 MiB body was let in past a 16 MiB budget")
	case <-time.After(300 * time.Millisecond):
	}
	// Small bodies do not wait behind large ones.
	resp, err := http.Post("http://"+addr+"/", "application/x-www-form-urlencoded", strings.NewReader("Action=ListQueues"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-entered
	if _, err := first.Write(make([]byte, size/2)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the third body was not let in once the first was read")
	}
	third.Close()
}

// One client cannot hold the whole budget: with room for four 8 MiB
// bodies, a client's second half-sent body waits while another client's
// is let in. (Before, forty unsigned chunked bodies from one address held
// the default budget until the read timeout.)
func TestOneClientHoldsAShareOfTheBudget(t *testing.T) {
	const size = 8 << 20
	entered := make(chan string, 8)
	d := New(Config{MaxBody: size, MaxBodyMemory: 4 * size})
	d.Protocol("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		entered <- host
		io.Copy(io.Discard, r.Body)
	}))
	addr := serve(t, d, ServerConfig{})
	hog := partSendFrom(t, "127.0.0.1", addr, size, 1<<10)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("a client's first body was not let in")
	}
	partSendFrom(t, "127.0.0.1", addr, size, 1<<10)
	partSendFrom(t, "127.0.0.2", addr, size, 1<<10)
	select {
	case from := <-entered:
		if from != "127.0.0.2" {
			t.Fatalf("a body from %s was let in; want only the other client's", from)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("another client's body waited behind the first client's")
	}
	select {
	case from := <-entered:
		t.Fatalf("a second body from %s was let in past its client's share", from)
	case <-time.After(300 * time.Millisecond):
	}
	hog.Close() // its body ends early: the share is free again
	select {
	case from := <-entered:
		if from != "127.0.0.1" {
			t.Fatalf("a body from %s was let in; want the first client's second", from)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first client's second body was not let in once its first ended")
	}
}

func TestClientKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7:5000":             "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ff::1]:443":   "2001:db8:1:2::/64",
		"[::ffff:192.0.2.7]:1":       "192.0.2.7",
		"@":                          "@",
	} {
		if got := clientKey(in); got != want {
			t.Errorf("clientKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// get sends one keep-alive GET on c and reads the answer.
func get(c net.Conn, r *bufio.Reader) error {
	if _, err := fmt.Fprint(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err
}

// At the connection cap the longest-idle keep-alive connection makes room
// for a newcomer, so idle connections cannot lock everyone out.
func TestIdleConnectionsMakeRoom(t *testing.T) {
	d := New(Config{})
	d.Probe("GET /health", echo, true)
	addr := serve(t, d, ServerConfig{MaxConns: 2})
	var conns []net.Conn
	var readers []*bufio.Reader
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r := bufio.NewReader(c)
		if err := get(c, r); err != nil {
			t.Fatal(err)
		}
		conns, readers = append(conns, c), append(readers, r)
	}
	// Both are idle now; a third client still gets an answer.
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatalf("a new client at the cap: %v", err)
	}
	resp.Body.Close()
	// The first (longest idle) connection was closed for it.
	conns[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := readers[0].ReadByte(); err == nil {
		t.Error("the longest-idle connection is still open")
	}
}

// A client that sends its headers too slowly is cut off by the read
// timeout instead of holding its connection for ever.
func TestSlowHeadersAreCutOff(t *testing.T) {
	d := New(Config{})
	d.Probe("GET /health", echo, true)
	addr := serve(t, d, ServerConfig{ReadTimeout: 500 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n") // and never the blank line
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection was still open after %s", time.Since(start))
	}
}

func TestServerConfigChecked(t *testing.T) {
	base := ServerConfig{ReadTimeout: time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: time.Second, MaxConns: 1}
	if err := base.Check(); err != nil {
		t.Fatalf("a valid config: %v", err)
	}
	for name, mutate := range map[string]func(*ServerConfig){
		"write timeout shorter than a long poll": func(c *ServerConfig) { c.WriteTimeout = 20 * time.Second },
		"no read timeout":                        func(c *ServerConfig) { c.ReadTimeout = 0 },
		"no connections":                         func(c *ServerConfig) { c.MaxConns = 0 },
		"cert without key":                       func(c *ServerConfig) { c.TLSCert = "x.pem" },
	} {
		c := base
		mutate(&c)
		if err := c.Check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	pool := testcert.Write(t, certFile, keyFile, "first")
	d := New(Config{})
	d.Probe("GET /health", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.TLS != nil)
	}), true)
	s, err := NewServer(d, ServerConfig{ReadTimeout: time.Second, WriteTimeout: time.Minute, IdleTimeout: time.Second,
		MaxConns: 10, TLSCert: certFile, TLSKey: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.srv.Close()
	addr := ln.Addr().String()

	subject := func(pool *x509.CertPool) (string, error) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		resp, err := c.Get("https://" + addr + "/health")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if string(b) != "true" {
			return "", fmt.Errorf("the handler saw no TLS: %q", b)
		}
		return resp.TLS.PeerCertificates[0].Subject.CommonName, nil
	}
	if cn, err := subject(pool); err != nil || cn != "first" {
		t.Fatalf("HTTPS: %q, %v", cn, err)
	}
	if resp, err := http.Get("http://" + addr + "/health"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP was answered 200 on the TLS port")
		}
	}
	// A renewed certificate is served without a restart.
	pool2 := testcert.Write(t, certFile, keyFile, "second")
	future := time.Now().Add(time.Minute)
	os.Chtimes(certFile, future, future)
	s.certs.mu.Lock()
	s.certs.checkedAt = time.Time{}
	s.certs.mu.Unlock()
	if cn, err := subject(pool2); err != nil || cn != "second" {
		t.Fatalf("after renewal: %q, %v", cn, err)
	}
}

func TestBadTLSFilesFailAtStart(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	os.WriteFile(bad, []byte("not a certificate"), 0o600)
	_, err := NewServer(http.NotFoundHandler(), ServerConfig{ReadTimeout: time.Second, WriteTimeout: time.Minute,
		IdleTimeout: time.Second, MaxConns: 1, TLSCert: bad, TLSKey: bad})
	if err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("NewServer with a bad certificate: %v", err)
	}
}

// A newcomer that arrives while every connection is busy is served as soon
// as one of them turns idle: the idle one is closed for it.
func TestNewcomerWaitsForAConnectionToTurnIdle(t *testing.T) {
	release := make(chan struct{})
	d := New(Config{})
	d.Probe("GET /slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }), true)
	d.Probe("GET /health", echo, true)
	addr := serve(t, d, ServerConfig{MaxConns: 1})
	busy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	fmt.Fprint(busy, "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	done := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Timeout: 15 * time.Second}).Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the newcomer was served while the only connection was busy: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release) // the busy connection answers and turns idle
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the newcomer: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the newcomer was not served after the busy connection turned idle")
	}
}

// Over HTTP/2 one connection carries at most MaxStreams requests at once,
// so that the connection cap bounds requests in flight. (Counted per
// connection: the test does not depend on how the client spreads them.)
func TestHTTP2StreamsBounded(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	pool := testcert.Write(t, certFile, keyFile, "h2")
	// Counted per connection (by the client's address): the client opens
	// another connection when one is full.
	var mu sync.Mutex
	perConn := map[string]int{}
	most := 0
	var inside atomic.Int32
	release := make(chan struct{})
	d := New(Config{})
	d.Probe("GET /slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inside.Add(1)
		mu.Lock()
		perConn[r.RemoteAddr]++
		most = max(most, perConn[r.RemoteAddr])
		mu.Unlock()
		<-release
		mu.Lock()
		perConn[r.RemoteAddr]--
		mu.Unlock()
		inside.Add(-1)
	}), true)
	addr := serve(t, d, ServerConfig{TLSCert: certFile, TLSKey: keyFile})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	var wg sync.WaitGroup
	for range 3 * MaxStreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := client.Get("https://" + addr + "/slow"); err == nil {
				if resp.ProtoMajor != 2 {
					t.Errorf("protocol %s, want HTTP/2", resp.Proto)
				}
				resp.Body.Close()
			}
		}()
	}
	// The client opens more connections when one is full: wait until
	// every request is in (or, without the bound, until one connection
	// carries them all).
	deadline := time.Now().Add(15 * time.Second)
	for inside.Load() < 3*MaxStreams && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // room for any stream past the bound
	mu.Lock()
	if most < 1 || most > MaxStreams {
		t.Errorf("%d requests in flight on one HTTP/2 connection, want at most %d", most, MaxStreams)
	}
	mu.Unlock()
	close(release)
	wg.Wait()
}

// dialFrom dials addr from the local address from (any 127.x.y.z is this
// machine).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// One address sending its headers slowly (slowloris) holds at most its
// share of the connection slots: its connections past the share are
// closed at once, and another address is answered without waiting.
func TestOneAddressCannotHoldEverySlot(t *testing.T) {
	d := New(Config{})
	d.Probe("GET /health", echo, true)
	addr := serve(t, d, ServerConfig{MaxConns: 8, MaxConnsPerAddr: 2})
	var conns []net.Conn
	for range 8 {
		c := dialFrom(t, "127.0.0.2", addr)
		fmt.Fprint(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n") // and never the blank line
		conns = append(conns, c)
	}
	closed := 0
	for _, c := range conns[2:] {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF || err != nil && !isTimeout(err) {
			closed++
		}
	}
	if closed != 6 {
		t.Errorf("%d of the 6 connections past the address's share were closed", closed)
	}
	c := dialFrom(t, "127.0.0.3", addr)
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if err := get(c, bufio.NewReader(c)); err != nil {
		t.Errorf("another address, while one holds slow connections: %v", err)
	}
}

// The share caps an address's connections that are not being served:
// the clients behind one proxy, whose long polls are all active, are not
// cut off at the share.
func TestServedConnectionsDoNotCountAgainstTheShare(t *testing.T) {
	d := New(Config{})
	release := make(chan struct{})
	var serving atomic.Int32
	d.Probe("GET /health", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("wait") != "" {
			serving.Add(1)
			<-release
		}
		echo.ServeHTTP(w, r)
	}), true)
	addr := serve(t, d, ServerConfig{MaxConns: 8, MaxConnsPerAddr: 2})
	defer close(release)
	for i := range 5 {
		c := dialFrom(t, "127.0.0.2", addr)
		fmt.Fprint(c, "GET /health?wait=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		// Wait until its handler runs: it no longer counts as stalled.
		deadline := time.Now().Add(5 * time.Second)
		for int(serving.Load()) < i+1 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := int(serving.Load()); got != i+1 {
			t.Fatalf("long poll %d from one address: %d being served, want %d (closed at the share?)", i+1, got, i+1)
		}
	}
	c := dialFrom(t, "127.0.0.2", addr)
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if err := get(c, bufio.NewReader(c)); err != nil {
		t.Errorf("a sixth connection from the address of five long polls: %v", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func TestAddrKey(t *testing.T) {
	for in, want := range map[string]string{"192.0.2.1:80": "192.0.2.1", "[2001:db8:1:2:3:4:5:6]:80": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:9": "2001:db8:1:2::/64", "[::ffff:192.0.2.1]:1": "192.0.2.1"} {
		a, _ := net.ResolveTCPAddr("tcp", in)
		if got := addrKey(a); got != want {
			t.Errorf("addrKey(%s) = %q, want %q", in, got, want)
		}
	}
}

// Connections still sending their headers after headerGrace count as
// slots to reclaim at the cap, as idle ones do: slowloris within the
// per-address share cannot keep a newcomer waiting for the header timeout.
func TestSlowHeadersMakeRoomAtTheCap(t *testing.T) {
	d := New(Config{})
	d.Probe("GET /health", echo, true)
	addr := serve(t, d, ServerConfig{MaxConns: 4})
	for range 4 {
		c := dialFrom(t, "127.0.0.2", addr)
		fmt.Fprint(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n") // and never the blank line
	}
	start := time.Now()
	c := dialFrom(t, "127.0.0.3", addr)
	c.SetDeadline(time.Now().Add(8 * time.Second))
	if err := get(c, bufio.NewReader(c)); err != nil {
		t.Fatalf("a newcomer while every slot reads slow headers: %v", err)
	}
	if took := time.Since(start); took > 7*time.Second {
		t.Errorf("the newcomer waited %v (the header timeout is 10 s, the grace 2 s)", took)
	}
}
