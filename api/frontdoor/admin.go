package frontdoor

import (
	"bytes"
	"context"
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
			key, err := d.cfg.Auth.Authenticate(r, body)
			if err != nil {
				d.log.Info("refused an admin request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
				writeError(w, err)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), accessKeyKey{}, key))
			if d.cfg.Guard != nil {
				r.Body = io.NopCloser(bytes.NewReader(body))
				done, err := d.cfg.Guard(r, key)
				if err != nil {
					writeError(w, err)
					return
				}
				if done != nil {
					sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
					defer func() { done(sw.status) }()
					w = sw
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
}

// accessKeyKey is the context key of an admin request's access key.
type accessKeyKey struct{}

// AccessKey is the access key that signed an admin request, from its
// context ("" without --auth).
func AccessKey(ctx context.Context) string {
	k, _ := ctx.Value(accessKeyKey{}).(string)
	return k
}

// statusWriter remembers the status of an answer, for Config.Guard.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines) through the wrapper.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

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
		return nil, tidemq.UnreadableBody(err)
	}
	return body, nil
}

// writeError answers as every admin route does (api/adminjson).
func writeError(w http.ResponseWriter, err error) { adminjson.WriteError(w, err) }
