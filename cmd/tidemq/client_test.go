package main

import (
	"strings"
	"testing"
)

// An admin API refusal is one line: the server's message without the
// canonical request it appends, and what to do about credentials.
func TestAdminError(t *testing.T) {
	body := []byte(`{"code":"SignatureDoesNotMatch","error":"The request signature we calculated does not match.\n\nThe Canonical String for this request should have been\n'GET\n/tidemq/triggers'"}`)
	err := adminError("GET", "http://x/tidemq/triggers", 403, body)
	if err == nil || strings.Contains(err.Error(), "Canonical") || !strings.Contains(err.Error(), "SignatureDoesNotMatch") ||
		!strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("403: %v", err)
	}
	if err := adminError("GET", "http://x/", 200, nil); err != nil {
		t.Errorf("200: %v", err)
	}
	if err := adminError("POST", "http://x/tidemq/triggers", 400, []byte(`{"error":"bad batch size"}`)); err == nil || err.Error() != "bad batch size" {
		t.Errorf("400: %v", err)
	}
	if err := adminError("GET", "http://x/tidemq/alarms", 502, []byte("<html>bad gateway</html>")); err == nil || !strings.Contains(err.Error(), "502") {
		t.Errorf("502 from a proxy: %v", err)
	}
}
