package alarms_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

var start = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func openEngine(t *testing.T, clk tidemq.Clock) *engine.Engine {
	t.Helper()
	eng, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func send(t *testing.T, eng *engine.Engine, queue string) {
	t.Helper()
	_, err := eng.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: queue,
		Entries: []tidemq.SendEntry{{ID: "1", Body: "x"}}})
	must(t, err)
}

func receive(t *testing.T, eng *engine.Engine, queue string) int {
	t.Helper()
	zero := 0
	ms, err := eng.ReceiveMessages(context.Background(), tidemq.ReceiveMessagesParams{Queue: queue,
		MaxNumberOfMessages: new(10), WaitTimeSeconds: &zero})
	must(t, err)
	return len(ms)
}

// hook is a webhook receiver: a test server that passes each payload on.
type hook struct {
	srv      *httptest.Server
	payloads chan alarms.Payload
	raw      chan []byte
	failures atomic.Int32 // answer 500 this many times first
}

func newHook(t *testing.T) *hook {
	h := &hook{payloads: make(chan alarms.Payload, 100), raw: make(chan []byte, 100)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if h.failures.Add(-1) >= 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("webhook request %s %s", r.Method, r.Header.Get("Content-Type"))
		}
		var p alarms.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			t.Errorf("payload %s: %v", body, err)
		}
		h.raw <- body
		h.payloads <- p
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// next returns the next payload the hook received, as "status alertname queue".
func (h *hook) next(t *testing.T) string {
	t.Helper()
	select {
	case p := <-h.payloads:
		a := p.Alerts[0]
		return fmt.Sprintf("%s %s %s", p.Status, a.Labels["alertname"], a.Labels["queue"])
	case <-time.After(5 * time.Second):
		t.Fatal("no webhook call")
		return ""
	}
}

func (h *hook) none(t *testing.T) {
	t.Helper()
	select {
	case p := <-h.payloads:
		t.Fatalf("unexpected webhook call: %+v", p)
	case <-time.After(20 * time.Millisecond):
	}
}

