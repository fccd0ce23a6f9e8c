package awsquery

import (
	"net/http"
	"strings"
)

// BaseURL is the scheme and host a client used to reach the server, for
// the URLs an answer gives back (SQS's queue URLs, SNS's SigningCertURL
// and UnsubscribeURL) when no public URL is configured: https when the
// connection is TLS, unless a proxy's X-Forwarded-Proto says otherwise
// (its first value, when it lists several hops).
func BaseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p != "" {
		p, _, _ = strings.Cut(p, ",")
		if p = strings.ToLower(strings.TrimSpace(p)); p == "http" || p == "https" {
			scheme = p
		}
	}
	host := r.Host
	if host == "" && r.URL != nil {
		host = r.URL.Host
	}
	return scheme + "://" + host
}
