package trigger

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

func TestRecordShapeAndOrder(t *testing.T) {
	sent := time.UnixMilli(1545082649183)
	m := &tidemq.Message{
		MessageID: "059f36b4-87a3-44ab-83d2-661975830a7d", ReceiptHandle: "AQEB", Body: "Test message.",
		Attributes: map[string]tidemq.MessageAttributeValue{"Author": {DataType: "String", StringValue: "John Grisham"}, "Bin": {DataType: "Binary", BinaryValue: []byte{1, 2}}},
		SenderID:   "AIDAIENQZJOLO23YVJ4VO", SentTimestamp: sent, ApproximateReceiveCount: 1,
		FirstReceiveTimestamp: sent.Add(2 * time.Millisecond),
		SequenceNumber:        "18849496460467696128", MessageGroupID: "g1", MessageDeduplicationID: "d1",
	}
	b, err := encodeEvent([]Record{NewRecord(m, "arn:aws:sqs:us-east-2:123456789012:my-queue.fifo")})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Records":[{"messageId":"059f36b4-87a3-44ab-83d2-661975830a7d","receiptHandle":"AQEB","body":"Test message.",` +
		`"attributes":{"ApproximateReceiveCount":"1","SentTimestamp":"1545082649183","SenderId":"AIDAIENQZJOLO23YVJ4VO","ApproximateFirstReceiveTimestamp":"1545082649185",` +
		`"SequenceNumber":"18849496460467696128","MessageGroupId":"g1","MessageDeduplicationId":"d1"},` +
		`"messageAttributes":{"Author":{"stringValue":"John Grisham","stringListValues":[],"binaryListValues":[],"dataType":"String"},` +
		`"Bin":{"binaryValue":"AQI=","stringListValues":[],"binaryListValues":[],"dataType":"Binary"}},` +
		`"md5OfMessageAttributes":"` + tidemq.MD5OfAttributes(m.Attributes) + `","md5OfBody":"e4e68fb7bd0e697a0ae8f1bb342846b3",` +
		`"eventSource":"aws:sqs","eventSourceARN":"arn:aws:sqs:us-east-2:123456789012:my-queue.fifo","awsRegion":"us-east-2"}]}`
	if string(b) != want {
		t.Fatalf("event\n got %s\nwant %s", b, want)
	}
	// No attributes: {} and no md5OfMessageAttributes; no FIFO fields.
	m2 := &tidemq.Message{MessageID: "x", Body: "b", SentTimestamp: sent, FirstReceiveTimestamp: sent, ApproximateReceiveCount: 2}
	b, _ = encodeEvent([]Record{NewRecord(m2, "arn:aws:sqs:us-east-1:000000000000:q")})
	s := string(b)
	if !strings.Contains(s, `"messageAttributes":{},"md5OfBody"`) || strings.Contains(s, "md5OfMessageAttributes") || strings.Contains(s, "MessageGroupId") {
		t.Fatalf("event without attributes: %s", s)
	}
}

func TestParseItemFailures(t *testing.T) {
	in := func(id string) bool { return id == "a" || id == "b" }
	for _, tc := range []struct {
		resp    string
		want    []string
		invalid bool
	}{
		{resp: ``}, {resp: `null`}, {resp: `{}`}, {resp: `{"batchItemFailures":[]}`}, {resp: `{"batchItemFailures":null}`},
		{resp: `{"batchItemFailures":[{"itemIdentifier":"b"}]}`, want: []string{"b"}},
		{resp: `{"batchItemFailures":[{"itemIdentifier":"a"},{"itemIdentifier":"b"}],"other":1}`, want: []string{"a", "b"}},
		{resp: `{"batchItemFailures":[{"itemIdentifier":""}]}`, invalid: true},
		{resp: `{"batchItemFailures":[{"itemIdentifier":null}]}`, invalid: true},
		{resp: `{"batchItemFailures":[{"foo":"notvalid"}]}`, invalid: true},
		{resp: `{"batchItemFailures":[{"itemIdentifier":"zzz"}]}`, invalid: true},
		{resp: `{"batchItemFailures":[{"itemIdentifier":7}]}`, invalid: true},
		{resp: `{"batchItemFailures":"a"}`, invalid: true},
		{resp: `{"batchItemFailures":[`, invalid: true},
		{resp: `not json`, invalid: true},
		{resp: `"ok"`, invalid: true},
	} {
		got, err := parseItemFailures([]byte(tc.resp), in)
		if (err != nil) != tc.invalid {
			t.Errorf("%s: err = %v, want invalid %v", tc.resp, err, tc.invalid)
			continue
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: ids = %v, want %v", tc.resp, got, tc.want)
		}
	}
}

