// Package sns is the HTTP endpoint of tidemq's SNS subset: the Query
// protocol (API version 2010-03-31) over the topic store of package
// github.com/tidemq/tidemq/sns, and Route, which sends SNS requests to it
// and everything else to the SQS handler on the same port.
package sns

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/sns"
)

// Namespace is the XML namespace of SNS responses.
const Namespace = "http://sns.amazonaws.com/doc/2010-03-31/"

// MaxRequestBytes bounds a request body.
const MaxRequestBytes = 2 << 20

// Authenticator checks request signatures (see api/sqs.Authenticator).
type Authenticator interface {
	Authenticate(r *http.Request, body []byte) (accessKey string, err error)
}

// Config configures the SNS handler.
type Config struct {
	Service *sns.Service
	// PublicURL, when set, is the base of SigningCertURL and UnsubscribeURL;
	// otherwise they are built from the request's scheme and Host.
	PublicURL string
	Auth      Authenticator // nil accepts any credentials
	Logger    *slog.Logger
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
	form      url.Values
	action    string
	requestID string
	client    tidemq.ClientInfo
	// anonymous is true when the request carries no AWS signature.
	anonymous bool
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == sns.CertPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		w.Header().Set("Content-Type", "application/x-pem-file")
		_, _ = w.Write(h.svc.CertificatePEM())
		return
	}
	start := time.Now()
	q := &request{h: h, r: r, requestID: newRequestID()}
	status := http.StatusOK
	defer func() {
		if v := recover(); v != nil {
			h.log.Error("sns: panic while serving a request", "action", q.action, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			status = q.writeError(w, sns.InternalError("An internal error occurred."))
		}
		level := slog.LevelDebug
		if status >= 500 {
			level = slog.LevelError
		}
		h.log.Log(r.Context(), level, "sns request", "action", q.action, "status", status,
			"request_id", q.requestID, "remote", r.RemoteAddr, "duration", time.Since(start))
	}()
	out, err := q.serve()
	if err != nil {
		status = q.writeError(w, err)
		return
	}
	q.writeResult(w, out)
}

func (q *request) serve() (any, error) {
	body, err := io.ReadAll(io.LimitReader(q.r.Body, MaxRequestBytes+1))
	if err != nil {
		return nil, tidemq.Errorf(tidemq.ErrSNSInvalidParameter, "could not read the request body")
	}
	if len(body) > MaxRequestBytes {
		return nil, tidemq.Errorf(tidemq.ErrRequestEntityTooLarge, "Request body is too large")
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, tidemq.Errorf(tidemq.ErrMalformedQueryString, "The request body is not a valid query string")
	}
	for k, v := range q.r.URL.Query() {
		if _, ok := form[k]; !ok {
			form[k] = v
		}
	}
	q.form = form
	q.action = form.Get("Action")
	if q.action == "" {
		return nil, tidemq.Errorf(tidemq.ErrMissingAction, "The request must contain the parameter Action.")
	}
	q.anonymous = q.r.Header.Get("Authorization") == "" && form.Get("X-Amz-Signature") == "" && form.Get("Signature") == ""
	var key string
	if q.h.cfg.Auth != nil && !(q.anonymous && anonymousActions[q.action]) {
		if key, err = q.h.cfg.Auth.Authenticate(q.r, body); err != nil {
			return nil, err
		}
	}
	q.client = tidemq.NewClientInfo(q.r.RemoteAddr, q.r.UserAgent(), key)
	a, ok := actions[q.action]
	if !ok {
		return nil, tidemq.Errorf(tidemq.ErrInvalidAction, "The action %s is not valid for this endpoint.", q.action)
	}
	return a(q)
}

// baseURL is the scheme and host notifications link to.
func (q *request) baseURL() string {
	if q.h.cfg.PublicURL != "" {
		return q.h.cfg.PublicURL
	}
	scheme := "http"
	if q.r.TLS != nil || strings.EqualFold(q.r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + q.r.Host
}

type responseMetadata struct {
	RequestID string `xml:"RequestId"`
}

// writeResult writes <ActionResponse><ActionResult>out</ActionResult>
// <ResponseMetadata/></ActionResponse>.
func (q *request) writeResult(w http.ResponseWriter, out any) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	fmt.Fprintf(&b, `<%sResponse xmlns="%s">`, q.action, Namespace)
	if out != nil {
		inner, err := xml.Marshal(out)
		if err != nil {
			q.writeError(w, err)
			return
		}
		// out's element is named after the result type; rename it.
		fmt.Fprintf(&b, "<%sResult>", q.action)
		if i := bytes.IndexByte(inner, '>'); i >= 0 && bytes.HasSuffix(inner, []byte("</result>")) {
			inner = inner[i+1 : len(inner)-len("</result>")]
		}
		b.Write(inner)
		fmt.Fprintf(&b, "</%sResult>", q.action)
	}
	meta, _ := xml.Marshal(struct {
		XMLName xml.Name `xml:"ResponseMetadata"`
		responseMetadata
	}{responseMetadata: responseMetadata{q.requestID}})
	b.Write(meta)
	fmt.Fprintf(&b, "</%sResponse>", q.action)
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("x-amzn-RequestId", q.requestID)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}

type errorResponse struct {
	XMLName   xml.Name  `xml:"ErrorResponse"`
	Xmlns     string    `xml:"xmlns,attr"`
	Error     errorBody `xml:"Error"`
	RequestID string    `xml:"RequestId"`
}

type errorBody struct {
	Type    string `xml:"Type"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// writeError answers with err. Every *tidemq.Error is answered as it is
// (the topic service's are the catalogue's SNS entries, an authenticator's
// the common signature errors); anything else is logged and answered as
// SNS's InternalError: its text may say things a client should not see.
func (q *request) writeError(w http.ResponseWriter, err error) int {
	var e *tidemq.Error
	if !errors.As(err, &e) || e.Code == nil {
		q.h.log.Error("sns: internal error", "action", q.action, "err", err)
		e = sns.AsError(err)
	}
	typ := string(e.Code.Fault)
	b, _ := xml.Marshal(errorResponse{Xmlns: Namespace, Error: errorBody{Type: typ, Code: e.Code.Code, Message: e.Message}, RequestID: q.requestID})
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("x-amzn-RequestId", q.requestID)
	w.Header().Set("x-amzn-query-error", e.Code.Code+";"+typ)
	w.WriteHeader(e.Code.Status)
	_, _ = w.Write(append([]byte(xml.Header), b...))
	return e.Code.Status
}
