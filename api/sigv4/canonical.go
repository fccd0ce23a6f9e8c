package sigv4

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// queryParam is one decoded name=value pair of a query string.
type queryParam struct{ Name, Value string }

// queryParams is a decoded query string in wire order, duplicates kept.
type queryParams []queryParam

// parseQuery decodes a raw query string. Pairs are separated by '&' only;
// '+' decodes to a space. A component with a broken %-escape is taken
// literally, so that it still has a canonical form (and fails the
// signature check) instead of failing the parse.
func parseQuery(raw string) queryParams {
	var q queryParams
	for piece := range strings.SplitSeq(raw, "&") {
		if piece == "" {
			continue
		}
		name, value, _ := strings.Cut(piece, "=")
		q = append(q, queryParam{unescapeQuery(name), unescapeQuery(value)})
	}
	return q
}

func unescapeQuery(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// first returns the value of the first parameter called name.
func (q queryParams) first(name string) (string, bool) {
	for _, p := range q {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// canonicalQuery returns the canonical query string: every parameter except
// the one called exclude, RFC 3986 encoded, sorted by encoded name and then
// encoded value, joined with '&'.
func canonicalQuery(q queryParams, exclude string) string {
	enc := make([]queryParam, 0, len(q))
	for _, p := range q {
		if exclude != "" && p.Name == exclude {
			continue
		}
		enc = append(enc, queryParam{uriEncode(p.Name, true), uriEncode(p.Value, true)})
	}
	sort.Slice(enc, func(i, j int) bool {
		if enc[i].Name != enc[j].Name {
			return enc[i].Name < enc[j].Name
		}
		return enc[i].Value < enc[j].Value
	})
	var b strings.Builder
	for i, p := range enc {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.Name)
		b.WriteByte('=')
		b.WriteString(p.Value)
	}
	return b.String()
}

// canonicalURI returns the canonical URI of a request to a non-S3 service:
// the path as sent on the wire (already %-encoded), encoded once more.
func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	return uriEncode(p, false)
}

// uriEncode %-encodes every byte of s except the RFC 3986 unreserved
// characters and, unless encodeSlash, '/'. Hex digits are upper case.
func uriEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) || (c == '/' && !encodeSlash) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xF])
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// signedHeaderNames splits a SignedHeaders value into lower-case names, in
// the order given.
func signedHeaderNames(s string) []string {
	names := strings.Split(s, ";")
	for i, n := range names {
		names[i] = strings.ToLower(strings.TrimSpace(n))
	}
	return names
}

// canonicalHeaders returns one "name:value\n" line for each signed header,
// in the order given. Values are trimmed with inner runs of spaces and tabs
// collapsed, and the values of a repeated header are joined with ','.
func canonicalHeaders(r *http.Request, names []string) string {
	byName := make(map[string][]string, len(r.Header))
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		byName[lk] = append(byName[lk], vs...)
	}
	var b strings.Builder
	for _, name := range names {
		b.WriteString(name)
		b.WriteByte(':')
		switch values := byName[name]; {
		case name == "host" || name == ":authority":
			b.WriteString(normalizeHeaderValue(requestHost(r)))
		case len(values) == 0 && name == "content-length" && r.ContentLength >= 0:
			b.WriteString(strconv.FormatInt(r.ContentLength, 10))
		default:
			for i, v := range values {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(normalizeHeaderValue(v))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// requestHost is the host the client addressed: Request.Host, where
// net/http puts the Host header, or the URL's host on a client-side request.
func requestHost(r *http.Request) string {
	if r.Host != "" {
		return r.Host
	}
	if r.URL != nil {
		return r.URL.Host
	}
	return ""
}

// normalizeHeaderValue trims v and collapses each inner run of spaces and
// tabs to a single space.
func normalizeHeaderValue(v string) string {
	v = strings.Trim(v, " \t")
	if !strings.Contains(v, "  ") && !strings.ContainsRune(v, '\t') {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	space := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == ' ' || c == '\t' {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// canonicalRequest joins the six parts of a SigV4 canonical request.
func canonicalRequest(method, uri, query, headers, signedHeaders, payloadHash string) string {
	return method + "\n" + uri + "\n" + query + "\n" + headers + "\n" + signedHeaders + "\n" + payloadHash
}

// stringToSign builds the SigV4 string to sign.
func stringToSign(amzDate, scope, canonicalRequest string) string {
	return algorithm + "\n" + amzDate + "\n" + scope + "\n" + hashHex([]byte(canonicalRequest))
}
