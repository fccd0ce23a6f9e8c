package sns

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/tidemq/tidemq/api/awsquery"
	"github.com/tidemq/tidemq/sns"
)

// MaxPeekBytes bounds how much of a request body IsSNSRequest reads to find
// the Action.
const MaxPeekBytes = 1 << 20

// IsSNSRequest reports whether r is an SNS request: a Query request (form
// POST or GET, not AWS JSON) whose Action is an SNS action, or a GET of the
// signing certificate. It reads at most MaxPeekBytes of the body and returns
// a request whose body reads as the original did.
func IsSNSRequest(r *http.Request) (bool, *http.Request) {
	if r.URL.Path == sns.CertPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		return true, r
	}
	if r.Header.Get("X-Amz-Target") != "" || strings.HasPrefix(strings.ToLower(r.Header.Get("Content-Type")), "application/x-amz-json") {
		return false, r
	}
	if a, _ := awsquery.Lookup(r.URL.RawQuery, "Action"); a != "" {
		return isSNSAction(a, func(p string) string { v, _ := awsquery.Lookup(r.URL.RawQuery, p); return v }), r
	}
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return false, r
	}
	ct := strings.ToLower(r.Header.Get("Content-Type"))
	if ct != "" && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return false, r
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, MaxPeekBytes))
	r2 := r.Clone(r.Context())
	r2.Body = readCloser{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
	if err != nil {
		return false, r2
	}
	form := string(buf)
	if len(buf) == MaxPeekBytes { // maybe cut short: drop the last, partial pair
		if i := strings.LastIndexByte(form, '&'); i >= 0 {
			form = form[:i]
		}
	}
	// Only the Action is looked for: the SNS handler checks the rest, with
	// the same bounds as SQS, and answers in SNS's words.
	a, _ := awsquery.Lookup(form, "Action")
	return isSNSAction(a, func(p string) string { v, _ := awsquery.Lookup(form, p); return v }), r2
}

type readCloser struct {
	io.Reader
	io.Closer
}

// Route sends SNS requests (IsSNSRequest) to snsHandler and everything else
// to next, typically the SQS handler.
func Route(snsHandler, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, r := IsSNSRequest(r)
		if ok {
			snsHandler.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
