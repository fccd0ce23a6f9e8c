package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/adminclient"
)

// An admin API refusal is one line: the server's message without the
// canonical request it appends, and what to do about credentials.
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
	if err := answer(502, "<html>bad gateway</html>"); err == nil || !strings.Contains(err.Error(), "502") {
		t.Errorf("502 from a proxy: %v", err)
	}
}
