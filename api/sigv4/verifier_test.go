package sigv4

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
)

// Requests signed by the official SDK signer verify, after a real trip
// through net/http (which moves Host out of the header map and keeps the
// wire form of the path in RawPath).
func TestAuthenticateSDKSignedRequests(t *testing.T) {
	v := newTestVerifier(clocktest.New(t0))
	srv, send := authServer(t, v)
	jsonBody := []byte(`{"QueueUrl":"http://localhost/000000000000/my-queue","MessageBody":"héllo"}`)
	for _, tc := range []struct {
		name, method, path string
		body               []byte
		header             http.Header
	}{
		{"json post", http.MethodPost, "/", jsonBody, http.Header{
			"Content-Type": {"application/x-amz-json-1.0"},
			"X-Amz-Target": {"AmazonSQS.SendMessage"},
		}},
		{"form post", http.MethodPost, "/000000000000/my-queue",
			[]byte("Action=SendMessage&MessageBody=hello+world%21&Version=2012-11-05"),
			http.Header{"Content-Type": {"application/x-www-form-urlencoded; charset=utf-8"}}},
		{"get with query", http.MethodGet,
			"/000000000000/my-queue?Action=ReceiveMessage&AttributeName.1=All&Odd=a%20b%2Bc%2F~%2A%21%27%28%29%3D%26&Uni=%C3%BC&Empty=",
			nil, nil},
		{"path with escaped space", http.MethodGet, "/000000000000/my%20queue?Action=GetQueueAttributes", nil, nil},
		{"path with escaped slash", http.MethodGet, "/a%2Fb/c%3Ad", nil, nil},
		{"header with inner spaces", http.MethodPost, "/", jsonBody, http.Header{
			"Content-Type": {"application/x-amz-json-1.0"},
			"X-Amz-Target": {"AmazonSQS.SendMessage"},
			"X-Custom":     {"  a   b    c  "},
			"X-Multi":      {"one", "two   three"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sdkSigned(t, tc.method, srv.URL+tc.path, tc.body, tc.header, testCreds(), "sqs", "us-east-1", t0, "")
			if got := send(r); got.err != nil || got.key != testKey {
				t.Fatalf("Authenticate = %q, %v", got.key, got.err)
			}
		})
	}
}

func TestAuthenticateSessionTokenAndScopes(t *testing.T) {
	v := newTestVerifier(clocktest.New(t0))
	srv, send := authServer(t, v)
	creds := testCreds()
	creds.SessionToken = "FwoGZXIvYXdzEJr//////////wEaDOpaqueToken=="
	for _, tc := range []struct {
		name, service, region string
		creds                 aws.Credentials
	}{
		{"session token", "sqs", "us-east-1", creds},
		{"sns scope", "sns", "us-east-1", testCreds()},
		{"any region", "sqs", "elsewhere-1", testCreds()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sdkSigned(t, http.MethodPost, srv.URL+"/", []byte("Action=ListQueues"), nil, tc.creds, tc.service, tc.region, t0, "")
			if got := send(r); got.err != nil || got.key != testKey {
				t.Fatalf("Authenticate = %q, %v", got.key, got.err)
			}
		})
	}
}

// The canonical query is rebuilt from the decoded parameters, so another
// spelling of the same query on the wire still verifies.
func TestAuthenticateQuerySpellings(t *testing.T) {
	v := newTestVerifier(clocktest.New(t0))
	r := sdkSigned(t, http.MethodGet, "http://localhost/q?Action=ReceiveMessage&Odd=a%20b%2A%7E&B=2&B=1", nil, nil,
		testCreds(), "sqs", "us-east-1", t0, "")
	for _, raw := range []string{
		r.URL.RawQuery,
		"B=1&Odd=a+b*~&B=2&Action=ReceiveMessage",
		"Odd=a%20b%2a%7e&Action=Receive%4Dessage&B=2&B=1&",
	} {
		r.URL.RawQuery = raw
		if _, err := v.Authenticate(r, nil); err != nil {
			t.Errorf("query %q: %v", raw, err)
		}
	}
	r.URL.RawQuery = "B=1&Odd=a+b*~&B=3&Action=ReceiveMessage"
	_, err := v.Authenticate(r, nil)
	wantErr(t, err, tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch)
}

