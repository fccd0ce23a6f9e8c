package frontdoor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// LongestPoll is the longest an SQS long poll holds a request
// (WaitTimeSeconds 20): the write timeout must leave room for it.
const LongestPoll = 20 * time.Second

// MaxStreams is how many requests one HTTP/2 connection may have in flight.
const MaxStreams = 16

// ServerConfig sets the limits of a Server.
type ServerConfig struct {
	// ReadTimeout bounds reading one request, headers and body.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its answer: reading the body, a long poll, writing. It must exceed
	// ReadTimeout + LongestPoll.
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long.
	IdleTimeout time.Duration
	// MaxConns caps open connections (see connLimiter).
	MaxConns int
	// MaxConnsPerAddr caps the open connections of one client address
	// (an IPv6 /64); 0: MaxConns/4.
	MaxConnsPerAddr int
	// TLSCert and TLSKey, both or neither, are PEM files; with them the
	// server speaks HTTPS only. The files are read again when they change,
	// so a renewed certificate needs no restart.
	TLSCert, TLSKey string
	ErrorLog        *log.Logger
}

// Defaults of ServerConfig, as tidemq serve's flags give them.
const (
	DefaultReadTimeout  = 30 * time.Second
	DefaultWriteTimeout = 60 * time.Second
	DefaultIdleTimeout  = 120 * time.Second
	DefaultMaxConns     = 4096
)

// Check reports the first setting that cannot work, in the flags' words.
func (c ServerConfig) Check() error {
	switch {
	case c.ReadTimeout <= 0:
		return errors.New("--read-timeout must be positive")
	case c.WriteTimeout <= c.ReadTimeout+LongestPoll:
		return fmt.Errorf("--write-timeout (%s) must exceed --read-timeout (%s) plus the longest long poll (%s)", c.WriteTimeout, c.ReadTimeout, LongestPoll)
	case c.IdleTimeout <= 0:
		return errors.New("--idle-timeout must be positive")
	case c.MaxConns < 1:
		return errors.New("--max-connections must be at least 1")
	case c.MaxConnsPerAddr < 0 || c.MaxConnsPerAddr > c.MaxConns:
		return errors.New("--max-connections-per-address must be between 1 and --max-connections (0: a quarter of it)")
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return errors.New("--tls-cert and --tls-key go together: give both or neither")
	}
	return nil
}

// Server serves a Door within the limits of a ServerConfig.
type Server struct {
	srv   *http.Server
	cfg   ServerConfig
	certs *certReloader
}

// NewServer checks c, loads the TLS certificate if any, and returns a server
// of h (normally a *Door).
func NewServer(h http.Handler, c ServerConfig) (*Server, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	s := &Server{cfg: c, srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(10*time.Second, c.ReadTimeout),
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          c.ErrorLog,
		// Few streams per HTTP/2 connection, so that the connection cap
		// also bounds requests in flight (Go's default is 250 each).
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: MaxStreams},
	}}
	if c.TLSCert != "" {
		cr, err := newCertReloader(c.TLSCert, c.TLSKey)
		if err != nil {
			return nil, err
		}
		s.certs = cr
		s.srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: cr.get, NextProtos: []string{"h2", "http/1.1"}}
	}
	return s, nil
}

// TLS reports whether the server speaks HTTPS.
func (s *Server) TLS() bool { return s.certs != nil }

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	per := s.cfg.MaxConnsPerAddr
	if per == 0 {
		per = max(s.cfg.MaxConns/4, 1)
	}
	lim := newConnLimiter(ln, s.cfg.MaxConns, per)
	s.srv.ConnState = lim.connState
	s.srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }
	s.srv.Handler = lim.markServing(s.srv.Handler)
	if s.certs != nil {
		return s.srv.ServeTLS(lim, "", "")
	}
	return s.srv.Serve(lim)
}

// Shutdown stops accepting, waits for requests in progress until ctx ends,
// then closes every connection.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// certReloader hands out the certificate of a key pair on disk, read again
// when either file's modification time changes (checked at most every
// certCheckInterval).
type certReloader struct {
	certFile, keyFile string

	mu        sync.Mutex
	cert      *tls.Certificate
	mtimes    [2]time.Time
	checkedAt time.Time
}

const certCheckInterval = 10 * time.Second

func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	cr := &certReloader{certFile: certFile, keyFile: keyFile}
	if err := cr.load(); err != nil {
		return nil, err
	}
	return cr, nil
}

func (cr *certReloader) load() error {
	var mt [2]time.Time
	for i, f := range []string{cr.certFile, cr.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
		mt[i] = fi.ModTime()
	}
	cert, err := tls.LoadX509KeyPair(cr.certFile, cr.keyFile)
	if err != nil {
		return fmt.Errorf("TLS: load %s and %s: %w", cr.certFile, cr.keyFile, err)
	}
	cr.cert, cr.mtimes = &cert, mt
	return nil
}

func (cr *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if time.Since(cr.checkedAt) >= certCheckInterval {
		cr.checkedAt = time.Now()
		if cr.changed() {
			_ = cr.load() // a half-written renewal keeps the old certificate
		}
	}
	return cr.cert, nil
}

func (cr *certReloader) changed() bool {
	for i, f := range []string{cr.certFile, cr.keyFile} {
		if fi, err := os.Stat(f); err == nil && !fi.ModTime().Equal(cr.mtimes[i]) {
			return true
		}
	}
	return false
}