func TestFilterPatterns(t *testing.T) {
	rec := func(body string) Record {
		return NewRecord(&tidemq.Message{MessageID: "m", Body: body, ApproximateReceiveCount: 1}, "arn:aws:sqs:us-east-1:000000000000:q")
	}
	for _, tc := range []struct {
		pattern, body string
		match         bool
	}{
		{`{"body":{"status":["ok"]}}`, `{"status":"ok"}`, true},
		{`{"body":{"status":["ok"]}}`, `{"status":"bad"}`, false},
		{`{"body":{"status":["ok"]}}`, `plain text`, false},
		{`{"body":["plain text"]}`, `plain text`, true},
		{`{"body":{"kind":[{"prefix":"order."}]}}`, `{"kind":"order.created"}`, true},
		{`{"body":{"kind":[{"prefix":"order."}]}}`, `{"kind":"user.created"}`, false},
		{`{"body":{"n":[{"numeric":[">",0,"<=",5]}]}}`, `{"n":5}`, true},
		{`{"body":{"n":[{"numeric":[">",0,"<=",5]}]}}`, `{"n":6}`, false},
		{`{"body":{"n":[3]}}`, `{"n":3.0}`, true},
		{`{"body":{"tags":["red"]}}`, `{"tags":["blue","red"]}`, true},
		{`{"body":{"err":[{"exists":true}]}}`, `{"err":null}`, true},
		{`{"body":{"err":[{"exists":false}]}}`, `{"ok":1}`, true},
		{`{"body":{"err":[{"exists":false}]}}`, `{"err":1}`, false},
		{`{"body":{"a":{"b":["x"]}}}`, `{"a":{"b":"x"}}`, true},
		{`{"attributes":{"ApproximateReceiveCount":["1"]}}`, `{}`, true},
	} {
		p, err := ParsePattern(tc.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		if got := (filters{p}).pass(rec(tc.body)); got != tc.match {
			t.Errorf("%s on %s = %v, want %v", tc.pattern, tc.body, got, tc.match)
		}
	}
	for _, bad := range []string{`[]`, `{"body":"x"}`, `{"body":{"a":[{"anything-but":["x"]}]}}`, `{"$or":[]}`, `{"a":[{"numeric":["!",1]}]}`, `{"a":[]}`} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("pattern %s was accepted", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	std := QueueFacts{VisibilityTimeout: 30 * time.Second}
	fifo := QueueFacts{FIFO: true, VisibilityTimeout: 360 * time.Second}
	base := func() Config { return Config{Name: "t", Queue: "q", Target: Target{URL: "http://x"}} }
	bad := map[string]func(c *Config) QueueFacts{
		"timeout equals visibility": func(c *Config) QueueFacts { c.Timeout = 30; return std },
		"timeout above visibility":  func(c *Config) QueueFacts { c.Timeout = 31; return std },
		"fifo batch over 10":        func(c *Config) QueueFacts { c.BatchSize = 11; c.MaximumBatchingWindowInSeconds = 1; return fifo },
		"batch over 10, no window":  func(c *Config) QueueFacts { c.BatchSize = 11; return std },
		"concurrency 1":             func(c *Config) QueueFacts { c.ScalingConfig = &ScalingConfig{MaximumConcurrency: 1}; return std },
		"concurrency 1001":          func(c *Config) QueueFacts { c.ScalingConfig = &ScalingConfig{MaximumConcurrency: 1001}; return std },
		"response type":             func(c *Config) QueueFacts { c.FunctionResponseTypes = []string{"Nope"}; return std },
		"no target":                 func(c *Config) QueueFacts { c.Target = Target{}; return std },
		"two targets":               func(c *Config) QueueFacts { c.Target.Command = []string{"true"}; return std },
		"bad name":                  func(c *Config) QueueFacts { c.Name = "a b"; return std },
		"window 301":                func(c *Config) QueueFacts { c.MaximumBatchingWindowInSeconds = 301; return std },
		"bad filter": func(c *Config) QueueFacts {
			c.FilterCriteria = &FilterCriteria{Filters: []Filter{{Pattern: "{"}}}
			return std
		},
	}
	for name, f := range bad {
		c := base()
		facts := f(&c)
		if _, err := c.Validate(facts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := base()
	c.BatchSize = 11
	if _, err := c.Validate(std); err == nil || err.Error() != "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10" {
		t.Errorf("batch over 10 without a window: %v", err)
	}
	// The seed's setting: 300 s against 360 s works, with warnings.
	c = base()
	c.Timeout, c.BatchSize, c.FunctionResponseTypes = 300, 1, []string{ReportBatchItemFailures}
	c.ScalingConfig = &ScalingConfig{MaximumConcurrency: 10}
	w, err := c.Validate(fifo)
	if err != nil || len(w) != 1 || !strings.Contains(w[0], "6×") {
		t.Errorf("seed config: %v %q", err, w)
	}
	c.Timeout = 350
	if w, _ := c.Validate(fifo); len(w) != 2 {
		t.Errorf("10 s headroom: warnings %q", w)
	}
	c = base()
	if w, err := c.Validate(QueueFacts{VisibilityTimeout: 120 * time.Second}); err != nil || len(w) != 0 {
		t.Errorf("defaults against 120 s: %v %q", err, w)
	}
	var back Config
	b, _ := json.Marshal(base())
	if err := json.Unmarshal(b, &back); err != nil || back.Name != "t" {
		t.Fatal(err)
	}
}

// A target that is down fails every batch: the server warns once per
// failLogEvery, counting the failures in between.
func TestFailureWarningsArePaced(t *testing.T) {
	var buf bytes.Buffer
	rec := &failureRecorder{}
	m := &Manager{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})), o: Options{Broker: rec}}
	r := m.newRunner(&Config{Name: "t", Queue: "q"}, QueueFacts{}, "", filters{})
	for i := 0; i < 5; i++ {
		r.fail([]string{"h"}, "connection refused")
	}
	if n := strings.Count(buf.String(), "trigger invocation failed"); n != 1 {
		t.Fatalf("%d warnings for 5 failures in a burst, want 1:\n%s", n, &buf)
	}
	r.mu.Lock()
	r.failLogAt = r.failLogAt.Add(-failLogEvery) // as if failLogEvery had passed
	r.mu.Unlock()
	r.fail([]string{"h"}, "connection refused")
	if n := strings.Count(buf.String(), "trigger invocation failed"); n != 2 || !strings.Contains(buf.String(), "failures_since_last_warning=5") {
		t.Fatalf("after the pause: %d warnings, want 2, the second counting 5 failures:\n%s", n, &buf)
	}
	if rec.calls != 6 {
		t.Errorf("%d failures written into the messages' stories, want every one of 6", rec.calls)
	}
}

// failureRecorder is a Broker that only counts RecordFailure calls.
type failureRecorder struct {
	tidemq.Broker
	calls int
}

func (f *failureRecorder) RecordFailure(_ context.Context, p tidemq.RecordFailureParams) ([]error, error) {
	f.calls++
	return make([]error, len(p.ReceiptHandles)), nil
}

// A poll that began before the queue's visibility timeout was lowered
// receives for the timeout it checked, not the lowered one: the message
// stays invisible for as long as the function may run.
func TestCollectAsksForTheCheckedVisibility(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(Options{Broker: e, WaitTimeSeconds: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	r := m.newRunner(&Config{Name: "t", Queue: "q", Timeout: 30, Target: Target{URL: "http://h/"}}, QueueFacts{}, "arn", nil)
	vis, err := r.recheck(ctx)
	if err != nil || vis != 120 {
		t.Fatalf("recheck: %d %v", vis, err)
	}
	if err := e.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "q", Attributes: map[string]string{"VisibilityTimeout": "5"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "m"}}}); err != nil {
		t.Fatal(err)
	}
	batch, err := r.collect(ctx, vis)
	if err != nil || len(batch) != 1 {
		t.Fatalf("collect: %v %v", batch, err)
	}
	clk.Advance(60 * time.Second)
	again, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	if err != nil || len(again) != 0 {
		t.Fatalf("60 s later the message was received again (%d): it was received for the lowered 5 s", len(again))
	}
	// The next batch's check pauses the trigger.
	if _, err := r.recheck(ctx); err == nil || r.state() != StatePaused {
		t.Fatalf("recheck after the lowering: %v, state %s", err, r.state())
	}
}

