package frontdoor

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/adminjson"
)

// MaxAdminBody bounds the body of an admin request: a trigger definition is
// a few KiB.
const MaxAdminBody = 1 << 20

// admin wraps an admin handler: cross-origin refusal, the JSON rule for
// state-changing calls, and signature verification.
func (d *Door) admin(h http.Handler) http.Handler {
	return d.crossOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !safeMethod(r.Method) && !isJSON(r.Header.Get("Content-Type")) {
			writeError(w, &tidemq.Error{Code: tidemq.ErrUnsupportedMediaType,
				Message: "A " + r.Method + " to tidemq's admin API must carry Content-Type: application/json."})
			return
		}
		if d.cfg.Auth != nil {
			body, err := readAdminBody(w, r)
			if err != nil {
				writeError(w, err)
				return
			}
			if _, err := d.cfg.Auth.Authenticate(r, body); err != nil {
				d.log.Info("refused an admin request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
				writeError(w, err)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
}

func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

func isJSON(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && t == "application/json"
}

// readAdminBody reads a whole admin body, at most MaxAdminBody bytes.
func readAdminBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxAdminBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, tidemq.Errorf(tidemq.ErrRequestEntityTooLarge, "An admin request body may be at most %d bytes.", MaxAdminBody)
		}
		return nil, tidemq.Errorf(tidemq.ErrMalformedInput, "The request body could not be read: %v", err)
	}
	return body, nil
}

// writeError answers as every admin route does (api/adminjson).
func writeError(w http.ResponseWriter, err error) { adminjson.WriteError(w, err) }
