package frontdoor

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tidemq/tidemq/api/sigv4"
)

const (
	testKey    = "AKIDTEST"
	testSecret = "secret123"
)

func verifier() *sigv4.Verifier {
	return &sigv4.Verifier{Credentials: sigv4.Credentials{testKey: testSecret}, Services: []string{"tidemq"}}
}

// signed is a client that signs for the admin API with the given secret.
func signed(secret string) *http.Client {
	return &http.Client{Transport: &sigv4.Transport{
		Credentials: credentials.NewStaticCredentialsProvider(testKey, secret, ""),
		Region:      "us-east-1", Service: "tidemq",
	}}
}

// echo answers 200 with the body it read, so that a test can see the
// handler ran and got the whole body after the door read it.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Write(b)
})

func newDoor(t *testing.T, auth bool) *httptest.Server {
	t.Helper()
	c := Config{}
	if auth {
		c.Auth = verifier()
	}
	d := New(c)
	d.Admin("/tidemq/things", echo)
	d.Probe("GET /health", echo, true)
	d.Probe("GET /metrics", echo, false)
	d.Protocol("/", echo)
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, c *http.Client, method, url, contentType, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// errorCode reads the code of the door's JSON error.
func errorCode(t *testing.T, body string) string {
	t.Helper()
	var e struct{ Error, Code string }
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
		t.Fatalf("not a JSON error: %q", body)
	}
	return e.Code
}

func TestAdminNeedsSignature(t *testing.T) {
	srv := newDoor(t, true)
	plain := http.DefaultClient
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		status, body := do(t, plain, m, srv.URL+"/tidemq/things", "application/json", `{}`)
		if status != http.StatusForbidden || errorCode(t, body) != "MissingAuthenticationToken" {
			t.Errorf("unsigned %s: %d %s, want 403 MissingAuthenticationToken", m, status, body)
		}
	}
	status, body := do(t, signed("wrong"), http.MethodPost, srv.URL+"/tidemq/things", "application/json", `{"a":1}`)
	if status != http.StatusForbidden || errorCode(t, body) != "SignatureDoesNotMatch" {
		t.Errorf("wrong secret: %d %s, want 403 SignatureDoesNotMatch", status, body)
	}
	status, body = do(t, signed(testSecret), http.MethodPost, srv.URL+"/tidemq/things", "application/json", `{"a":1}`)
	if status != http.StatusOK || body != `{"a":1}` {
		t.Errorf("signed POST: %d %q, want 200 with the body passed on", status, body)
	}
	// A signature for SQS is not one for the admin API.
	sqsSigned := &http.Client{Transport: &sigv4.Transport{
		Credentials: credentials.NewStaticCredentialsProvider(testKey, testSecret, ""), Region: "us-east-1", Service: "sqs"}}
	if status, body := do(t, sqsSigned, http.MethodGet, srv.URL+"/tidemq/things", "", ""); status != http.StatusForbidden {
		t.Errorf("signed for sqs: %d %s, want 403", status, body)
	}
}

func TestProbes(t *testing.T) {
	srv := newDoor(t, true)
	if status, _ := do(t, http.DefaultClient, http.MethodGet, srv.URL+"/health", "", ""); status != http.StatusOK {
		t.Errorf("open probe: %d, want 200 unsigned", status)
	}
	if status, _ := do(t, http.DefaultClient, http.MethodGet, srv.URL+"/metrics", "", ""); status != http.StatusForbidden {
		t.Errorf("closed probe: %d, want 403 unsigned", status)
	}
	if status, _ := do(t, signed(testSecret), http.MethodGet, srv.URL+"/metrics", "", ""); status != http.StatusOK {
		t.Errorf("closed probe, signed: %d, want 200", status)
	}
}

func TestOpenProbeMustBeGET(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("an open POST probe was registered")
		}
	}()
	New(Config{}).Probe("POST /health", echo, true)
}

// Without --auth the admin API is open, but a state-changing call still has
// to be JSON: a browser cannot send that cross-origin without a preflight.
func TestAdminStateChangesAreJSON(t *testing.T) {
	srv := newDoor(t, false)
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			status, body := do(t, http.DefaultClient, m, srv.URL+"/tidemq/things", ct, `{"a":1}`)
			if status != http.StatusUnsupportedMediaType || errorCode(t, body) != "UnsupportedMediaType" {
				t.Errorf("%s with Content-Type %q: %d %s, want 415", m, ct, status, body)
			}
		}
	}
	if status, _ := do(t, http.DefaultClient, http.MethodPost, srv.URL+"/tidemq/things", "application/json; charset=utf-8", `{}`); status != http.StatusOK {
		t.Errorf("JSON POST: %d, want 200", status)
	}
	if status, _ := do(t, http.DefaultClient, http.MethodGet, srv.URL+"/tidemq/things", "", ""); status != http.StatusOK {
		t.Errorf("GET: %d, want 200", status)
	}
}