// Every way a signed request can be wrong gives the error AWS gives.
func TestAuthenticateErrors(t *testing.T) {
	body := []byte(`{"QueueName":"my-queue"}`)
	header := http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amz-Target": {"AmazonSQS.CreateQueue"}}
	replaceAuth := func(old, new string) func(*http.Request, *[]byte, *Verifier) {
		return func(r *http.Request, _ *[]byte, _ *Verifier) {
			h := r.Header.Get("Authorization")
			if !strings.Contains(h, old) {
				panic("test bug: " + old + " not in " + h)
			}
			r.Header.Set("Authorization", strings.Replace(h, old, new, 1))
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(r *http.Request, body *[]byte, v *Verifier)
		code   *tidemq.ErrorCode
		msg    string
	}{
		{"untouched", func(*http.Request, *[]byte, *Verifier) {}, nil, ""},
		{"unsigned header added", func(r *http.Request, _ *[]byte, _ *Verifier) { r.Header.Set("X-Unsigned", "x") }, nil, ""},
		{"no signature at all", func(r *http.Request, _ *[]byte, _ *Verifier) { r.Header.Del("Authorization") },
			tidemq.ErrMissingAuthenticationTk, MsgMissingAuthenticationToken},
		{"basic auth", func(r *http.Request, _ *[]byte, _ *Verifier) { r.Header.Set("Authorization", "Basic dXNlcjpwYXNz") },
			tidemq.ErrMissingAuthenticationTk, MsgMissingAuthenticationToken},
		{"body byte flipped", func(_ *http.Request, b *[]byte, _ *Verifier) { (*b)[3] ^= 1 },
			tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch + "\n\nThe Canonical String for this request should have been\n'POST\n/\n\ncontent-length:24\n"},
		{"body truncated", func(_ *http.Request, b *[]byte, _ *Verifier) { *b = (*b)[:len(*b)-1] },
			tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"signed header changed", func(r *http.Request, _ *[]byte, _ *Verifier) { r.Header.Set("X-Amz-Target", "AmazonSQS.DeleteQueue") },
			tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"host changed", func(r *http.Request, _ *[]byte, _ *Verifier) { r.Host = "evil.example" },
			tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"path changed", func(r *http.Request, _ *[]byte, _ *Verifier) { r.URL.Path = "/000000000000/other" },
			tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"method changed", func(r *http.Request, _ *[]byte, _ *Verifier) { r.Method = http.MethodPut },
			tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"wrong secret", func(_ *http.Request, _ *[]byte, v *Verifier) { v.Credentials[testKey] = "not-the-secret" },
			tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"unknown key", func(_ *http.Request, _ *[]byte, v *Verifier) { v.Credentials = Credentials{"AKIDOTHER": testSecret} },
			tidemq.ErrInvalidClientTokenID, MsgInvalidClientTokenID},
		{"date changed", func(r *http.Request, _ *[]byte, _ *Verifier) { r.Header.Set("X-Amz-Date", "20250101T000001Z") },
			tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"date on another day", func(r *http.Request, _ *[]byte, _ *Verifier) { r.Header.Set("X-Amz-Date", "20241231T235959Z") },
			tidemq.ErrSignatureDoesNotMatch, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '20250101' != '20241231', from '20241231T235959Z'."},
		{"region changed", replaceAuth("/us-east-1/", "/eu-west-1/"),
			tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"region empty", replaceAuth("/us-east-1/", "//"),
			tidemq.ErrSignatureDoesNotMatch, "Credential should be scoped to a valid region, not ''."},
		{"service not accepted", replaceAuth("/sqs/", "/dynamodb/"),
			tidemq.ErrSignatureDoesNotMatch, "Credential should be scoped to correct service: 'sqs' or 'sns'."},
		{"wrong terminator", replaceAuth("/aws4_request", "/aws5_request"),
			tidemq.ErrSignatureDoesNotMatch, "Credential should be scoped with a valid terminator: 'aws4_request', not 'aws5_request'."},
		{"several scope faults", replaceAuth("/20250101/us-east-1/sqs/aws4_request", "/20991231/us-east-1/s3/term"),
			tidemq.ErrSignatureDoesNotMatch, "Credential should be scoped to correct service: 'sqs' or 'sns'. " +
				"Credential should be scoped with a valid terminator: 'aws4_request', not 'term'. " +
				"Date in Credential scope does not match"},
		{"credential with four parts", replaceAuth("/aws4_request", ""),
			tidemq.ErrIncompleteSignature, "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got 'AKIDEXAMPLE/20250101/us-east-1/sqs'"},
		{"other algorithm", replaceAuth("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA512"),
			tidemq.ErrIncompleteSignature, "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA512'"},
		{"host not signed", replaceAuth("SignedHeaders=content-length;content-type;host;", "SignedHeaders=content-length;content-type;"),
			tidemq.ErrSignatureDoesNotMatch, "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization."},
		{"signature missing", replaceAuth(", Signature=", ", Sig="),
			tidemq.ErrIncompleteSignature, "Authorization header requires 'Signature' parameter. Authorization=AWS4-HMAC-SHA256 Credential="},
		{"credential and date missing", func(r *http.Request, b *[]byte, v *Verifier) {
			replaceAuth("Credential=", "Cred=")(r, b, v)
			r.Header.Del("X-Amz-Date")
		}, tidemq.ErrIncompleteSignature, "Authorization header requires 'Credential' parameter. " +
			"Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization="},
		{"missing equal sign", replaceAuth("Credential=", "Credential= "),
			tidemq.ErrIncompleteSignature, "not a valid key=value pair (missing equal-sign) in Authorization header"},
		{"date not iso basic", func(r *http.Request, _ *[]byte, _ *Verifier) { r.Header.Set("X-Amz-Date", "2025-01-01T00:00:00Z") },
			tidemq.ErrIncompleteSignature, "Date must be in ISO-8601 'basic format'. Got '2025-01-01T00:00:00Z'."},
		{"signature upper-cased", func(r *http.Request, _ *[]byte, _ *Verifier) {
			h := r.Header.Get("Authorization")
			i := strings.Index(h, "Signature=") + len("Signature=")
			r.Header.Set("Authorization", h[:i]+strings.ToUpper(h[i:]))
		}, tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newTestVerifier(clocktest.New(t0))
			b := bytes.Clone(body)
			r := sdkSigned(t, http.MethodPost, "http://localhost:9324/", b, header, testCreds(), "sqs", "us-east-1", t0, "")
			tc.mutate(r, &b, v)
			key, err := v.Authenticate(r, b)
			if tc.code == nil {
				if err != nil || key != testKey {
					t.Fatalf("Authenticate = %q, %v", key, err)
				}
				return
			}
			wantErr(t, err, tc.code, tc.msg)
			if key != "" {
				t.Errorf("key = %q on failure", key)
			}
		})
	}
}

func TestAuthenticateClockSkew(t *testing.T) {
	sign := func(at time.Time) *http.Request {
		return sdkSigned(t, http.MethodPost, "http://localhost/", []byte("Action=ListQueues"), nil, testCreds(), "sqs", "us-east-1", at, "")
	}
	check := func(v *Verifier, r *http.Request) error {
		_, err := v.Authenticate(r, []byte("Action=ListQueues"))
		return err
	}

	clock := clocktest.New(t0)
	v := newTestVerifier(clock)
	r := sign(t0)
	clock.Advance(5 * time.Minute)
	if err := check(v, r); err != nil {
		t.Fatalf("at the edge of the window: %v", err)
	}
	clock.Advance(time.Second)
	wantErr(t, check(v, r), tidemq.ErrSignatureDoesNotMatch,
		"Signature expired: 20250101T000000Z is now earlier than 20250101T000001Z (20250101T000501Z - 5 min.)")

	v = newTestVerifier(clocktest.New(t0))
	if err := check(v, sign(t0.Add(5*time.Minute))); err != nil {
		t.Fatalf("future edge of the window: %v", err)
	}
	wantErr(t, check(v, sign(t0.Add(5*time.Minute+time.Second))), tidemq.ErrSignatureDoesNotMatch,
		"Signature not yet current: 20250101T000501Z is still later than 20250101T000500Z (20250101T000000Z + 5 min.)")

	clock = clocktest.New(t0)
	v = newTestVerifier(clock)
	v.MaxSkew = 15 * time.Minute
	r = sign(t0)
	clock.Advance(15 * time.Minute)
	if err := check(v, r); err != nil {
		t.Fatalf("MaxSkew 15m: %v", err)
	}
	clock.Advance(time.Second)
	wantErr(t, check(v, r), tidemq.ErrSignatureDoesNotMatch, "(20250101T001501Z - 15 min.)")

	v.MaxSkew = 0 // the default is SQS's 15 minutes
	if err := check(v, sign(t0.Add(30*time.Minute))); err != nil {
		t.Fatalf("default window: %v", err)
	}
	wantErr(t, check(v, sign(t0)), tidemq.ErrSignatureDoesNotMatch, "(20250101T001501Z - 15 min.)")

	v.MaxSkew = 90 * time.Second
	wantErr(t, check(v, r), tidemq.ErrSignatureDoesNotMatch, "(20250101T001501Z - 90 sec.)")
}

func TestAuthenticatePresigned(t *testing.T) {
	const base = "http://localhost:9324/000000000000/my-queue?Action=ReceiveMessage&QueueUrl=http%3A%2F%2Flocalhost%2F000000000000%2Fmy-queue&AttributeName.1=All"

	clock := clocktest.New(t0)
	v := newTestVerifier(clock)
	srv, send := authServer(t, v)
	u, _ := url.Parse(base)
	u.Host = strings.TrimPrefix(srv.URL, "http://")
	if got := send(sdkPresigned(t, u.String()+"&X-Amz-Expires=60", testCreds(), "sqs", "us-east-1", t0)); got.err != nil || got.key != testKey {
		t.Fatalf("presigned through the server: %q, %v", got.key, got.err)
	}

	r := sdkPresigned(t, base+"&X-Amz-Expires=60", testCreds(), "sqs", "us-east-1", t0)
	clock.Advance(60 * time.Second)
	if _, err := v.Authenticate(r, nil); err != nil {
		t.Fatalf("at expiry: %v", err)
	}
	clock.Advance(time.Second)
	_, err := v.Authenticate(r, nil)
	wantErr(t, err, tidemq.ErrRequestExpired, "Request has expired: X-Amz-Date 20250101T000000Z plus X-Amz-Expires 60 seconds is earlier than 20250101T000101Z.")

	// Without X-Amz-Expires the skew window applies, as for STS.
	clock = clocktest.New(t0)
	v = newTestVerifier(clock)
	r = sdkPresigned(t, base, testCreds(), "sqs", "us-east-1", t0)
	clock.Advance(5 * time.Minute)
	if _, err := v.Authenticate(r, nil); err != nil {
		t.Fatalf("no X-Amz-Expires, within skew: %v", err)
	}
	clock.Advance(time.Second)
	_, err = v.Authenticate(r, nil)
	wantErr(t, err, tidemq.ErrSignatureDoesNotMatch, "Signature expired: 20250101T000000Z")

	// A long X-Amz-Expires does not admit a date in the future.
	v = newTestVerifier(clocktest.New(t0))
	r = sdkPresigned(t, base+"&X-Amz-Expires=3600", testCreds(), "sqs", "us-east-1", t0.Add(10*time.Minute))
	_, err = v.Authenticate(r, nil)
	wantErr(t, err, tidemq.ErrSignatureDoesNotMatch, "Signature not yet current")

	creds := testCreds()
	creds.SessionToken = "session-token"
	if _, err := v.Authenticate(sdkPresigned(t, base, creds, "sqs", "us-east-1", t0), nil); err != nil {
		t.Fatalf("presigned with session token: %v", err)
	}

	for _, tc := range []struct {
		name   string
		mutate func(q url.Values)
		code   *tidemq.ErrorCode
		msg    string
	}{
		{"respelled", func(url.Values) {}, nil, ""},
		{"parameter changed", func(q url.Values) { q.Set("Action", "DeleteQueue") }, tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"parameter added", func(q url.Values) { q.Set("MaxNumberOfMessages", "10") }, tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"signature changed", func(q url.Values) { q.Set("X-Amz-Signature", strings.Repeat("0", 64)) }, tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch},
		{"date missing", func(q url.Values) { q.Del("X-Amz-Date") }, tidemq.ErrIncompleteSignature,
			"AWS query-string parameters must include 'X-Amz-Date'. Re-examine the query-string parameters."},
		{"two missing", func(q url.Values) { q.Del("X-Amz-Algorithm"); q.Del("X-Amz-SignedHeaders") }, tidemq.ErrIncompleteSignature,
			"AWS query-string parameters must include 'X-Amz-Algorithm'. AWS query-string parameters must include 'X-Amz-SignedHeaders'. Re-examine"},
		{"expires not a number", func(q url.Values) { q.Set("X-Amz-Expires", "soon") }, tidemq.ErrIncompleteSignature, "X-Amz-Expires should be a number"},
		{"expires negative", func(q url.Values) { q.Set("X-Amz-Expires", "-1") }, tidemq.ErrIncompleteSignature, "X-Amz-Expires must be non-negative"},
		{"expires over a week", func(q url.Values) { q.Set("X-Amz-Expires", "604801") }, tidemq.ErrIncompleteSignature, "604800"},
		{"unknown key", func(q url.Values) {
			q.Set("X-Amz-Credential", strings.Replace(q.Get("X-Amz-Credential"), testKey, "AKIDOTHER", 1))
		}, tidemq.ErrInvalidClientTokenID, MsgInvalidClientTokenID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newTestVerifier(clocktest.New(t0))
			r := sdkPresigned(t, base+"&X-Amz-Expires=300", testCreds(), "sqs", "us-east-1", t0)
			q := r.URL.Query()
			tc.mutate(q)
			r.URL.RawQuery = q.Encode() // Encode re-spells the query: '+' for spaces, sorted
			key, err := v.Authenticate(r, nil)
			if tc.code == nil {
				if err != nil || key != testKey {
					t.Fatalf("Authenticate = %q, %v", key, err)
				}
				return
			}
			wantErr(t, err, tc.code, tc.msg)
		})
	}
}

