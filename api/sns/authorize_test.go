package sns_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	apisns "github.com/tidemq/tidemq/api/sns"
)

type acceptAll struct{}

func (acceptAll) Authenticate(*http.Request, []byte) (string, error) { return "AKID", nil }

// The resource a call is authorized on is the topic it acts on, whichever
// parameter names it: a Publish by TargetArn is not a call on every topic.
func TestAuthorizeResource(t *testing.T) {
	e := newEnv(t)
	topic := e.topic("orders", nil)
	form := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	var got []string
	h := apisns.NewHandler(apisns.Config{Service: e.svc, Auth: acceptAll{}, Logger: slog.New(slog.DiscardHandler),
		Authorize: func(_ *http.Request, _, action, resource string) error {
			got = append(got, action+" "+resource)
			return nil
		}})
	for _, c := range []struct{ form, want string }{
		{form("Action", "Publish", "TopicArn", topic, "Message", "m"), "sns:Publish " + topic},
		{form("Action", "Publish", "TargetArn", topic, "Message", "m"), "sns:Publish " + topic},
		{form("Action", "GetTopicAttributes", "TopicArn", topic), "sns:GetTopicAttributes " + topic},
	} {
		got = nil
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.form))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: authorized %q, want %q (status %d)", c.form, got, c.want, w.Code)
		}
	}
}
