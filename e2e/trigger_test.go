package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Triggers in `tidemq serve`'s one store: what survives a restart, and the
// upgrade of a data directory that kept them in triggers.json.

// invocation is one call of a trigger's HTTP target.
type invocation struct {
	path, auth, apiKey string
	bodies             []string
}

// fnTarget is a trigger's HTTP target that hands over each invocation and
// answers that every message was processed.
func fnTarget(t *testing.T) (*httptest.Server, chan invocation) {
	ch := make(chan invocation, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct{ Records []struct{ Body string } }
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &ev)
		in := invocation{path: r.URL.Path, auth: r.Header.Get("Authorization"), apiKey: r.Header.Get("X-Api-Key")}
		for _, rec := range ev.Records {
			in.bodies = append(in.bodies, rec.Body)
		}
		ch <- in
		w.Write([]byte(`{"batchItemFailures":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

// nextInvocation waits for the invocation that brings body.
func nextInvocation(t *testing.T, ch chan invocation, body string) invocation {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case in := <-ch:
			for _, b := range in.bodies {
				if b == body {
					return in
				}
			}
		case <-deadline:
			t.Fatalf("no invocation brought %q", body)
			return invocation{}
		}
	}
}

// adminJSON makes an unsigned admin API call and checks its status.
func (s *server) adminJSON(t *testing.T, method, path, body string, want int) string {
	t.Helper()
	status, out := rawRequest(t, method, s.url+path, "application/json", body)
	if status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, status, out, want)
	}
	return out
}

// A trigger created through the admin API survives a restart of `tidemq
// serve`, and keeps delivering with its secret header, which the admin
// API still does not show. No triggers.json is written: the trigger is in
// the one store, beside the queues.
func TestServeKeepsTriggersAcrossRestart(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	fn, calls := fnTarget(t)
	const secret = "Bearer e2e-trigger-secret"

	s := startServer(t, "--data-dir", dataDir)
	q := s.createQueue(t, "orders", map[string]string{"VisibilityTimeout": "120"})
	created := s.adminJSON(t, http.MethodPost, "/tidemq/triggers", `{"Name":"orders-fn","Queue":"orders","Timeout":2,
		"Target":{"URL":"`+fn.URL+`/orders","Headers":{"Authorization":"`+secret+`"}}}`, http.StatusCreated)
	if strings.Contains(created, "e2e-trigger-secret") {
		t.Errorf("the admin API shows the secret:\n%s", created)
	}
	s.send(t, q, "before")
	if in := nextInvocation(t, calls, "before"); in.auth != secret || in.path != "/orders" {
		t.Errorf("before the restart the target got %+v", in)
	}
	s.stop()
	if _, err := os.Stat(filepath.Join(dataDir, "triggers.json")); !os.IsNotExist(err) {
		t.Errorf("DATA_DIR/triggers.json: %v, want none: the triggers are in the one store", err)
	}

	s = startServer(t, "--data-dir", dataDir)
	got := s.adminJSON(t, http.MethodGet, "/tidemq/triggers/orders-fn", "", http.StatusOK)
	if !strings.Contains(got, `"State": "Enabled"`) || !strings.Contains(got, `"Authorization": "********"`) || strings.Contains(got, "e2e-trigger-secret") {
		t.Errorf("after the restart the admin API shows:\n%s", got)
	}
	s.send(t, q, "after")
	if in := nextInvocation(t, calls, "after"); in.auth != secret || in.path != "/orders" {
		t.Errorf("after the restart the target got %+v", in)
	}
	// A change after the restart keeps the stored secret.
	s.adminJSON(t, http.MethodPatch, "/tidemq/triggers/orders-fn", `{"BatchSize":3}`, http.StatusOK)
	s.send(t, q, "patched")
	if in := nextInvocation(t, calls, "patched"); in.auth != secret {
		t.Errorf("after an update the target got %+v", in)
	}
	if strings.Contains(s.logs.String(), "e2e-trigger-secret") {
		t.Errorf("the log shows the secret:\n%s", s.logs)
	}
}

// A data directory whose triggers are in DATA_DIR/triggers.json, as the
// release before the one store kept them (trigger/testdata/legacy, its
// targets pointed at this test's endpoint), is upgraded at the first start:
// the triggers run with their secrets, the file is renamed
// triggers.json.imported, and the next start imports nothing.
func TestServeImportsAnOlderTriggersFile(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	fn, calls := fnTarget(t)
	fixture, err := os.ReadFile(filepath.Join("..", "trigger", "testdata", "legacy", "triggers.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The queues, in the store, as that release's engine kept them.
	s := startServer(t, "--data-dir", dataDir)
	q := s.createQueue(t, "orders", map[string]string{"VisibilityTimeout": "120"})
	s.createQueue(t, "audit", map[string]string{"VisibilityTimeout": "120"})
	s.stop()
	old := filepath.Join(dataDir, "triggers.json")
	if err := os.WriteFile(old, []byte(strings.ReplaceAll(string(fixture), "fn.invalid", strings.TrimPrefix(fn.URL, "http://"))), 0o600); err != nil {
		t.Fatal(err)
	}

	s = startServer(t, "--data-dir", dataDir)
	if !strings.Contains(s.logs.String(), "imported the triggers of an older release") {
		t.Errorf("the import is not logged:\n%s", s.logs)
	}
	list := s.adminJSON(t, http.MethodGet, "/tidemq/triggers", "", http.StatusOK)
	for _, name := range []string{`"Name": "orders-fn"`, `"Name": "audit-fn"`, `"Name": "audit-cmd"`} {
		if !strings.Contains(list, name) {
			t.Errorf("after the upgrade the triggers lack %s:\n%s", name, list)
		}
	}
	s.send(t, q, `{"kind":"order"}`)
	if in := nextInvocation(t, calls, `{"kind":"order"}`); in.auth != "Bearer tok-legacy" || in.apiKey != "key-legacy" || in.path != "/orders" {
		t.Errorf("the imported trigger's target got %+v", in)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("DATA_DIR/triggers.json is still there: %v", err)
	}
	if fi, err := os.Stat(old + ".imported"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("DATA_DIR/triggers.json.imported: %v %v, want it 0600", fi, err)
	}
	s.adminJSON(t, http.MethodDelete, "/tidemq/triggers/audit-cmd", "", http.StatusNoContent)
	s.stop()

	s = startServer(t, "--data-dir", dataDir)
	if strings.Contains(s.logs.String(), "imported") {
		t.Errorf("the next start imported again:\n%s", s.logs)
	}
	list = s.adminJSON(t, http.MethodGet, "/tidemq/triggers", "", http.StatusOK)
	if strings.Contains(list, "audit-cmd") || !strings.Contains(list, "orders-fn") {
		t.Errorf("at the next start:\n%s", list)
	}
}
