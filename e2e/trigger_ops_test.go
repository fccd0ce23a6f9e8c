package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// eventually polls cond (real time, generously) until it holds.
func eventuallyE2E(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A trigger operated as the seed teams do, with the AWS CLI and the
// tidemq CLI: a failing invocation fires the trigger_errors alarm (webhook
// and /metrics) and shows in `tidemq trigger list`; lowering the queue's
// visibility timeout below the function timeout with set-queue-attributes
// pauses the trigger, and raising it again resumes it.
func TestTriggerOperations(t *testing.T) {
	t.Parallel()
	hooks := make(chan map[string]any, 20)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p map[string]any
		_ = json.NewDecoder(r.Body).Decode(&p)
		hooks <- p
	}))
	defer hook.Close()
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"body":"boom"`) {
			http.Error(w, "kaboom", http.StatusInternalServerError)
		}
	}))
	defer fn.Close()

	s := startServer(t, "--alarm-interval", "100ms", "--alarm-webhook", hook.URL)
	cli := newCLI(t, s)
	var q struct{ QueueUrl string }
	cli.ok(t, &q, "create-queue", "--queue-name", "orders", "--attributes", "VisibilityTimeout=30")
	tidemq := func(args ...string) string {
		t.Helper()
		out, errOut, code := runTidemq(t, nil, append(args, "--endpoint", s.url)...)
		if code != 0 {
			t.Fatalf("tidemq %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	tidemq("trigger", "create", "fn", "--queue", "orders", "--url", fn.URL, "--timeout", "5", "--batch-size", "1")
	cli.ok(t, nil, "send-message", "--queue-url", q.QueueUrl, "--message-body", "ok")
	cli.ok(t, nil, "send-message", "--queue-url", q.QueueUrl, "--message-body", "boom")

	// The failed invocation fires the alarm, named after the trigger.
	deadline := time.After(20 * time.Second)
	for fired := false; !fired; {
		select {
		case p := <-hooks:
			alerts, _ := p["alerts"].([]any)
			a, _ := alerts[0].(map[string]any)
			labels, _ := a["labels"].(map[string]any)
			fired = p["status"] == "firing" && labels["alertname"] == "TidemqTriggerErrors" && labels["trigger"] == "fn" && labels["queue"] == "orders"
		case <-deadline:
			t.Fatal("no TidemqTriggerErrors webhook call")
		}
	}
	list := tidemq("trigger", "list")
	if !strings.Contains(list, "recent invocations of fn, latest first:") || !strings.Contains(list, "HTTP 500 Internal Server Error: kaboom") ||
		!strings.Contains(list, "success") {
		t.Errorf("trigger list:\n%s", list)
	}
	metrics := func() string {
		_, body := rawRequest(t, http.MethodGet, s.url+"/metrics", "", "")
		return body
	}
	m := metrics()
	for _, want := range []string{
		`tidemq_trigger_state{queue="orders",state="Enabled",trigger="fn"} 1`,
		`tidemq_trigger_invocation_duration_seconds_count{outcome="error",queue="orders",trigger="fn"} 1`,
		`tidemq_trigger_alarm_firing{alarm="trigger_errors",queue="orders",trigger="fn"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// The function timeout is 5 s: a 3 s visibility timeout pauses the
	// trigger, 30 s resumes it.
	state := func() string {
		var l struct {
			Triggers []struct{ State, StateReason string }
		}
		if err := json.Unmarshal([]byte(tidemq("trigger", "list", "--json")), &l); err != nil || len(l.Triggers) != 1 {
			t.Fatalf("trigger list --json: %v %+v", err, l)
		}
		return l.Triggers[0].State + ": " + l.Triggers[0].StateReason
	}
	cli.ok(t, nil, "set-queue-attributes", "--queue-url", q.QueueUrl, "--attributes", "VisibilityTimeout=3")
	eventuallyE2E(t, "the pause", func() bool { return strings.HasPrefix(state(), "Paused: ") })
	if st := state(); !strings.Contains(st, "visibility timeout (3s) is not above the function timeout (5s)") {
		t.Errorf("paused state %q", st)
	}
	m = metrics()
	if !strings.Contains(m, `tidemq_trigger_state{queue="orders",state="Paused",trigger="fn"} 1`) ||
		!strings.Contains(m, `tidemq_trigger_pauses_total{queue="orders",trigger="fn"} 1`) {
		t.Errorf("/metrics while paused lacks the state or the pause")
	}
	cli.ok(t, nil, "set-queue-attributes", "--queue-url", q.QueueUrl, "--attributes", "VisibilityTimeout=30")
	eventuallyE2E(t, "the resume", func() bool { return state() == "Enabled: " })
}