// The ring keeps the last RecentInvocations, latest first, and bounds the
// error text.
func TestRecentRing(t *testing.T) {
	var r recentRing
	if l := r.list(); len(l) != 0 {
		t.Fatalf("empty ring: %v", l)
	}
	for i := range RecentInvocations + 5 {
		r.add(Invocation{BatchSize: i, Error: strings.Repeat("x", 1000)})
	}
	l := r.list()
	if len(l) != RecentInvocations || l[0].BatchSize != RecentInvocations+4 || l[len(l)-1].BatchSize != 5 {
		t.Fatalf("ring: %d entries, first %d, last %d", len(l), l[0].BatchSize, l[len(l)-1].BatchSize)
	}
	if len(l[0].Error) > maxInvocationError+len("…") {
		t.Fatalf("error of %d bytes kept", len(l[0].Error))
	}
}

// Durations fall in the first bucket that holds them; the buckets are
// cumulative.
func TestDurationHistogram(t *testing.T) {
	h := newHistogram()
	for _, d := range []time.Duration{3 * time.Millisecond, 5 * time.Millisecond, 700 * time.Millisecond, 20 * time.Minute} {
		h.observe(d)
	}
	s := h.snapshot()
	if s.Count != 4 || s.Buckets[0.005] != 2 || s.Buckets[0.5] != 2 || s.Buckets[1] != 3 || s.Buckets[900] != 3 {
		t.Fatalf("histogram %+v", s)
	}
	if want := (3*time.Millisecond + 5*time.Millisecond + 700*time.Millisecond + 20*time.Minute).Seconds(); s.Sum != want {
		t.Fatalf("sum %g, want %g", s.Sum, want)
	}
}

