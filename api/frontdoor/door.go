package frontdoor

import (
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sigv4"
)

// Authenticator checks a request's signature: sigv4's, shared with the
// transports.
type Authenticator = sigv4.Authenticator

// Access is the rule a route is registered with.
type Access int

const (
	// Protocol routes verify signatures themselves (the SQS and SNS APIs).
	Protocol Access = iota
	// Admin routes are verified by the door.
	Admin
	// Open routes are answered without a signature: only probes the
	// operator exempted.
	Open
	// Public routes serve files that hold no data and change nothing (the
	// web console's HTML, scripts and styles) to anyone who passes the
	// Host check, with or without --auth: a browser must load the console
	// before it can sign anything. GET and HEAD only.
	Public
)

func (a Access) String() string {
	switch a {
	case Protocol:
		return "protocol"
	case Admin:
		return "admin"
	case Public:
		return "public"
	}
	return "open"
}

// Route is one registered pattern and its access rule.
type Route struct {
	Pattern string
	Access  Access
}

// Config configures a Door.
type Config struct {
	// Auth verifies admin requests (and probes not exempted). Nil turns
	// authentication off for every route: any request is accepted, as by
	// other local SQS emulators. The protocol handlers must be given the
	// same credentials (see the package comment).
	Auth Authenticator
	// MaxBodyMemory bounds the bytes that request bodies larger than
	// LargeBody may hold at once; 0 means DefaultMaxBodyMemory. One client
	// (an IPv4 address, an IPv6 /64) may hold a quarter of it.
	MaxBodyMemory int64
	// MaxBody is the largest body a protocol request may claim; a larger
	// Content-Length is left to the handler to refuse, but only MaxBody
	// bytes of budget are ever taken for one request. 0 means 8 MiB.
	MaxBody int64
	// AllowedHosts are the host names (no port) that requests may name in
	// their Host header while Auth is nil, besides IP addresses and
	// localhost; "*" allows any. See checkHost.
	AllowedHosts []string
	// Guard, when set with Auth, decides the permissions of an admin
	// request once its signature is verified (package authz): an error
	// refuses it (answered as the admin API answers errors); otherwise the
	// request is served and done, if not nil, is told the answer's status.
	// The request's body can be read again by the guard and the handler.
	Guard  func(r *http.Request, accessKey string) (done func(status int), err error)
	Logger *slog.Logger
}

// Door is the server's router: register every route on it, then serve it.
type Door struct {
	cfg    Config
	mux    *http.ServeMux
	routes []Route
	budget *budget
	cop    *http.CrossOriginProtection
	log    *slog.Logger
}

// New returns an empty Door.
func New(c Config) *Door {
	if c.MaxBodyMemory <= 0 {
		c.MaxBodyMemory = DefaultMaxBodyMemory
	}
	if c.MaxBody <= 0 {
		c.MaxBody = 8 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.MaxBodyMemory = max(c.MaxBodyMemory, c.MaxBody) // one request of MaxBody must fit
	return &Door{
		cfg:    c,
		mux:    http.NewServeMux(),
		budget: newBudget(c.MaxBodyMemory, c.MaxBody),
		cop:    http.NewCrossOriginProtection(),
		log:    c.Logger,
	}
}

// Protocol registers a handler that verifies signatures itself: the SQS and
// SNS endpoints, whose authentication errors are part of their protocol.
func (d *Door) Protocol(pattern string, h http.Handler) {
	d.handle(pattern, Protocol, d.crossOrigin(h))
}

// Admin registers a handler of tidemq's own API. The door verifies its
// signature (when Config.Auth is set) and refuses state-changing calls that
// are GETs or are not JSON.
func (d *Door) Admin(pattern string, h http.Handler) {
	d.handle(pattern, Admin, d.admin(h))
}

// Probe registers a read-only endpoint for machines that cannot sign
// (/health, /metrics): Admin unless open is true.
func (d *Door) Probe(pattern string, h http.Handler, open bool) {
	if !open {
		d.Admin(pattern, h)
		return
	}
	if m, _, ok := strings.Cut(pattern, " "); !ok || (m != http.MethodGet && m != http.MethodHead) {
		panic("frontdoor: an open probe must be a GET route: " + pattern)
	}
	d.handle(pattern, Open, h)
}

// Asset registers a Public route: static files without data (the web
// console's page and scripts), answered unsigned even under --auth. The
// pattern must be a GET route (HEAD included). The handler must set
// its own browser protections (Content-Security-Policy, framing).
func (d *Door) Asset(pattern string, h http.Handler) {
	if m, _, ok := strings.Cut(pattern, " "); !ok || m != http.MethodGet {
		panic("frontdoor: an asset route must be a GET route: " + pattern)
	}
	d.handle(pattern, Public, h)
}

func (d *Door) handle(pattern string, a Access, h http.Handler) {
	d.mux.Handle(pattern, h)
	d.routes = append(d.routes, Route{Pattern: pattern, Access: a})
}

// Routes lists the registered routes in registration order.
func (d *Door) Routes() []Route { return slices.Clone(d.routes) }

// ServeHTTP checks the Host, takes body budget for the request and hands
// it to its route.
func (d *Door) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d.cfg.Auth == nil && !d.hostAllowed(r.Host) {
		writeError(w, &tidemq.Error{Code: tidemq.ErrMisdirectedRequest, Message: "This server runs without --auth and answers only requests for " +
			"an IP address, localhost or a host given with --allowed-hosts, not " + strconv.Quote(r.Host) + "."})
		return
	}
	release, ok := d.budget.acquire(w, r, d.cfg.MaxBody)
	if !ok {
		return
	}
	defer release()
	d.mux.ServeHTTP(w, r)
}

// hostAllowed reports whether a request for host may be answered without
// authentication. A web page can make a browser send requests to this
// server under the page's own domain name, re-pointed at 127.0.0.1 (DNS
// rebinding): to the browser they are same-origin, so the cross-origin
// check lets them through, and the page can read the answers. Such a
// request names the attacker's domain in Host; IP addresses and localhost
// cannot be re-pointed, and other names must be listed by the operator.
func (d *Door) hostAllowed(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	for _, a := range d.cfg.AllowedHosts {
		if a == "*" || strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// crossOrigin refuses cross-origin browser requests of every method. SQS's
// Query protocol changes state on GET (?Action=PurgeQueue), so the safe-
// method exemption of http.CrossOriginProtection must not apply; admin GETs
// are refused too, for one rule that is easy to state.
func (d *Door) crossOrigin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe := *r
		probe.Method = http.MethodPost
		if err := d.cop.Check(&probe); err != nil {
			d.log.Warn("refused a cross-origin browser request", "path", r.URL.Path, "remote", r.RemoteAddr,
				"origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
			writeError(w, tidemq.Errorf(tidemq.ErrAccessDenied, "Cross-origin browser requests are refused: "+
				"tidemq's APIs are for AWS SDKs, the AWS CLI and tidemq's own commands."))
			return
		}
		h.ServeHTTP(w, r)
	})
}