// TestScriptedAlarms drives a queue and its dead-letter queue through every
// alarm with a fake clock; the evaluator runs on the clock's timers, once a
// minute, and every transition is checked in the log, the API and the
// webhook.
func TestScriptedAlarms(t *testing.T) {
	clk := clocktest.New(start)
	eng := openEngine(t, clk)
	ctx := context.Background()
	_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "orders-dlq"})
	must(t, err)
	_, err = eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "orders", Attributes: map[string]string{
		"MessageRetentionPeriod": "1200", "VisibilityTimeout": "30",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":"1"}`,
	}})
	must(t, err)

	h := newHook(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	wh := alarms.StartWebhook(runCtx, &alarms.HTTPWebhook{URL: h.srv.URL, ExternalURL: "http://tidemq:9324", Logger: log})
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot, Clock: clk, Interval: time.Minute, Webhook: wh, Logger: log})
	done := make(chan struct{})
	go func() { ev.Run(runCtx); close(done) }()
	defer func() { cancel(); <-done }()

	// minute advances the clock by a minute and waits for the evaluation.
	minute := func() {
		t.Helper()
		if !clk.WaitForTimers(1, 5*time.Second) {
			t.Fatal("the evaluator is not waiting")
		}
		clk.Advance(time.Minute)
		if !clk.WaitForTimers(1, 5*time.Second) {
			t.Fatal("no evaluation")
		}
	}
	states := func() string {
		var b strings.Builder
		for _, a := range ev.Alarms() {
			fmt.Fprintf(&b, "%s %s %s; ", a.Queue, a.Alarm, a.State)
		}
		return b.String()
	}
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("no first evaluation")
	}
	if got, want := states(), "orders oldest_message_age OK; orders consumer_gone OK; orders sustained_growth OK; orders messages_expired OK; orders-dlq dlq_not_empty OK; orders-dlq oldest_message_age OK; orders-dlq messages_expired OK; "; got != want {
		t.Fatalf("states:\n got %s\nwant %s", got, want)
	}

	// A message a minute for ten minutes: the depth grows at every
	// evaluation; after ten minutes of it, the growth alarm fires.
	for i := 1; i <= 10; i++ {
		send(t, eng, "orders")
		minute()
		if i < 10 {
			h.none(t)
		}
	}
	if got := h.next(t); got != "firing TidemqQueueGrowing orders" {
		t.Fatalf("t=10m: %s", got)
	}
	// t=11m: no more sends, so the growth resolves; the first message is
	// 660 s old, past half the 1200 s retention.
	minute()
	if got := h.next(t); got != "firing TidemqOldestMessageAge orders" {
		t.Fatalf("t=11m: %s", got)
	}
	if got := h.next(t); got != "resolved TidemqQueueGrowing orders" {
		t.Fatalf("t=11m: %s", got)
	}
	// t=15m: visible messages and no receive since the evaluator first saw
	// the queue, fifteen minutes ago.
	for i := 12; i <= 15; i++ {
		minute()
	}
	if got := h.next(t); got != "firing TidemqConsumerGone orders" {
		t.Fatalf("t=15m: %s", got)
	}
	h.none(t)
	// A consumer returns and takes all ten messages, but never deletes
	// them: at t=16m the messages are visible again (30 s visibility
	// timeout), but a receive came a minute ago, so consumer_gone resolves.
	if n := receive(t, eng, "orders"); n != 10 {
		t.Fatalf("received %d", n)
	}
	minute()
	if got := h.next(t); got != "resolved TidemqConsumerGone orders" {
		t.Fatalf("t=16m: %s", got)
	}
	// The next receive finds every message received once already
	// (maxReceiveCount 1) and dead-letters all ten.
	if n := receive(t, eng, "orders"); n != 0 {
		t.Fatalf("received %d after the timeout", n)
	}
	minute()
	if got := h.next(t); got != "resolved TidemqOldestMessageAge orders" {
		t.Fatalf("t=17m: %s", got)
	}
	if got := h.next(t); got != "firing TidemqDeadLetterQueueNotEmpty orders-dlq" {
		t.Fatalf("t=17m: %s", got)
	}
	h.none(t)
	if got, want := states(), "orders-dlq dlq_not_empty FIRING; orders oldest_message_age OK; orders consumer_gone OK; orders sustained_growth OK; orders messages_expired OK; orders-dlq oldest_message_age OK; orders-dlq messages_expired OK; "; got != want {
		t.Fatalf("states:\n got %s\nwant %s", got, want)
	}

	// The log has one line per transition.
	wantLog := []string{
		`level=WARN msg="alarm firing" alarm=sustained_growth queue=orders value=600 threshold=600`,
		`level=WARN msg="alarm firing" alarm=oldest_message_age queue=orders value=660 threshold=600`,
		`level=INFO msg="alarm resolved" alarm=sustained_growth queue=orders value=0 threshold=600`,
		`level=WARN msg="alarm firing" alarm=consumer_gone queue=orders value=900 threshold=900`,
		`level=INFO msg="alarm resolved" alarm=consumer_gone queue=orders value=60 threshold=900`,
		`level=INFO msg="alarm resolved" alarm=oldest_message_age queue=orders value=0 threshold=600`,
		`level=WARN msg="alarm firing" alarm=dlq_not_empty queue=orders-dlq value=10 threshold=0`,
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != len(wantLog) {
		t.Fatalf("log:\n%s", logs.String())
	}
	for i, w := range wantLog {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("log line %d:\n got %s\nwant %s...", i, lines[i], w)
		}
	}
}