// The payload hash is always computed from the body: a hex
// x-amz-content-sha256 must match it and UNSIGNED-PAYLOAD is not honoured.
func TestAuthenticateContentSHA256(t *testing.T) {
	v := newTestVerifier(clocktest.New(t0))
	body := []byte("Action=ListQueues")
	r := sdkSigned(t, http.MethodPost, "http://localhost/", body,
		http.Header{"X-Amz-Content-Sha256": {payloadHash(body)}}, testCreds(), "sqs", "us-east-1", t0, "")
	if _, err := v.Authenticate(r, body); err != nil {
		t.Fatalf("matching x-amz-content-sha256: %v", err)
	}
	_, err := v.Authenticate(r, []byte("Action=DeleteQueue"))
	wantErr(t, err, tidemq.ErrSignatureDoesNotMatch, "The provided 'x-amz-content-sha256' header does not match what was computed.")

	r = sdkSigned(t, http.MethodPost, "http://localhost/", body,
		http.Header{"X-Amz-Content-Sha256": {"UNSIGNED-PAYLOAD"}}, testCreds(), "sqs", "us-east-1", t0, "UNSIGNED-PAYLOAD")
	_, err = v.Authenticate(r, body)
	wantErr(t, err, tidemq.ErrSignatureDoesNotMatch, MsgSignatureDoesNotMatch)
}

