package trigger_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

func TestAdminAPIAndPersistence(t *testing.T) {
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "triggers.json")
	m, err := trigger.NewManager(trigger.Options{Broker: e, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	call := func(method, p, body string, want int) string {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+p, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s = %d %s, want %d", method, p, resp.StatusCode, b, want)
		}
		return string(b)
	}
	out := call("POST", "/tidemq/triggers", `{"Name":"t","Queue":"q","Target":{"URL":"http://127.0.0.1:1/"},"BatchSize":5,"Timeout":2}`, 201)
	if !strings.Contains(out, `"State": "Enabled"`) || !strings.Contains(out, `"Warnings"`) {
		t.Fatalf("create: %s", out)
	}
	call("POST", "/tidemq/triggers", `{"Name":"t","Queue":"q","Target":{"URL":"http://x/"}}`, 409)
	call("POST", "/tidemq/triggers", `{"Name":"u","Queue":"q","Target":{"URL":"http://x/"},"Timeout":30}`, 400)
	call("POST", "/tidemq/triggers", `{"Name":"u","Queue":"nope","Target":{"URL":"http://x/"}}`, 400)
	call("POST", "/tidemq/triggers", `{"Name":"u","Queue":"q","Target":{"URL":"http://x/"},"Bogus":1}`, 400)
	call("PATCH", "/tidemq/triggers/t", `{"BatchSize":11}`, 400)
	call("PATCH", "/tidemq/triggers/t", `{"Queue":"other"}`, 400)
	out = call("PATCH", "/tidemq/triggers/t", `{"BatchSize":7}`, 200)
	if !strings.Contains(out, `"BatchSize": 7`) || !strings.Contains(out, `"Timeout": 2`) {
		t.Fatalf("patch: %s", out)
	}
	out = call("POST", "/tidemq/triggers/t/disable", "", 200)
	if !strings.Contains(out, `"State": "Disabled"`) {
		t.Fatalf("disable: %s", out)
	}
	call("GET", "/tidemq/triggers/nope", "", 404)
	out = call("GET", "/tidemq/triggers", "", 200)
	if !strings.Contains(out, `"Name": "t"`) {
		t.Fatalf("list: %s", out)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// A new manager (a restarted server) finds the trigger as it was left.
	m2, err := trigger.NewManager(trigger.Options{Broker: e, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	m2.Start()
	defer m2.Close(context.Background())
	s, err := m2.Get("t")
	if err != nil || s.BatchSize != 7 || s.State != "Disabled" {
		t.Fatalf("after restart: %+v %v", s, err)
	}
	if _, err := m2.SetEnabled(context.Background(), "t", true); err != nil {
		t.Fatal(err)
	}
	if err := m2.Delete("t"); err != nil {
		t.Fatal(err)
	}
	m3, _ := trigger.NewManager(trigger.Options{Broker: e, Path: path})
	if l := m3.List(); len(l) != 0 {
		t.Fatalf("deleted trigger came back: %+v", l)
	}
}
