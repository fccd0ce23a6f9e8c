package sigv4

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
)

// DefaultMaxSkew is the clock skew a Verifier allows when MaxSkew is 0:
// 15 minutes, the window SQS enforces (its "Signature expired" messages end
// in "- 15 min."), so a client that works against AWS works here too.
const DefaultMaxSkew = 15 * time.Minute

// maxPresignExpires is the longest X-Amz-Expires SigV4 allows: seven days.
const maxPresignExpires = 7 * 24 * time.Hour

// Verifier verifies SigV4 signatures against a fixed set of credentials. Its
// fields must not change while Authenticate runs; Authenticate is then safe
// for concurrent use.
type Verifier struct {
	// Credentials maps the access key ids that may call to their secrets.
	Credentials Credentials
	// Clock tells the time that request dates are checked against; nil
	// means tidemq.SystemClock{}.
	Clock tidemq.Clock
	// MaxSkew is how far a request's date may be from the clock; 0 means
	// DefaultMaxSkew.
	MaxSkew time.Duration
	// Services lists the service names accepted in the credential scope,
	// e.g. "sqs", "sns"; empty accepts any.
	Services []string
	// MaxPresignExpires caps the X-Amz-Expires of presigned requests below
	// SigV4's seven days; 0 leaves SigV4's limit (SQS's Query presign, as
	// on AWS). tidemq's admin API uses AdminPresignExpires.
	MaxPresignExpires time.Duration
}

// AdminPresignExpires is how long a presigned URL of tidemq's admin API
// (backups, triggers, queues) stays valid at most: a leaked URL that
// changes state must not work for a week.
const AdminPresignExpires = 15 * time.Minute

// signed is the signing material of one request, from either the
// Authorization header or the presigned query string.
type signed struct {
	presigned     bool
	algorithm     string
	credential    string
	signedHeaders string
	signature     string
	amzDate       string // the request date in ISO 8601 basic format
	date          time.Time
	expires       time.Duration
	hasExpires    bool
}

