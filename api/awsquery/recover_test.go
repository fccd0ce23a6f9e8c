package awsquery

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type failer struct{ failed bool }

func (f *failer) Fail(w http.ResponseWriter) []any {
	f.failed = true
	w.WriteHeader(http.StatusInternalServerError)
	return []any{"action", "Act"}
}

// TestRecover: a panic under Recover is answered by the request's Fail and
// logged with the request's attributes, the value and the stack; without
// a panic nothing is written.
func TestRecover(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	serve := func(f *failer, w http.ResponseWriter, panics bool) {
		defer Recover(log, "test", w, f)
		if panics {
			panic("boom")
		}
	}
	f, rec := &failer{}, httptest.NewRecorder()
	serve(f, rec, false)
	if f.failed || logs.Len() != 0 {
		t.Fatalf("no panic: failed %v, logged %q", f.failed, logs.String())
	}
	serve(f, rec, true)
	if !f.failed || rec.Code != 500 {
		t.Errorf("panic: failed %v, status %d", f.failed, rec.Code)
	}
	for _, want := range []string{"test: panic while serving a request", "action=Act", "panic=boom", "stack="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q: %s", want, logs.String())
		}
	}
}
