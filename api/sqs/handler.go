package sqs

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/awsquery"
	"github.com/tidemq/tidemq/api/sigv4"
)

// Authenticator checks request signatures: sigv4's, shared by both
// transports and the front door.
type Authenticator = sigv4.Authenticator

// Config configures the SQS handler.
type Config struct {
	Broker tidemq.Broker
	// Region is the default region: the broker's home region, and the
	// region of an unsigned request. A signed request is for the region
	// of its credential scope; each region's queues are its own.
	Region    string // default "us-east-1"
	AccountID string // default tidemq.DefaultAccountID
	// Regions reports whether a region other than Region may be asked
	// for. Nil: the regions AWS serves (tidemq.AWSRegion).
	Regions func(region string) bool
	// PublicURL, when set (e.g. "https://queues.example.com"), is the base
	// of every queue URL, "{region}" in it replaced by the queue's region
	// ("https://sqs.{region}.example.com"); otherwise queue URLs are built
	// from the request:
	// scheme (http, or https if r.TLS != nil or X-Forwarded-Proto says so)
	// and Host.
	PublicURL string
	// Auth checks signatures. Nil accepts any credentials; the access key is
	// then still taken from the Authorization header or X-Amz-Credential.
	Auth Authenticator
	// Authorizer decides each call's permissions (--auth); nil allows
	// every call.
	Authorizer Authorizer
	// CallerAccount returns the account of the caller signing with an
	// access key (its principal's, package authz): the account its
	// CreateQueue, ListQueues and GetQueueUrl are in and a bare queue name
	// names a queue of. Nil, or "" for a key: AccountID.
	CallerAccount func(accessKey string) string
	Logger        *slog.Logger // nil: slog.Default()
	// Observe, if set, is called once per answered request with its action
	// (a name from the action table or an extension's target, "unknown"
	// for any other name or none: see metricAction), its error code
	// ("" on success), the HTTP status and the time taken. Metrics use it.
	Observe func(action, code string, status int, d time.Duration)
}

// Defaults for Config.
const (
	DefaultRegion    = tidemq.DefaultRegion
	DefaultAccountID = tidemq.DefaultAccountID
)

// NewHandler returns the http.Handler of the SQS endpoint. It answers every
// request it is given (it serves no health or metrics paths of its own).
func NewHandler(c Config) http.Handler {
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	if c.AccountID == "" {
		c.AccountID = DefaultAccountID
	}
	if c.Regions == nil {
		c.Regions = tidemq.AWSRegion
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return &handler{cfg: c, log: c.Logger}
}

type handler struct {
	cfg Config
	log *slog.Logger
}

// protocol is the wire protocol of one request.
type protocol int

const (
	protoQuery protocol = iota
	protoJSON
)

func (p protocol) String() string {
	if p == protoJSON {
		return "json"
	}
	return "query"
}

// call is one request in flight: what the actions need to know about it.
type call struct {
	h         *handler
	r         *http.Request
	proto     protocol
	action    string
	requestID string
	accessKey string
	// queryJSON: a Query request that asked for JSON (Accept:
	// application/json), answered in AWS's JSON form of the Query
	// protocol (queryjson.go).
	queryJSON bool
	// region is the request's region (requestRegion): queues are looked
	// up and created in it.
	region string
	// account is the caller's account (Config.CallerAccount): queues are
	// created and listed in it; a queue URL may name another.
	account string
	// status and code are the answer's HTTP status and error code ("" for
	// a success), for the metrics and the request's log line.
	status int
	code   string
}

// ServeHTTP decodes a request, runs its action and encodes the answer.
// The whole answer is built before anything is written, so a failure at any
// point (a panic included) still produces a well-formed error response.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	c := &call{h: h, r: r, proto: detectProtocol(r), requestID: newRequestID(), status: http.StatusOK}
	c.queryJSON = c.proto == protoQuery && acceptsJSON(r)
	defer h.logRequest(c, start)               // last: a panic's answer is counted too
	defer awsquery.Recover(h.log, "sqs", w, c) // the transports' one recover (c.Fail)
	out, err := c.serve(w)
	if err != nil {
		c.status, c.code = c.writeError(w, err), errorCode(err)
		return
	}
	c.status = c.writeOutput(w, out)
}

// Fail answers a request whose serving panicked with InternalFailure
// (awsquery.Recover calls it) and says what the log line names.
func (c *call) Fail(w http.ResponseWriter) []any {
	c.status, c.code = c.writeError(w, tidemq.InternalFailure()), errorCode(tidemq.InternalFailure())
	return []any{"action", c.action, "protocol", c.proto.String(), "request_id", c.requestID}
}