// TestPayload checks the whole webhook payload of a firing and of a
// resolved alarm, as the receiver gets it.
func TestPayload(t *testing.T) {
	h := newHook(t)
	h.failures.Store(2) // two failures, then success: delivered on the third attempt
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wh := alarms.StartWebhook(ctx, &alarms.HTTPWebhook{URL: h.srv.URL, ExternalURL: "http://tidemq:9324/",
		Backoff: time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	fired := start.Add(17 * time.Minute)
	a := alarms.Alarm{Alarm: alarms.DLQNotEmpty, Queue: "orders-dlq", State: alarms.StateFiring, Since: fired,
		Value: 10, Threshold: 0, Summary: "dead-letter queue orders-dlq holds 10 visible messages"}
	wh.Send(alarms.Transition{Alarm: a, StartsAt: fired})
	a.State, a.Value, a.Summary = alarms.StateOK, 0, "dead-letter queue orders-dlq holds 0 visible messages"
	wh.Send(alarms.Transition{Alarm: a, StartsAt: fired, EndsAt: fired.Add(5 * time.Minute)})

	want := []string{`{
  "version": "4",
  "groupKey": "{}:{alertname=\"TidemqDeadLetterQueueNotEmpty\", queue=\"orders-dlq\"}",
  "truncatedAlerts": 0,
  "status": "firing",
  "receiver": "tidemq",
  "groupLabels": {
    "alertname": "TidemqDeadLetterQueueNotEmpty",
    "queue": "orders-dlq"
  },
  "commonLabels": {
    "alarm": "dlq_not_empty",
    "alertname": "TidemqDeadLetterQueueNotEmpty",
    "queue": "orders-dlq",
    "severity": "critical",
    "source": "tidemq"
  },
  "commonAnnotations": {
    "summary": "dead-letter queue orders-dlq holds 10 visible messages",
    "threshold": "0",
    "value": "10"
  },
  "externalURL": "http://tidemq:9324/",
  "alerts": [
    {
      "status": "firing",
      "labels": {
        "alarm": "dlq_not_empty",
        "alertname": "TidemqDeadLetterQueueNotEmpty",
        "queue": "orders-dlq",
        "severity": "critical",
        "source": "tidemq"
      },
      "annotations": {
        "summary": "dead-letter queue orders-dlq holds 10 visible messages",
        "threshold": "0",
        "value": "10"
      },
      "startsAt": "2025-03-01T12:17:00Z",
      "endsAt": "0001-01-01T00:00:00Z",
      "generatorURL": "http://tidemq:9324/tidemq/alarms",
      "fingerprint": "FP"
    }
  ]
}`, `"status": "resolved"`, `"endsAt": "2025-03-01T12:22:00Z"`, `"startsAt": "2025-03-01T12:17:00Z"`}
	get := func() string {
		select {
		case b := <-h.raw:
			<-h.payloads
			var out bytes.Buffer
			must(t, json.Indent(&out, b, "", "  "))
			return out.String()
		case <-time.After(5 * time.Second):
			t.Fatal("no webhook call")
			return ""
		}
	}
	first := get()
	var p alarms.Payload
	must(t, json.Unmarshal([]byte(first), &p))
	if fp := p.Alerts[0].Fingerprint; len(fp) != 16 {
		t.Errorf("fingerprint %q", fp)
	} else {
		first = strings.Replace(first, fp, "FP", 1)
	}
	if first != want[0] {
		t.Errorf("payload:\n%s\nwant:\n%s", first, want[0])
	}
	second := get()
	for _, w := range want[1:] {
		if !strings.Contains(second, w) {
			t.Errorf("resolved payload lacks %s:\n%s", w, second)
		}
	}
	if n := h.failures.Load(); n != -2 {
		t.Errorf("%d calls, want 4 (2 failures, 2 deliveries)", 2-n)
	}
}

// TestConfig checks per-queue overrides: exact names, patterns, turning an
// alarm off, and errors.
func TestConfig(t *testing.T) {
	c, err := alarms.ParseConfig([]byte(`
defaults:
  no_receive: 30m
queues:
  orders:
    growth_window: 5m
    oldest_age_share: 0.25
    trigger_error_window: 15m
  "batch-*":
    no_receive: "off"
    dlq_not_empty: false
    expired_window: "off"
`))
	must(t, err)
	for _, tc := range []struct {
		queue string
		want  alarms.Thresholds
	}{
		{"orders", alarms.Thresholds{DLQNotEmpty: true, OldestAgeShare: 0.25, NoReceive: 30 * time.Minute, GrowthWindow: 5 * time.Minute,
			ExpiredWindow: time.Hour, TriggerErrorWindow: 15 * time.Minute}},
		{"batch-nightly", alarms.Thresholds{DLQNotEmpty: false, OldestAgeShare: 0.5, NoReceive: 0, GrowthWindow: 10 * time.Minute,
			ExpiredWindow: 0, TriggerErrorWindow: 5 * time.Minute}},
		{"other", alarms.Thresholds{DLQNotEmpty: true, OldestAgeShare: 0.5, NoReceive: 30 * time.Minute, GrowthWindow: 10 * time.Minute,
			ExpiredWindow: time.Hour, TriggerErrorWindow: 5 * time.Minute}},
	} {
		if got := c.For(tc.queue); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.queue, got, tc.want)
		}
	}
	for _, bad := range []string{
		"queues:\n  q:\n    no_recieve: 5m\n",
		"defaults:\n  oldest_age_share: 2\n",
		"defaults:\n  growth_window: soon\n",
		"defaults:\n  expired_window: -1h\n",
		"queues:\n  q:\n    trigger_error_window: never\n",
	} {
		if _, err := alarms.ParseConfig([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// JSON is YAML.
	c, err = alarms.ParseConfig([]byte(`{"queues":{"q":{"no_receive":"0"}}}`))
	must(t, err)
	if got := c.For("q").NoReceive; got != 0 {
		t.Errorf("no_receive %v", got)
	}
}

// TestOverrideAndDeletedQueue checks that an alarm turned off for a queue is
// not evaluated, and that a deleted queue's firing alarm resolves.
func TestOverrideAndDeletedQueue(t *testing.T) {
	clk := clocktest.New(start)
	eng := openEngine(t, clk)
	ctx := context.Background()
	for _, q := range []string{"a", "b"} {
		_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q, Attributes: map[string]string{"MessageRetentionPeriod": "60"}})
		must(t, err)
		send(t, eng, q)
	}
	off := 0.0
	cfg := alarms.DefaultConfig()
	cfg.Queues = map[string]alarms.Override{"b": {OldestAgeShare: &off}}
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot, Clock: clk, Config: &cfg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ev.Evaluate()
	clk.Advance(31 * time.Second)
	got := ev.Evaluate()
	if len(got) != 1 || got[0].Queue != "a" || got[0].Alarm.Alarm != alarms.OldestAge || got[0].State != alarms.StateFiring {
		t.Fatalf("transitions %+v", got)
	}
	for _, a := range ev.Alarms() {
		if a.Queue == "b" && a.Alarm == alarms.OldestAge {
			t.Errorf("oldest_message_age evaluated on b: %+v", a)
		}
	}
	must(t, eng.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "a"}))
	clk.Advance(time.Second)
	got = ev.Evaluate()
	if len(got) != 1 || got[0].Queue != "a" || got[0].State != alarms.StateOK || !got[0].EndsAt.Equal(clk.Now()) || !got[0].StartsAt.Equal(start.Add(31*time.Second)) {
		t.Fatalf("transitions %+v", got)
	}
	for _, a := range ev.Alarms() {
		if a.Queue == "a" {
			t.Errorf("alarm of a deleted queue: %+v", a)
		}
	}
}

