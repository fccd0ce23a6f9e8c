package sns_test

import (
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
