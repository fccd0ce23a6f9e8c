package trigger_test

import (
	"context"
	"io"
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

// A trigger asked for in another region polls that region's queue, as the
// client's SQS calls in that region see it. Before, `tidemq trigger create
// --region eu-west-1 --queue orders` (and `apply --region eu-west-1`)
// silently polled the home region's orders, or failed when it had none.
func TestTriggerQueueOfTheRequestRegion(t *testing.T) {
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	for _, q := range []string{"orders", "eu-west-1/orders", "eu-west-1/other"} {
		if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := trigger.NewManager(trigger.Options{Broker: e, HomeRegion: "us-east-1",
		RequestRegion: func(r *http.Request) string { return r.Header.Get("X-Test-Region") }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	call := func(method, path, region, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("X-Test-Region", region)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
	}
	queueOf := func(name string) string {
		t.Helper()
		s, err := m.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return s.Queue
	}
	target := `"Target":{"URL":"http://127.0.0.1:1/"},"Enabled":false`
	call("POST", "/tidemq/triggers", "eu-west-1", `{"Name":"eu","Queue":"orders",`+target+`}`)
	call("POST", "/tidemq/triggers", "us-east-1", `{"Name":"home","Queue":"orders",`+target+`}`)
	call("POST", "/tidemq/triggers", "", `{"Name":"unsigned","Queue":"orders",`+target+`}`)
	call("POST", "/tidemq/triggers", "eu-west-1", `{"Name":"explicit","Queue":"us-east-1/orders",`+target+`}`)
	for name, want := range map[string]string{"eu": "eu-west-1/orders", "home": "orders", "unsigned": "orders", "explicit": "orders"} {
		if got := queueOf(name); got != want {
			t.Errorf("trigger %s polls %q, want %q", name, got, want)
		}
	}
	// An update names the queue as its create did (tidemq apply sends the
	// whole trigger again): the same queue, so it is accepted.
	call("PATCH", "/tidemq/triggers/eu", "eu-west-1", `{"Queue":"orders","BatchSize":3}`)
	call("PATCH", "/tidemq/triggers/eu", "eu-west-1", `{"BatchSize":4}`)
	if got := queueOf("eu"); got != "eu-west-1/orders" {
		t.Errorf("after updates in eu-west-1: polls %q, want eu-west-1/orders", got)
	}
}
