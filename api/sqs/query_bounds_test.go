package sqs

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/api/awsquery"
)

// The Query parser's bounds (limits.go), through the whole handler: a
// request beyond them is answered InvalidQueryParameter, and what a request
// costs to parse grows with its body, never with what its names describe.

// postForm posts body as a form and returns the answer and the bytes
// allocated (by the whole process) while it was served.
func postForm(t *testing.T, h http.Handler, body string) (*httptest.ResponseRecorder, uint64) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader([]byte(body)))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec := serve(h, r)
	runtime.ReadMemStats(&after)
	return rec, after.TotalAlloc - before.TotalAlloc
}

func wantInvalidQueryParameter(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "<Code>InvalidQueryParameter</Code>") {
		t.Fatalf("got %d %.300s, want 400 InvalidQueryParameter", rec.Code, rec.Body.String())
	}
}

// TestQueryDottedNameMemory is the attack of issue 14: an 8 MiB body whose
// one parameter name has 4M dots grew the heap by more than 1 GiB, one tree
// node per dot, before the request was authenticated.
func TestQueryDottedNameMemory(t *testing.T) {
	h := quietHandler()
	prefix, suffix := "Action=ListQueues&", "=x"
	body := prefix + strings.Repeat("a.", (MaxRequestBodyBytes-len(prefix)-len(suffix))/2) + suffix
	rec, alloc := postForm(t, h, body)
	// Reading the body and copying it to a string take 2 bodies; the
	// parser itself must add next to nothing.
	if limit := 3 * uint64(len(body)); alloc > limit {
		t.Errorf("serving a %d-byte body allocated %d bytes, want at most %d", len(body), alloc, limit)
	}
	wantInvalidQueryParameter(t, rec)
}

// TestQueryParamsWithinBoundsMemory fills every bound without passing one:
// the most parameters, each name as deep as allowed and different from the
// others at its first part. A tree of the names had 16 nodes per parameter.
func TestQueryParamsWithinBoundsMemory(t *testing.T) {
	h := quietHandler()
	var b strings.Builder
	b.WriteString("Action=ListQueues")
	deep := strings.Repeat(".a", awsquery.MaxParamDepth-1)
	for i := 1; i < awsquery.MaxParams; i++ {
		fmt.Fprintf(&b, "&p%d%s=", i, deep)
	}
	body := b.String()
	rec, alloc := postForm(t, h, body)
	if rec.Code != http.StatusOK {
		t.Fatalf("got %d %.300s, want 200", rec.Code, rec.Body.String())
	}
	// 2 bodies for reading and copying, 32 bytes per parameter for the
	// sorted list, and the answer.
	if limit := 3*uint64(len(body)) + 32*awsquery.MaxParams + 64<<10; alloc > limit {
		t.Errorf("serving a %d-byte body allocated %d bytes, want at most %d", len(body), alloc, limit)
	}
}

func TestQueryTooManyParams(t *testing.T) {
	body := "Action=ListQueues" + strings.Repeat("&a=", awsquery.MaxParams)
	rec, _ := postForm(t, quietHandler(), body)
	wantInvalidQueryParameter(t, rec)
}

func TestQueryParamNameTooLong(t *testing.T) {
	for _, name := range []string{
		strings.Repeat("n", awsquery.MaxParamNameLength+1),
		// Escaped, it is 3 times as long; decoded, 1 byte too long.
		strings.Repeat("%6E", awsquery.MaxParamNameLength+1),
	} {
		rec, _ := postForm(t, quietHandler(), "Action=ListQueues&"+name+"=x")
		wantInvalidQueryParameter(t, rec)
	}
	// At the bound it is an ordinary (unknown, so ignored) parameter.
	rec, _ := postForm(t, quietHandler(), "Action=ListQueues&"+strings.Repeat("n", awsquery.MaxParamNameLength)+"=x")
	if rec.Code != http.StatusOK {
		t.Errorf("a name at the bound: %d %.300s", rec.Code, rec.Body.String())
	}
}

func TestQueryParamNameTooDeep(t *testing.T) {
	// The dots may be escaped; the bound is on the decoded name.
	for _, sep := range []string{".", "%2E"} {
		rec, _ := postForm(t, quietHandler(), "Action=ListQueues&a"+strings.Repeat(sep+"a", awsquery.MaxParamDepth)+"=x")
		wantInvalidQueryParameter(t, rec)
	}
	rec, _ := postForm(t, quietHandler(), "Action=ListQueues&a"+strings.Repeat(".a", awsquery.MaxParamDepth-1)+"=x")
	if rec.Code != http.StatusOK {
		t.Errorf("a name at the bound: %d %.300s", rec.Code, rec.Body.String())
	}
}

// TestQueryStringBounds: a GET's query string is held to the same bounds,
// together with the body's parameters.
func TestQueryStringBounds(t *testing.T) {
	h := quietHandler()
	r := httptest.NewRequest(http.MethodGet, "/?Action=ListQueues&a"+strings.Repeat(".a", 1000)+"=x", nil)
	wantInvalidQueryParameter(t, serve(h, r))

	half := strings.Repeat("&a=", awsquery.MaxParams/2)
	r = httptest.NewRequest(http.MethodPost, "/?Action=ListQueues"+half, strings.NewReader("Version=2012-11-05"+half))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	wantInvalidQueryParameter(t, serve(h, r))
}