// Authenticate verifies the request's SigV4 signature, in the Authorization
// header or in the presigned query string, and returns the access key id
// that signed it. body is the whole request body, already read. On failure
// the error is a *tidemq.Error: MissingAuthenticationToken,
// IncompleteSignature, SignatureDoesNotMatch, RequestExpired or
// InvalidClientTokenId. The package comment gives the rules.
func (v *Verifier) Authenticate(r *http.Request, body []byte) (string, error) {
	u := r.URL
	if u == nil {
		u = &url.URL{}
	}
	query := parseQuery(u.RawQuery)
	now := v.now()
	skew := v.maxSkew()

	var s signed
	var err error
	exclude := ""
	switch header := r.Header.Get(headerAuthorization); {
	case hasHeaderSignature(header):
		s, err = fromHeader(r, header)
	case isPresigned(query):
		s, err = fromQuery(query)
		exclude = querySignature
	default:
		return "", missingAuthentication()
	}
	if err != nil {
		return "", err
	}

	if err := checkTime(s, now, skew); err != nil {
		return "", err
	}
	if s.presigned && s.hasExpires && v.MaxPresignExpires > 0 && s.expires > v.MaxPresignExpires {
		return "", incomplete("X-Amz-Expires must be at most %d seconds on this endpoint, not %d.",
			int64(v.MaxPresignExpires/time.Second), int64(s.expires/time.Second))
	}
	names := signedHeaderNames(s.signedHeaders)
	if !slices.Contains(names, "host") && !slices.Contains(names, ":authority") {
		return "", mismatch("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")
	}
	if s.algorithm != algorithm {
		return "", incomplete("Unsupported AWS 'algorithm': '%s' (only %s for now).", s.algorithm, algorithm)
	}
	cred, ok := parseCredential(s.credential)
	if !ok {
		return "", incomplete("Credential must have exactly 5 slash-delimited elements, "+
			"e.g. keyid/date/region/service/term, got '%s'", s.credential)
	}
	if err := v.checkScope(cred, s); err != nil {
		return "", err
	}
	secret, ok := v.Credentials[cred.AccessKeyID]
	if !ok || cred.AccessKeyID == "" {
		return "", invalidClientToken()
	}

	payloadHash := hashHex(body)
	if claimed := r.Header.Get(headerContentSHA256); isHexDigest(claimed) && !strings.EqualFold(claimed, payloadHash) {
		return "", mismatch("The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	canonical := canonicalRequest(method, canonicalURI(u), canonicalQuery(query, exclude),
		canonicalHeaders(r, names), s.signedHeaders, payloadHash)
	toSign := stringToSign(s.amzDate, cred.Scope(), canonical)
	want := sign(signingKey(secret, cred.Date, cred.Region, cred.Service), toSign)
	if subtle.ConstantTimeCompare([]byte(want), []byte(s.signature)) != 1 {
		return "", signatureMismatch(canonical, toSign)
	}
	return cred.AccessKeyID, nil
}

// ForServices returns a copy of v that accepts the given signing scopes
// instead of v's: the same credentials for another of tidemq's endpoints.
func (v *Verifier) ForServices(services ...string) *Verifier {
	c := *v
	c.Services = services
	return &c
}

func (v *Verifier) now() time.Time {
	if v.Clock == nil {
		return time.Now().UTC()
	}
	return v.Clock.Now().UTC()
}

func (v *Verifier) maxSkew() time.Duration {
	if v.MaxSkew <= 0 {
		return DefaultMaxSkew
	}
	return v.MaxSkew
}

// fromHeader gathers the signing material of an Authorization-header
// request and checks that it is complete and well formed.
func fromHeader(r *http.Request, header string) (signed, error) {
	a, err := parseAuthorization(header)
	if err != nil {
		return signed{}, incomplete("%s", err.Error())
	}
	var missing []string
	if a.Credential == "" {
		missing = append(missing, elemCredential)
	}
	if a.Signature == "" {
		missing = append(missing, elemSignature)
	}
	if a.SignedHeaders == "" {
		missing = append(missing, elemSignedHeaders)
	}
	dateValue, isAmzDate := r.Header.Get(headerAmzDate), true
	if dateValue == "" {
		dateValue, isAmzDate = r.Header.Get(headerDate), false
	}
	if len(missing) > 0 || dateValue == "" {
		return signed{}, missingHeaderElements(missing, dateValue == "", header)
	}
	t, err := parseDate(dateValue, !isAmzDate)
	if err != nil {
		return signed{}, err
	}
	return signed{
		algorithm:     a.Algorithm,
		credential:    a.Credential,
		signedHeaders: a.SignedHeaders,
		signature:     a.Signature,
		amzDate:       t.Format(isoBasic),
		date:          t,
	}, nil
}

// fromQuery gathers the signing material of a presigned request and checks
// that it is complete and well formed.
func fromQuery(q queryParams) (signed, error) {
	get := func(name string, missing *[]string) string {
		v, _ := q.first(name)
		if v == "" {
			*missing = append(*missing, name)
		}
		return v
	}
	var missing []string
	s := signed{
		presigned:     true,
		algorithm:     get(queryAlgorithm, &missing),
		credential:    get(queryCredential, &missing),
		signature:     get(querySignature, &missing),
		signedHeaders: get(querySignedHeaders, &missing),
	}
	dateValue := get(queryDate, &missing)
	if len(missing) > 0 {
		return signed{}, missingQueryParams(missing)
	}
	t, err := parseDate(dateValue, false)
	if err != nil {
		return signed{}, err
	}
	s.date, s.amzDate = t, t.Format(isoBasic)
	if raw, ok := q.first(queryExpires); ok {
		n, err := strconv.ParseInt(raw, 10, 64)
		switch {
		case err != nil:
			return signed{}, incomplete("X-Amz-Expires should be a number")
		case n < 0:
			return signed{}, incomplete("X-Amz-Expires must be non-negative")
		case time.Duration(n) > maxPresignExpires/time.Second:
			return signed{}, incomplete("X-Amz-Expires must be less than a week (in seconds) that is 604800")
		}
		s.expires, s.hasExpires = time.Duration(n)*time.Second, true
	}
	return s, nil
}

// parseDate parses a request date in ISO 8601 basic format, or, for the
// Date header, also in the HTTP date format.
func parseDate(value string, httpDateAllowed bool) (time.Time, error) {
	if t, err := time.Parse(isoBasic, value); err == nil {
		return t.UTC(), nil
	}
	if httpDateAllowed {
		if t, err := http.ParseTime(value); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, badDate(value)
}

// checkTime checks the request date against the clock: within skew either
// way for a signed header; for a presigned request, not beyond skew in the
// future and not past X-Amz-Date + X-Amz-Expires (or beyond skew in the
// past when X-Amz-Expires is absent).
func checkTime(s signed, now time.Time, skew time.Duration) error {
	if s.date.After(now.Add(skew)) {
		return signatureNotYetCurrent(s.date, now, skew)
	}
	if s.presigned && s.hasExpires {
		if now.After(s.date.Add(s.expires)) {
			return presignExpired(s.date, s.expires, now)
		}
		return nil
	}
	if s.date.Before(now.Add(-skew)) {
		return signatureExpired(s.date, now, skew)
	}
	return nil
}

// checkScope checks the credential scope: a region, an accepted service,
// the aws4_request terminator and the request's date. Every fault is
// reported, in AWS's words and order.
func (v *Verifier) checkScope(c credential, s signed) error {
	var faults []string
	if c.Region == "" {
		faults = append(faults, "Credential should be scoped to a valid region, not ''.")
	}
	if len(v.Services) > 0 && !slices.Contains(v.Services, c.Service) {
		faults = append(faults, "Credential should be scoped to correct service: '"+strings.Join(v.Services, "' or '")+"'.")
	}
	if c.Terminator != terminator {
		faults = append(faults, "Credential should be scoped with a valid terminator: '"+terminator+"', not '"+c.Terminator+"'.")
	}
	if day := s.date.Format("20060102"); c.Date != day {
		faults = append(faults, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '"+
			c.Date+"' != '"+day+"', from '"+s.amzDate+"'.")
	}
	if len(faults) > 0 {
		return mismatch("%s", strings.Join(faults, " "))
	}
	return nil
}

// isHexDigest reports whether s looks like a hex SHA-256 digest, as opposed
// to UNSIGNED-PAYLOAD, a STREAMING-* value or nothing.
func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
