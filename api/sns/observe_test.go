package sns_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apisns "github.com/tidemq/tidemq/api/sns"
)

// TestObserveCountsSNSRequests: every answered SNS request reaches
// Observe (the metrics) with its action as SNS.<Action>, a made-up action
// as "unknown", and the error code of an error.
func TestObserveCountsSNSRequests(t *testing.T) {
	e := newEnv(t)
	type seen struct {
		action, code string
		status       int
	}
	var got []seen
	h := apisns.NewHandler(apisns.Config{Service: e.svc, Logger: slog.New(slog.DiscardHandler),
		Observe: func(action, code string, status int, _ time.Duration) { got = append(got, seen{action, code, status}) }})
	for _, body := range []string{"Action=ListTopics", "Action=NoSuchAction", "Action=GetTopicAttributes&TopicArn=nope"} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	if len(got) != 3 || got[0] != (seen{"SNS.ListTopics", "", 200}) || got[1] != (seen{"unknown", "InvalidAction", 400}) ||
		got[2].action != "SNS.GetTopicAttributes" || got[2].code == "" || got[2].status < 400 {
		t.Errorf("observed %+v", got)
	}
}

// panicAuth is an Authenticator with a bug: it panics.
type panicAuth struct{}

func (panicAuth) Authenticate(*http.Request, []byte) (string, error) { panic("boom") }

// TestPanicBecomesInternalError: a panic while serving an SNS request is
// answered with SNS's InternalError, logged with its stack, and counted,
// through the recover the SQS transport uses too (awsquery.Recover).
func TestPanicBecomesInternalError(t *testing.T) {
	e := newEnv(t)
	var logs bytes.Buffer
	var status int
	h := apisns.NewHandler(apisns.Config{Service: e.svc, Auth: panicAuth{}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Observe: func(_, _ string, s int, _ time.Duration) { status = s }})
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("Action=ListTopics"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), "<Code>InternalError</Code>") || status != 500 {
		t.Errorf("%d (observed %d) %s", rec.Code, status, rec.Body.String())
	}
	if l := logs.String(); !strings.Contains(l, "sns: panic while serving a request") || !strings.Contains(l, "boom") ||
		!strings.Contains(l, "action=ListTopics") || !strings.Contains(l, "stack=") {
		t.Errorf("panic not logged: %s", l)
	}
}
