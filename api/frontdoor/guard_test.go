package frontdoor

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/tidemq/tidemq"
)

// The Guard decides after the signature: it sees the access key and the
// body (which the handler still reads whole), its refusal is answered as
// the admin API answers errors, and it is told the status of what it let
// through.
func TestGuard(t *testing.T) {
	var status atomic.Int64
	var sawKey, sawBody atomic.Value
	d := New(Config{Auth: verifier(), Guard: func(r *http.Request, key string) (func(int), error) {
		b, _ := io.ReadAll(r.Body)
		sawKey.Store(key)
		sawBody.Store(string(b))
		if AccessKey(r.Context()) != key {
			t.Errorf("the context's access key %q, want %q", AccessKey(r.Context()), key)
		}
		if string(b) == `{"deny":true}` {
			return nil, tidemq.Errorf(tidemq.ErrAccessDenied, "no")
		}
		return func(s int) { status.Store(int64(s)) }, nil
	}})
	d.Admin("/tidemq/things", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusCreated)
		w.Write(b)
	}))
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)

	code, body := do(t, signed(testSecret), http.MethodPost, srv.URL+"/tidemq/things", "application/json", `{"a":1}`)
	if code != http.StatusCreated || body != `{"a":1}` {
		t.Fatalf("allowed call: %d %q", code, body)
	}
	if sawKey.Load() != testKey || sawBody.Load() != `{"a":1}` || status.Load() != http.StatusCreated {
		t.Fatalf("the guard saw key %v body %v status %d", sawKey.Load(), sawBody.Load(), status.Load())
	}
	code, body = do(t, signed(testSecret), http.MethodPost, srv.URL+"/tidemq/things", "application/json", `{"deny":true}`)
	if code != http.StatusForbidden || errorCode(t, body) != "AccessDenied" {
		t.Fatalf("refused call: %d %s", code, body)
	}
	// An unsigned request never reaches the guard.
	sawKey.Store("")
	if code, _ := do(t, http.DefaultClient, http.MethodGet, srv.URL+"/tidemq/things", "", ""); code != http.StatusForbidden || sawKey.Load() != "" {
		t.Fatalf("unsigned: %d, guard saw %v", code, sawKey.Load())
	}
}
