// Package sns is the HTTP endpoint of tidemq's SNS subset: the Query
// protocol (API version 2010-03-31) over the topic store of package
// github.com/tidemq/tidemq/sns, and Route, which sends SNS requests to it
// and everything else to the SQS handler on the same port.
package sns

import (
	"bytes"
	"encoding/xml"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/awsquery"
	"github.com/tidemq/tidemq/api/sigv4"
	"github.com/tidemq/tidemq/sns"
)

// Namespace is the XML namespace of SNS responses.
const Namespace = "http://sns.amazonaws.com/doc/2010-03-31/"

// MaxRequestBytes bounds a request body. The largest legal request is a
// PublishBatch of SNS's 256 KiB of messages and attributes, whose form
// encoding is at most about 4 times as long (%XX escapes, base64 binary
// values escaped again), plus names and structure.
const MaxRequestBytes = 2 << 20

// query is SNS's dialect of the Query protocol (package awsquery parses the
// forms and writes the XML envelopes): no <Detail/> in errors, parameter
// problems worded as SNS's InvalidParameter, a form that does not decode
// answered MalformedQueryString, and the message of a Publish or of a batch
// entry left to the topic service, which refuses one that is not UTF-8
// with an error of its own.
var query = &awsquery.Service{
	Namespace:        Namespace,
	KeepValue:        keptForDomain,
	InvalidParameter: sns.InvalidParameter,
	MalformedForm: func(source string, _ error) *tidemq.Error {
		if source == awsquery.FromURL {
			return tidemq.Errorf(tidemq.ErrMalformedQueryString, "The URL's query string is not a valid query string")
		}
		return tidemq.Errorf(tidemq.ErrMalformedQueryString, "The request body is not a valid query string")
	},
}

// keptForDomain reports whether a parameter's value is the message of a
// Publish or of a PublishBatch entry.
func keptForDomain(name string) bool {
	return name == "Message" || strings.HasPrefix(name, "PublishBatchRequestEntries.") && strings.HasSuffix(name, ".Message")
}

// Authenticator checks request signatures: sigv4's, shared by both
// transports and the front door.
type Authenticator = sigv4.Authenticator

// Config configures the SNS handler.
type Config struct {
	Service *sns.Service
	// PublicURL, when set, is the base of SigningCertURL and UnsubscribeURL;
	// otherwise they are built from the request's scheme and Host.
	PublicURL string
	Auth      Authenticator // nil accepts any credentials
	// Authorize decides a signed call's permissions (--auth): nil, or
	// AccessDenied (answered as AuthorizationError). nil allows every call.
	Authorize func(r *http.Request, accessKey, action, resource string) error
	// Allowed is Authorize for listings, without auditing a refusal:
	// ListTopics lists the topics the caller may sns:ListTopics on, rather
	// than all or none. nil: ListTopics is decided on every topic at once
	// (arn:aws:sns:<region>:<account>:*) by Authorize.
	Allowed func(r *http.Request, accessKey, action, resource string) bool
	// CallerAccount returns the account of the caller signing with an
	// access key (package authz): CreateTopic creates in it, ListTopics
	// and ListSubscriptions list it. Nil, or "" for a key: the service's.
	CallerAccount func(accessKey string) string
	Logger        *slog.Logger
	// Observe, if set, is called once per answered request (metrics) with
	// its action as SNS.<Action> ("unknown" for a name outside the action
	// table, or none), its error code ("" on success), the HTTP status and
	// the time taken: the SQS handler's Observe, so one metrics family
	// counts both.
	Observe func(action, code string, status int, d time.Duration)
}

// NewHandler returns the SNS Query endpoint. It also serves the signing
// certificate at sns.CertPath.
func NewHandler(c Config) http.Handler {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	return &handler{cfg: c, svc: c.Service, log: c.Logger}
}

type handler struct {
	cfg Config
	svc *sns.Service
	log *slog.Logger
}

type request struct {
	h         *handler
	r         *http.Request
	params    *awsquery.Node
	action    string
	requestID string
	client    tidemq.ClientInfo
	// anonymous is true when the request carries no AWS signature.
	anonymous bool
	key       string // the access key that signed it ("" when none)
	// account is the caller's account (Config.CallerAccount), "" for
	// the service's.
	account string
	// status and code are the answer's HTTP status and error code ("" for
	// a success), for the metrics and the request's log line.
	status int
	code   string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == sns.CertPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		w.Header().Set("Content-Type", "application/x-pem-file")
		_, _ = w.Write(h.svc.CertificatePEM())
		return
	}
	start := time.Now()
	q := &request{h: h, r: r, requestID: awsquery.NewRequestID(), status: http.StatusOK}
	defer h.logRequest(q, start)               // last: a panic's answer is counted too
	defer awsquery.Recover(h.log, "sns", w, q) // the transports' one recover (q.Fail)
	out, err := q.serve(w)
	if err != nil {
		q.status, q.code = q.writeError(w, err)
		return
	}
	q.writeResult(w, out)
}