// serve reads, authenticates, routes and runs the request.
func (c *call) serve(w http.ResponseWriter) (output, error) {
	body, err := readBody(w, c.r)
	if err != nil {
		return nil, err
	}
	if c.region, err = c.requestRegion(); err != nil {
		return nil, err
	}
	if c.extension() { // tidemq's own actions: extensions.go
		return c.serveExtension(body)
	}
	var q *qnode
	if c.proto == protoJSON {
		c.action, err = jsonAction(c.r)
	} else {
		q, err = parseQueryParams(c.r, body)
		if err == nil {
			c.action, err = queryAction(c.r, q)
		}
	}
	if err != nil {
		return nil, err
	}
	if c.accessKey, err = c.authenticate(body); err != nil {
		return nil, err
	}
	c.account = c.callerAccount()
	a, ok := actions[c.action]
	if !ok || (c.proto == protoQuery && serviceActions[c.action] && onQueuePath(c.r) && !(c.action == "GetQueueUrl" && c.r.Method == http.MethodGet)) {
		return nil, tidemq.InvalidAction(c.action)
	}
	var in any
	if c.proto == protoJSON {
		in, err = a.decodeJSON(body)
	} else {
		in, err = a.decodeQuery(q)
	}
	if err != nil {
		return nil, err
	}
	return a.run(c, in)
}

// serviceActions are the actions about the service rather than one queue.
// AWS refuses them, in the Query protocol, on a queue URL ("The action
// CreateQueue is not valid for this endpoint."), except GetQueueUrl as a
// GET, which AWS answers there (200, the QueueUrl); JSON requests are
// routed by X-Amz-Target whatever their path (Java SDK v1 posts to queue
// paths).
var serviceActions = map[string]bool{"CreateQueue": true, "ListQueues": true, "GetQueueUrl": true}

// onQueuePath reports whether a request was sent to a queue URL (any path
// but the root) rather than to the service endpoint.
func onQueuePath(r *http.Request) bool { return strings.Trim(r.URL.Path, "/") != "" }

// errorCode names an error for metrics: its catalogue shape, or
// InternalFailure for anything that is answered as one.
func errorCode(err error) string {
	var e *tidemq.Error
	if errors.As(err, &e) && e.Code != nil {
		if e.Code.Shape != "" {
			return e.Code.Shape
		}
		return e.Code.Code
	}
	return tidemq.ErrInternalFailure.Shape
}

func (h *handler) logRequest(c *call, start time.Time) {
	status, code := c.status, c.code
	d := time.Since(start)
	if h.cfg.Observe != nil {
		h.cfg.Observe(c.metricAction(), code, status, d)
	}
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelError
	}
	if !h.log.Enabled(c.r.Context(), level) {
		return // building the record costs allocations on every request
	}
	h.log.Log(c.r.Context(), level, "sqs request", "action", c.action, "protocol", c.proto.String(),
		"status", status, "request_id", c.requestID, "remote", c.r.RemoteAddr,
		"duration", d)
}

// detectProtocol tells JSON from Query by the headers alone: X-Amz-Target or
// a JSON content type mean JSON, anything else is Query.
func detectProtocol(r *http.Request) protocol {
	if r.Header.Get("X-Amz-Target") != "" {
		return protoJSON
	}
	if strings.HasPrefix(strings.ToLower(r.Header.Get("Content-Type")), "application/x-amz-json") {
		return protoJSON
	}
	return protoQuery
}

// jsonTargetPrefix is the service part of X-Amz-Target.
const jsonTargetPrefix = "AmazonSQS."

// jsonAction returns the action named by X-Amz-Target.
func jsonAction(r *http.Request) (string, error) {
	target := r.Header.Get("X-Amz-Target")
	if target == "" {
		return "", tidemq.Errorf(tidemq.ErrUnknownOperation, "An unknown operation was requested: the X-Amz-Target header is missing.")
	}
	action, ok := strings.CutPrefix(target, jsonTargetPrefix)
	if !ok || action == "" {
		return "", tidemq.InvalidAction(target)
	}
	return action, nil
}

// queryAction returns the Action parameter of a Query request.
func queryAction(r *http.Request, q *qnode) (string, error) {
	if action := q.str("Action"); action != "" {
		return action, nil
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if onQueuePath(r) {
			return "", errBareUnknownOperation
		}
		return "", tidemq.UnknownOperation()
	}
	return "", tidemq.MissingAction()
}