// TestHandler checks GET /tidemq/alarms.
func TestHandler(t *testing.T) {
	snaps := []tidemq.QueueSnapshot{{Name: "d", IsDeadLetterQueue: true, Visible: 2, RetentionSeconds: 100}}
	clk := clocktest.New(start)
	ev := alarms.New(alarms.Options{Snapshots: func() []tidemq.QueueSnapshot { return snaps }, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ev.Evaluate()
	rec := httptest.NewRecorder()
	ev.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/tidemq/alarms", nil))
	var l alarms.List
	must(t, json.Unmarshal(rec.Body.Bytes(), &l))
	if len(l.Alarms) != 3 || l.Alarms[0].Alarm != alarms.DLQNotEmpty || l.Alarms[0].State != alarms.StateFiring ||
		l.Alarms[0].Value != 2 || !l.Alarms[0].Since.Equal(start) {
		t.Errorf("%s", rec.Body)
	}
}

// TestNoDataKeepsState checks that a failed snapshot (nil) does not resolve
// firing alarms as if every queue were gone.
func TestNoDataKeepsState(t *testing.T) {
	snaps := []tidemq.QueueSnapshot{{Name: "d", IsDeadLetterQueue: true, Visible: 1}}
	ev := alarms.New(alarms.Options{Snapshots: func() []tidemq.QueueSnapshot { return snaps }, Clock: clocktest.New(start),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if got := ev.Evaluate(); len(got) != 1 {
		t.Fatalf("%+v", got)
	}
	snaps = nil
	if got := ev.Evaluate(); len(got) != 0 || ev.Alarms()[0].State != alarms.StateFiring {
		t.Fatalf("%+v %+v", got, ev.Alarms())
	}
	snaps = []tidemq.QueueSnapshot{}
	if got := ev.Evaluate(); len(got) != 1 || got[0].State != alarms.StateOK {
		t.Fatalf("%+v", got)
	}
}
