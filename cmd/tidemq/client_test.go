package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/adminclient"
)

// An admin API refusal is one line: its code and the server's message
// without the canonical request it appends, and, for a signature refused,
// what to do about credentials.
func TestAdminError(t *testing.T) {
	answer := func(status int, body string) error {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		defer srv.Close()
		return adminError(adminclient.New(srv.URL, nil).Do(context.Background(), "GET", "/tidemq/triggers", nil, nil))
	}
	err := answer(403, `{"code":"SignatureDoesNotMatch","error":"The request signature we calculated does not match.\n\nThe Canonical String for this request should have been\n'GET\n/tidemq/triggers'"}`)
	if err == nil || strings.Contains(err.Error(), "Canonical") || !strings.Contains(err.Error(), "SignatureDoesNotMatch") ||
		!strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("403: %v", err)
	}
	if err := answer(200, ""); err != nil {
		t.Errorf("200: %v", err)
	}
	if err := answer(400, `{"error":"bad batch size"}`); err == nil || err.Error() != "bad batch size" {
		t.Errorf("400: %v", err)
	}
	// A permission refusal names its code: the signature was fine.
	err = answer(403, `{"code":"AccessDenied","error":"User: arn:aws:iam::000000000000:user/team-b is not authorized to perform: tidemq:CreateTrigger"}`)
	if err == nil || !strings.HasPrefix(err.Error(), "AccessDenied: User: ") || strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("403 AccessDenied: %v", err)
	}
	if err := answer(400, `{"code":"InvalidTrigger","error":"BatchSize must be 1 to 10"}`); err == nil || err.Error() != "InvalidTrigger: BatchSize must be 1 to 10" {
		t.Errorf("400 with a code: %v", err)
	}
	if err := answer(502, "<html>bad gateway</html>"); err == nil || !strings.Contains(err.Error(), "502") {
		t.Errorf("502 from a proxy: %v", err)
	}
}