// Fail answers a request whose serving panicked with InternalError
// (awsquery.Recover calls it) and says what the log line names.
func (q *request) Fail(w http.ResponseWriter) []any {
	q.status, q.code = q.writeError(w, sns.InternalFault())
	return []any{"action", q.action, "request_id", q.requestID}
}

// logRequest counts the request in the metrics and logs it.
func (h *handler) logRequest(q *request, start time.Time) {
	if h.cfg.Observe != nil {
		h.cfg.Observe(q.metricAction(), q.code, q.status, time.Since(start))
	}
	level := slog.LevelDebug
	if q.status >= 500 {
		level = slog.LevelError
	}
	h.log.Log(q.r.Context(), level, "sns request", "action", q.action, "status", q.status,
		"request_id", q.requestID, "remote", q.r.RemoteAddr, "duration", time.Since(start))
}

func (q *request) serve(w http.ResponseWriter) (any, error) {
	body, err := awsquery.ReadBody(w, q.r, MaxRequestBytes)
	if tidemq.HasCode(err, tidemq.ErrRequestEntityTooLarge) {
		return nil, tidemq.Errorf(tidemq.ErrRequestEntityTooLarge, "Request body is too large")
	}
	if err != nil {
		return nil, tidemq.Errorf(tidemq.ErrSNSInvalidParameter, "could not read the request body")
	}
	if q.params, err = query.Parse(q.r, body); err != nil {
		return nil, err
	}
	q.action = q.params.Str("Action")
	if q.action == "" {
		return nil, tidemq.MissingAction()
	}
	q.anonymous = q.r.Header.Get("Authorization") == "" && q.params.Str("X-Amz-Signature") == "" && q.params.Str("Signature") == ""
	var key string
	if q.h.cfg.Auth != nil && !(q.anonymous && anonymousActions[q.action]) {
		if key, err = q.h.cfg.Auth.Authenticate(q.r, body); err != nil {
			return nil, err
		}
	}
	q.key = key
	if f := q.h.cfg.CallerAccount; f != nil && key != "" {
		q.account = f(key)
	}
	q.client = tidemq.NewClientInfo(q.r.RemoteAddr, q.r.UserAgent(), key)
	a, ok := actions[q.action]
	if !ok {
		return nil, tidemq.InvalidAction(q.action)
	}
	if err := q.authorize(key); err != nil {
		return nil, err
	}
	return a(q)
}

// metricAction is the request's action as the metrics label it:
// SNS.<Action> for a name from the action table or one of AWS's that
// tidemq refuses (unimplemented), "unknown" otherwise.
func (q *request) metricAction() string {
	if _, ok := actions[q.action]; ok || unimplemented[q.action] {
		return "SNS." + q.action
	}
	return "unknown"
}

// baseURL is the scheme and host notifications link to.
func (q *request) baseURL() string {
	if q.h.cfg.PublicURL != "" {
		return q.h.cfg.PublicURL
	}
	return awsquery.BaseURL(q.r) // SQS's rule: the first of a list of X-Forwarded-Proto values
}

// writeResult writes out (an encoding/xml value whose element is named
// "result", or nil) as the action's result.
func (q *request) writeResult(w http.ResponseWriter, out any) {
	var result *awsquery.XMLWriter
	if out != nil {
		inner, err := xml.Marshal(out)
		if err != nil {
			q.writeError(w, err)
			return
		}
		// Only what is inside out's <result> element is the result's.
		inner = bytes.TrimPrefix(inner, []byte("<result>"))
		inner = bytes.TrimSuffix(inner, []byte("</result>"))
		result = new(awsquery.XMLWriter)
		result.Raw(inner)
	}
	query.WriteResult(w, q.action, q.requestID, result)
}

// writeError answers with err and returns the status and code written.
// Every *tidemq.Error is answered as it is
// (the topic service's are the catalogue's SNS entries, an authenticator's
// the common signature errors); anything else is logged and answered as
// SNS's InternalError: its text may say things a client should not see.
// Besides the XML, the code and fault are in x-amzn-query-error.
func (q *request) writeError(w http.ResponseWriter, err error) (status int, code string) {
	var e *tidemq.Error
	if !errors.As(err, &e) || e.Code == nil {
		q.h.log.Error("sns: internal error", "action", q.action, "err", err)
		e = sns.AsError(err)
	}
	w.Header().Set("X-Amzn-Query-Error", e.Code.Code+";"+string(e.Code.Fault))
	return query.WriteError(w, q.requestID, e), e.Code.Code
}