func TestCrossOriginRefused(t *testing.T) {
	srv := newDoor(t, false)
	for _, tc := range []struct {
		method, path, ct string
		header           []string
	}{
		// a page's form posting a Query call, and an <img> doing a GET one
		{http.MethodPost, "/", "text/plain", []string{"Sec-Fetch-Site", "cross-site"}},
		{http.MethodPost, "/", "application/x-www-form-urlencoded", []string{"Origin", "https://evil.example"}},
		{http.MethodGet, "/?Action=PurgeQueue&QueueUrl=q", "", []string{"Sec-Fetch-Site", "cross-site"}},
		{http.MethodPost, "/tidemq/things", "application/json", []string{"Sec-Fetch-Site", "same-site"}},
		{http.MethodGet, "/tidemq/things", "", []string{"Origin", "http://attacker.test"}},
	} {
		status, body := do(t, http.DefaultClient, tc.method, srv.URL+tc.path, tc.ct, "Action=PurgeQueue", tc.header...)
		if status != http.StatusForbidden || errorCode(t, body) != "AccessDenied" {
			t.Errorf("%s %s %v: %d %s, want 403 AccessDenied", tc.method, tc.path, tc.header, status, body)
		}
	}
	// Same-origin (the console, later) and non-browser clients pass.
	if status, _ := do(t, http.DefaultClient, http.MethodPost, srv.URL+"/", "application/x-www-form-urlencoded", "Action=ListQueues", "Sec-Fetch-Site", "same-origin"); status != http.StatusOK {
		t.Errorf("same-origin: %d, want 200", status)
	}
	if status, _ := do(t, http.DefaultClient, http.MethodPost, srv.URL+"/", "application/x-www-form-urlencoded", "Action=ListQueues"); status != http.StatusOK {
		t.Errorf("no browser headers: %d, want 200", status)
	}
}

func TestAdminBodyBounded(t *testing.T) {
	srv := newDoor(t, true)
	big := bytes.Repeat([]byte("x"), MaxAdminBody+1)
	status, body := do(t, signed(testSecret), http.MethodPost, srv.URL+"/tidemq/things", "application/json", string(big))
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("a %d-byte admin body: %d %s, want 413", len(big), status, body)
	}
}

func TestRoutesListed(t *testing.T) {
	d := New(Config{})
	d.Admin("/tidemq/things", echo)
	d.Probe("GET /health", echo, true)
	d.Probe("GET /metrics", echo, false)
	d.Asset("GET /console/", echo)
	d.Protocol("/", echo)
	want := []Route{{"/tidemq/things", Admin}, {"GET /health", Open}, {"GET /metrics", Admin}, {"GET /console/", Public}, {"/", Protocol}}
	got := d.Routes()
	if len(got) != len(want) {
		t.Fatalf("Routes() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("route %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// An asset route answers unsigned under --auth, while an admin route
// beside it is refused; and without --auth the Host check still applies.
func TestAssetPublicButHostChecked(t *testing.T) {
	d := New(Config{Auth: verifier()})
	d.Asset("GET /console/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page")) }))
	d.Admin("GET /console/api/", echo)
	srv := httptest.NewServer(d)
	defer srv.Close()
	if status, body := do(t, http.DefaultClient, http.MethodGet, srv.URL+"/console/", "", ""); status != http.StatusOK || body != "page" {
		t.Errorf("unsigned asset under auth: %d %q, want 200 page", status, body)
	}
	if status, _ := do(t, http.DefaultClient, http.MethodGet, srv.URL+"/console/api/x", "", ""); status != http.StatusForbidden {
		t.Errorf("unsigned console API under auth: %d, want 403", status)
	}
	open := New(Config{})
	open.Asset("GET /console/", echo)
	req := httptest.NewRequest(http.MethodGet, "http://evil.example/console/", nil)
	rec := httptest.NewRecorder()
	open.ServeHTTP(rec, req)
	if rec.Code != http.StatusMisdirectedRequest {
		t.Errorf("asset for another host without auth: %d, want 421", rec.Code)
	}
	defer func() {
		if recover() == nil {
			t.Error("Asset accepted a POST route")
		}
	}()
	open.Asset("POST /console/x", echo)
}

// Without --auth, a request naming a host that is not this machine's (a
// page's domain re-pointed at 127.0.0.1 by DNS rebinding) is refused,
// even when the browser calls it same-origin.
func TestHostCheckedWithoutAuth(t *testing.T) {
	d := New(Config{AllowedHosts: []string{"tidemq.internal"}})
	d.Admin("/tidemq/things", echo)
	d.Protocol("/", echo)
	for host, want := range map[string]int{
		"rebind.attacker.example:9324": http.StatusMisdirectedRequest,
		"attacker.example":             http.StatusMisdirectedRequest,
		"127.0.0.1:9324":               http.StatusOK,
		"[::1]:9324":                   http.StatusOK,
		"localhost:9324":               http.StatusOK,
		"tidemq.internal:9324":         http.StatusOK,
		"TIDEMQ.internal.":             http.StatusOK,
	} {
		for _, path := range []string{"/tidemq/things", "/"} {
			req := httptest.NewRequest(http.MethodPost, "http://x"+path, strings.NewReader(`{}`))
			req.Host = host
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			rec := httptest.NewRecorder()
			d.ServeHTTP(rec, req)
			if rec.Code != want {
				t.Errorf("Host %s, %s: %d %s, want %d", host, path, rec.Code, rec.Body, want)
			}
		}
	}
	// With authentication the signature decides, whatever the Host.
	a := New(Config{Auth: verifier()})
	a.Protocol("/", echo)
	req := httptest.NewRequest(http.MethodPost, "http://attacker.example/", strings.NewReader("x"))
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("with Auth, a named host: %d, want it passed to the protocol handler", rec.Code)
	}
}
