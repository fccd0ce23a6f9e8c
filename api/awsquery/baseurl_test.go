package awsquery

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

// TestBaseURL: the scheme follows TLS, then the first value of
// X-Forwarded-Proto; anything else in the header is ignored.
func TestBaseURL(t *testing.T) {
	for _, c := range []struct {
		tls   bool
		proto string
		want  string
	}{
		{false, "", "http://q.example:9324"},
		{true, "", "https://q.example:9324"},
		{false, "https", "https://q.example:9324"},
		{false, "HTTPS, http", "https://q.example:9324"},
		{true, "http", "http://q.example:9324"},
		{false, "gopher", "http://q.example:9324"},
	} {
		r := httptest.NewRequest("GET", "http://q.example:9324/", nil)
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if c.proto != "" {
			r.Header.Set("X-Forwarded-Proto", c.proto)
		}
		if got := BaseURL(r); got != c.want {
			t.Errorf("tls %v, X-Forwarded-Proto %q: %s, want %s", c.tls, c.proto, got, c.want)
		}
	}
}
