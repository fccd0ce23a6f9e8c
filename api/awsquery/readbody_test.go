package awsquery

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// An unauthenticated claim of a 64 KiB body that sends 10 bytes costs
// about what was sent, not what was claimed.
func TestReadBodyDoesNotTrustASmallClaim(t *testing.T) {
	var before, after runtime.MemStats
	const n = 100
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodPost, "/", io.NopCloser(strings.NewReader("Action=Lis")))
		reqs[i].ContentLength = 64 << 10
	}
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, r := range reqs {
		ReadBody(httptest.NewRecorder(), r, 8<<20)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 16<<10 {
		t.Errorf("reading a 10-byte body that claimed 64 KiB allocated %d bytes", per)
	}
}