// TestValidateWarnsOnFIFOBatchOrder: seed 003 reads a FIFO queue in
// batches of 10 with a handler that goes on after a failure, so a
// dealer's later files are processed before the failed one. AWS does the
// same; `trigger create` now says so (the warnings are what it prints),
// with and without ReportBatchItemFailures, and not for a batch of one or
// a standard queue.
func TestValidateWarnsOnFIFOBatchOrder(t *testing.T) {
	fifo := QueueFacts{FIFO: true, VisibilityTimeout: 360 * time.Second}
	std := QueueFacts{VisibilityTimeout: 360 * time.Second}
	c := &Config{Name: "stock", Queue: "stock.fifo", Target: Target{URL: "http://127.0.0.1:1/"}, Timeout: 30, BatchSize: 10,
		FunctionResponseTypes: []string{ReportBatchItemFailures}}
	has := func(w []string, s string) bool {
		for _, x := range w {
			if strings.Contains(x, s) {
				return true
			}
		}
		return false
	}
	w, err := c.Validate(fifo)
	if err != nil || !has(w, "FIFO batches of up to 10: a handler that goes on after a failed message processes the later messages of its group before it") {
		t.Errorf("FIFO, batches of 10, ReportBatchItemFailures: %v %q", err, w)
	}
	c.FunctionResponseTypes = nil
	if w, err := c.Validate(fifo); err != nil || !has(w, "without ReportBatchItemFailures: when one message fails the whole batch comes back") {
		t.Errorf("FIFO, batches of 10: %v %q", err, w)
	}
	if w, _ := c.Validate(std); has(w, "FIFO batches") {
		t.Errorf("standard queue: %q", w)
	}
	c.BatchSize = 1
	if w, _ := c.Validate(fifo); has(w, "FIFO batches") {
		t.Errorf("batch of one: %q", w)
	}
}
