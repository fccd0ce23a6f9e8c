package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tidemq/tidemq/api/frontdoor"
	"github.com/tidemq/tidemq/api/sigv4"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/authz"
)

// doorOptions are the serve flags of the front door: what may pass without
// a signature, the timeouts, the caps and TLS.
type doorOptions struct {
	authExempt      []string
	readTimeout     time.Duration
	writeTimeout    time.Duration
	idleTimeout     time.Duration
	maxConns        int
	maxConnsPerAddr int
	maxBodyMemMiB   int64
	tlsCert         string
	tlsKey          string
	allowedHosts    []string
}

// exemptable are the routes --auth-exempt may open: probes of machines that
// cannot sign.
var exemptable = []string{"health", "metrics"}

func (d *doorOptions) addFlags(f *pflag.FlagSet) {
	f.StringSliceVar(&d.authExempt, "auth-exempt", nil, "with --auth, answer these unsigned: health (GET /health) and/or metrics (GET /metrics), for probes and Prometheus")
	f.DurationVar(&d.readTimeout, "read-timeout", frontdoor.DefaultReadTimeout, "longest time to read one request, headers and body")
	f.DurationVar(&d.writeTimeout, "write-timeout", frontdoor.DefaultWriteTimeout, "longest time from a request's headers to the end of its answer; must exceed --read-timeout + 20s (long polls)")
	f.DurationVar(&d.idleTimeout, "idle-timeout", frontdoor.DefaultIdleTimeout, "close keep-alive connections idle this long")
	f.IntVar(&d.maxConns, "max-connections", frontdoor.DefaultMaxConns, "most connections held open; at the cap the longest-idle one is closed for a newcomer")
	f.IntVar(&d.maxConnsPerAddr, "max-connections-per-address", 0, "most connections held open by one client address (an IPv6 /64 counts as one); beyond it a connection is closed at once (0: a quarter of --max-connections)")
	f.Int64Var(&d.maxBodyMemMiB, "max-body-memory-mib", frontdoor.DefaultMaxBodyMemory>>20, "MiB that request bodies over 64 KiB may hold at once (a quarter of it per client address); others wait for room")
	f.StringSliceVar(&d.allowedHosts, "allowed-hosts", nil, "without --auth, host names (besides IP addresses, localhost and --public-url's) that requests may be sent to, e.g. a compose service name; * for any (open to DNS rebinding)")
	f.StringVar(&d.tlsCert, "tls-cert", "", "PEM certificate (chain) file: serve HTTPS instead of HTTP (with --tls-key; reloaded when it changes)")
	f.StringVar(&d.tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
}

// hosts is the host names requests may name without --auth: --allowed-hosts,
// the host of --public-url and a host name given in --listen.
func (d *doorOptions) hosts(publicURL, listen string) []string {
	hs := append([]string(nil), d.allowedHosts...)
	if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" {
		hs = append(hs, u.Hostname())
	}
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" {
		hs = append(hs, h)
	}
	return hs
}

// exempt reports which probes --auth-exempt opens, refusing unknown names.
func (d *doorOptions) exempt(auth bool) (map[string]bool, error) {
	open := map[string]bool{}
	for _, name := range d.authExempt {
		name = strings.TrimSpace(name)
		if !slices.Contains(exemptable, name) {
			return nil, fmt.Errorf("--auth-exempt takes %s, not %q", strings.Join(exemptable, " and "), name)
		}
		open[name] = true
	}
	if len(open) > 0 && !auth {
		return nil, errors.New("--auth-exempt opens routes that --auth would close, and there is no --auth")
	}
	if !auth {
		for _, name := range exemptable {
			open[name] = true
		}
	}
	return open, nil
}

// check validates the limits before anything is opened.
func (d *doorOptions) check() error {
	if d.maxBodyMemMiB < 8 {
		return errors.New("--max-body-memory-mib must be at least 8, the largest request body")
	}
	return d.config(nil).Check()
}

func (d *doorOptions) config(log *slog.Logger) frontdoor.ServerConfig {
	c := frontdoor.ServerConfig{
		ReadTimeout: d.readTimeout, WriteTimeout: d.writeTimeout, IdleTimeout: d.idleTimeout,
		MaxConns: d.maxConns, MaxConnsPerAddr: d.maxConnsPerAddr, TLSCert: d.tlsCert, TLSKey: d.tlsKey,
	}
	if log != nil {
		c.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	}
	return c
}

func (d *doorOptions) server(h http.Handler, log *slog.Logger) (*frontdoor.Server, error) {
	return frontdoor.NewServer(h, d.config(log))
}

// adminAuth is the authenticator of the admin API: the same credentials,
// signed for the "tidemq" service, presigned for 15 minutes at most.
func adminAuth(auth sqs.Authenticator) frontdoor.Authenticator {
	switch v := auth.(type) {
	case *sigv4.Verifier:
		a := v.ForServices(adminService)
		a.MaxPresignExpires = sigv4.AdminPresignExpires
		return a
	case *authz.Authenticator:
		a := v.ForServices(adminService)
		a.MaxPresignExpires = sigv4.AdminPresignExpires
		return a
	}
	return auth
}

// adminService is the signing scope of the admin API (/tidemq/...): tidemq's
// own commands sign for it, and so can awscurl --service tidemq.
const adminService = "tidemq"

// isLoopback reports whether a --listen address only accepts connections
// from this machine.
func isLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
