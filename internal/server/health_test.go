package server

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type healthFunc func() error

func (f healthFunc) Healthy() error { return f() }

// /health says why it is unhealthy only to a signed caller; the reason,
// which may name the database's user, host or a path, always goes to the
// log, once per change.
func TestHealthKeepsInternalsForSignedCallers(t *testing.T) {
	reason := errors.New(`postgres unreachable: failed to connect to user=tidemq host=db.internal database=prod`)
	var healthy bool
	eng := healthFunc(func() error {
		if healthy {
			return nil
		}
		return reason
	})
	get := func(h http.Handler) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health", nil))
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	open := Health(eng, false, log)
	for i := 0; i < 3; i++ {
		if code, body := get(open); code != http.StatusServiceUnavailable || strings.TrimSpace(body) != `{"status":"unavailable"}` {
			t.Fatalf("unsigned /health while unhealthy = %d %s, want 503 and the status alone", code, body)
		}
	}
	if n := strings.Count(logs.String(), "db.internal"); n != 1 {
		t.Errorf("the reason was logged %d times over three probes, want once:\n%s", n, logs.String())
	}
	if code, body := get(Health(eng, true, log)); code != http.StatusServiceUnavailable || !strings.Contains(body, "db.internal") {
		t.Errorf("signed /health while unhealthy = %d %s, want 503 with the reason", code, body)
	}
	healthy = true
	if code, body := get(open); code != http.StatusOK || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Errorf("/health when healthy = %d %s", code, body)
	}
	if !strings.Contains(logs.String(), "healthy again") {
		t.Errorf("the recovery was not logged:\n%s", logs.String())
	}
}
