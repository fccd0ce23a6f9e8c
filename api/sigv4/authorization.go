package sigv4

import (
	"fmt"
	"net/http"
	"strings"
)

// Names of the presigned query parameters and of the headers that carry
// signing material.
const (
	queryAlgorithm     = "X-Amz-Algorithm"
	queryCredential    = "X-Amz-Credential"
	queryDate          = "X-Amz-Date"
	queryExpires       = "X-Amz-Expires"
	querySignedHeaders = "X-Amz-SignedHeaders"
	querySignature     = "X-Amz-Signature"

	headerAuthorization = "Authorization"
	headerAmzDate       = "X-Amz-Date"
	headerDate          = "Date"
	headerContentSHA256 = "X-Amz-Content-Sha256"
)

// The three elements of an Authorization header, as AWS names them.
const (
	elemCredential    = "Credential"
	elemSignedHeaders = "SignedHeaders"
	elemSignature     = "Signature"
)

// authorization is a parsed "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…,
// Signature=…" header. An element the header lacks is left empty; unknown
// elements are ignored.
type authorization struct {
	Algorithm     string
	Credential    string
	SignedHeaders string
	Signature     string
}

// authSyntaxError is a malformed Authorization header: an element without
// '=' or an element given twice. Its message is worded for the client.
type authSyntaxError struct{ msg string }

func (e *authSyntaxError) Error() string { return e.msg }

// isSeparator reports whether c separates the elements of an Authorization
// header. AWS accepts commas, whitespace or both.
func isSeparator(c rune) bool { return c == ' ' || c == '\t' || c == ',' }

// parseAuthorization splits an Authorization header into its algorithm and
// elements. It checks only syntax. Whether the required elements are there,
// and what they hold, is the verifier's business. It never panics, whatever
// the input (see FuzzParseAuthorization).
func parseAuthorization(header string) (authorization, error) {
	var a authorization
	header = strings.TrimSpace(header)
	rest := ""
	if i := strings.IndexFunc(header, isSeparator); i >= 0 {
		a.Algorithm, rest = header[:i], header[i:]
	} else {
		a.Algorithm = header
	}
	seen := map[string]bool{}
	for _, elem := range strings.FieldsFunc(rest, isSeparator) {
		key, value, ok := strings.Cut(elem, "=")
		if !ok {
			return authorization{}, &authSyntaxError{fmt.Sprintf(
				"'%s' not a valid key=value pair (missing equal-sign) in Authorization header: '%s'.", elem, header)}
		}
		var field *string
		switch key {
		case elemCredential:
			field = &a.Credential
		case elemSignedHeaders:
			field = &a.SignedHeaders
		case elemSignature:
			field = &a.Signature
		default:
			continue
		}
		if seen[key] {
			return authorization{}, &authSyntaxError{fmt.Sprintf(
				"'%s' given more than once in Authorization header: '%s'.", key, header)}
		}
		seen[key] = true
		*field = value
	}
	return a, nil
}

// credential is a parsed Credential element or X-Amz-Credential parameter:
// <access key id>/<yyyymmdd>/<region>/<service>/aws4_request.
type credential struct {
	AccessKeyID string
	Date        string
	Region      string
	Service     string
	Terminator  string
}

// Scope returns the credential scope, everything after the access key id.
func (c credential) Scope() string {
	return c.Date + "/" + c.Region + "/" + c.Service + "/" + c.Terminator
}

// parseCredential splits a credential into its five parts. Trailing slashes
// are ignored, as AWS ignores them. ok is false unless there are exactly
// five parts.
func parseCredential(s string) (c credential, ok bool) {
	parts := strings.Split(strings.TrimRight(s, "/"), "/")
	if len(parts) != 5 {
		return credential{}, false
	}
	return credential{parts[0], parts[1], parts[2], parts[3], parts[4]}, true
}

// isPresigned reports whether the request carries SigV4 material in its query
// string.
func isPresigned(q queryParams) bool {
	for _, name := range []string{queryAlgorithm, queryCredential, querySignature} {
		if _, ok := q.first(name); ok {
			return true
		}
	}
	return false
}

// hasHeaderSignature reports whether the Authorization header claims SigV4.
// AWS treats a header of any other scheme as no signature at all.
func hasHeaderSignature(header string) bool {
	return strings.HasPrefix(strings.TrimSpace(header), "AWS4-")
}

// AccessKeyOf extracts the access key id from a request's Authorization
// header or X-Amz-Credential query parameter without verifying anything.
// It returns "" if there is none. The transports use it to fill SenderId
// when authentication is off.
func AccessKeyOf(r *http.Request) string {
	if h := r.Header.Get(headerAuthorization); hasHeaderSignature(h) {
		for _, elem := range strings.FieldsFunc(h, isSeparator) {
			if v, ok := strings.CutPrefix(elem, elemCredential+"="); ok {
				id, _, _ := strings.Cut(v, "/")
				return id
			}
		}
		return ""
	}
	if r.URL == nil {
		return ""
	}
	if v, ok := parseQuery(r.URL.RawQuery).first(queryCredential); ok {
		id, _, _ := strings.Cut(v, "/")
		return id
	}
	return ""
}

// ScopeRegion returns the region of r's SigV4 credential scope (the
// Authorization header's Credential, or the presigned X-Amz-Credential),
// or "" when r carries no such scope. It does not verify anything: a
// request is only served once the Verifier accepted it, and what region
// the signature claims is the region the client means.
func ScopeRegion(r *http.Request) string {
	cred := r.URL.Query().Get(queryCredential)
	if a := r.Header.Get("Authorization"); a != "" {
		_, rest, ok := strings.Cut(a, elemCredential+"=")
		if !ok {
			return ""
		}
		cred, _, _ = strings.Cut(rest, ",")
	}
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}
