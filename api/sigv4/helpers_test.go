package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/tidemq/tidemq"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	testKey    = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

func testCreds() aws.Credentials {
	return aws.Credentials{AccessKeyID: testKey, SecretAccessKey: testSecret}
}

func newTestVerifier(clock tidemq.Clock) *Verifier {
	return &Verifier{
		Credentials: Credentials{testKey: testSecret},
		Clock:       clock,
		Services:    []string{"sqs", "sns"},
		MaxSkew:     5 * time.Minute, // the tests below probe a 5-minute window
	}
}

func payloadHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// sdkSigned builds a request and signs its header with the official
// aws-sdk-go-v2 signer, using hash as the payload hash ("" for the body's).
func sdkSigned(t *testing.T, method, rawURL string, body []byte, header http.Header, creds aws.Credentials,
	service, region string, at time.Time, hash string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, rawURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	if hash == "" {
		hash = payloadHash(body)
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hash, service, region, at); err != nil {
		t.Fatal(err)
	}
	return r
}

// sdkPresigned presigns a GET of rawURL with the official signer and
// returns the request a client would send for the presigned URL.
func sdkPresigned(t *testing.T, rawURL string, creds aws.Credentials, service, region string, at time.Time) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	uri, hdr, err := v4.NewSigner().PresignHTTP(context.Background(), creds, r, payloadHash(nil), service, region, at)
	if err != nil {
		t.Fatal(err)
	}
	p, err := http.NewRequest(http.MethodGet, uri, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range hdr {
		if !strings.EqualFold(k, "Host") {
			p.Header[k] = vs
		}
	}
	return p
}

// wantErr fails unless err is a *tidemq.Error with the given code whose
// message contains substr.
// The texts the tests expect, pinned here as AWS words them.
const (
	MsgMissingAuthenticationToken = "Request is missing Authentication Token"
	MsgInvalidClientTokenID       = "The security token included in the request is invalid."
	MsgSignatureDoesNotMatch      = "The request signature we calculated does not match the signature you provided. " +
		"Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)

func wantErr(t *testing.T, err error, code *tidemq.ErrorCode, substr string) {
	t.Helper()
	var e *tidemq.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want a *tidemq.Error %s", err, code.Code)
	}
	if e.Code != code {
		t.Fatalf("error = %s: %q, want code %s", e.Code.Code, e.Message, code.Code)
	}
	if !strings.Contains(e.Message, substr) {
		t.Fatalf("%s message = %q, want it to contain %q", e.Code.Code, e.Message, substr)
	}
}

// outcome is what the test server's handler got from Authenticate.
type outcome struct {
	key string
	err error
}

// authServer starts a server whose handler reads the body and authenticates
// the request with v. send returns what Authenticate said.
func authServer(t *testing.T, v *Verifier) (srv *httptest.Server, send func(*http.Request) outcome) {
	t.Helper()
	results := make(chan outcome, 1)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			results <- outcome{err: err}
			return
		}
		key, err := v.Authenticate(r, body)
		results <- outcome{key, err}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, func(r *http.Request) outcome {
		t.Helper()
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return <-results
	}
}