func TestAuthenticateAnyService(t *testing.T) {
	v := newTestVerifier(clocktest.New(t0))
	v.Services = nil
	r := sdkSigned(t, http.MethodPost, "http://localhost/", nil, nil, testCreds(), "dynamodb", "us-east-1", t0, "")
	if _, err := v.Authenticate(r, nil); err != nil {
		t.Fatalf("empty Services: %v", err)
	}
}

// get-vanilla from AWS's SigV4 test suite, checked against a signature the
// SDK did not compute.
func TestAuthenticateGetVanilla(t *testing.T) {
	at := time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)
	v := &Verifier{Credentials: Credentials{"AKIDEXAMPLE": testSecret}, Clock: clocktest.New(at)}
	r, _ := http.NewRequest(http.MethodGet, "http://example.amazonaws.com/", nil)
	r.Header.Set("X-Amz-Date", "20150830T123600Z")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "+
		"SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
	if key, err := v.Authenticate(r, nil); err != nil || key != "AKIDEXAMPLE" {
		t.Fatalf("Authenticate = %q, %v", key, err)
	}
}

// A request dated by the Date header alone (ISO 8601 basic or HTTP date)
// is accepted; the string to sign carries the ISO form.
func TestAuthenticateDateHeader(t *testing.T) {
	v := newTestVerifier(clocktest.New(t0))
	for _, date := range []string{"20250101T000000Z", "Wed, 01 Jan 2025 00:00:00 GMT"} {
		r, _ := http.NewRequest(http.MethodGet, "http://localhost/", nil)
		r.Header.Set("Date", date)
		names := signedHeaderNames("date;host")
		canonical := canonicalRequest(http.MethodGet, "/", "", canonicalHeaders(r, names), "date;host", payloadHash(nil))
		scope := "20250101/us-east-1/sqs/aws4_request"
		sig := sign(signingKey(testSecret, "20250101", "us-east-1", "sqs"), stringToSign("20250101T000000Z", scope, canonical))
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testKey+"/"+scope+", SignedHeaders=date;host, Signature="+sig)
		if _, err := v.Authenticate(r, nil); err != nil {
			t.Errorf("Date %q: %v", date, err)
		}
	}
}

// MaxPresignExpires (the admin API's 15 minutes) refuses a presigned URL
// that claims to stay valid longer; SQS's verifier keeps SigV4's week.
func TestPresignExpiresCapped(t *testing.T) {
	const base = "http://localhost:9324/tidemq/backup?X=1"
	v := newTestVerifier(clocktest.New(t0))
	week := sdkPresigned(t, base+"&X-Amz-Expires=604800", testCreds(), "sqs", "us-east-1", t0)
	if _, err := v.Authenticate(week, nil); err != nil {
		t.Fatalf("a week without a cap: %v", err)
	}
	v.MaxPresignExpires = AdminPresignExpires
	_, err := v.Authenticate(week, nil)
	wantErr(t, err, tidemq.ErrIncompleteSignature, "X-Amz-Expires must be at most 900 seconds on this endpoint, not 604800.")
	if _, err := v.Authenticate(sdkPresigned(t, base+"&X-Amz-Expires=900", testCreds(), "sqs", "us-east-1", t0), nil); err != nil {
		t.Errorf("900 seconds under a 15-minute cap: %v", err)
	}
}
