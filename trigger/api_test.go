package trigger_test

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
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
	st := mem.New() // kept across the managers: Close leaves it as it is
	m, err := trigger.NewManager(trigger.Options{Broker: e, Store: st})
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
	// One JSON value and nothing after it (the admin guard reads the body so).
	call("POST", "/tidemq/triggers", `{"Name":"u","Queue":"q","Target":{"URL":"http://x/"}} junk`, 400)
	call("POST", "/tidemq/triggers", `{"Name":"u","Queue":"q","Target":{"URL":"http://x/"}}{"Name":"v"}`, 400)
	call("PATCH", "/tidemq/triggers/t", `{"BatchSize":7} {"Queue":"other"}`, 400)
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
	m2, err := trigger.NewManager(trigger.Options{Broker: e, Store: st})
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
	m3, _ := trigger.NewManager(trigger.Options{Broker: e, Store: st})
	if l := m3.List(); len(l) != 0 {
		t.Fatalf("deleted trigger came back: %+v", l)
	}
}

// TestUpdateReplacesHeaders: an update that gives Target.Headers gives
// them all: a header left out is removed, not kept from before; an update
// that does not give them keeps them.
func TestUpdateReplacesHeaders(t *testing.T) {
	e, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	st := mem.New()
	m, err := trigger.NewManager(trigger.Options{Broker: e, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	ctx := context.Background()
	if _, err := m.Create(ctx, trigger.Config{Name: "t", Queue: "q", Timeout: 1, Enabled: new(false),
		Target: trigger.Target{URL: "http://h/", Headers: map[string]string{"A": "a-1", "B": "b-1"}}}); err != nil {
		t.Fatal(err)
	}
	stored := func() map[string]string {
		t.Helper()
		cs, err := trigger.StoredTriggers(st)
		if err != nil || len(cs) != 1 {
			t.Fatalf("stored triggers: %v %+v", err, cs)
		}
		return cs[0].Target.Headers
	}
	if _, err := m.Update(ctx, "t", []byte(`{"BatchSize":3}`)); err != nil {
		t.Fatal(err)
	}
	if h := stored(); !maps.Equal(h, map[string]string{"A": "a-1", "B": "b-1"}) {
		t.Errorf("headers after an update without them: %v", h)
	}
	if _, err := m.Update(ctx, "t", []byte(`{"Target":{"Headers":{"A":"a-2"}}}`)); err != nil {
		t.Fatal(err)
	}
	if h := stored(); !maps.Equal(h, map[string]string{"A": "a-2"}) {
		t.Errorf("headers after an update giving A only: %v", h)
	}
}
