package trigger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// TestMain doubles as a command target: with TIDEMQ_TRIGGER_HELPER set the
// test binary reads an event on stdin and acts on each body: "crash" exits
// 1, "sleep" hangs, "fail..." is listed in batchItemFailures.
func TestMain(m *testing.M) {
	if os.Getenv("TIDEMQ_TRIGGER_HELPER") != "" {
		var ev trigger.Event
		if err := json.NewDecoder(os.Stdin).Decode(&ev); err != nil {
			fmt.Fprintln(os.Stderr, "bad event:", err)
			os.Exit(2)
		}
		var failures []map[string]string
		for _, r := range ev.Records {
			switch {
			case r.Body == "crash":
				fmt.Fprintln(os.Stderr, "crashed on purpose")
				os.Exit(1)
			case r.Body == "sleep":
				time.Sleep(time.Minute)
			case strings.HasPrefix(r.Body, "fail"):
				failures = append(failures, map[string]string{"itemIdentifier": r.MessageID})
			}
		}
		_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"batchItemFailures": failures})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type env struct {
	t   *testing.T
	e   *engine.Engine
	clk *clocktest.Clock
	m   *trigger.Manager
}

func newEnv(t *testing.T, allowCommands bool) *env {
	t.Helper()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := trigger.NewManager(trigger.Options{Broker: e, AllowCommands: allowCommands})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		e.Close()
	})
	return &env{t: t, e: e, clk: clk, m: m}
}

func (v *env) queue(name string, attrs map[string]string) {
	v.t.Helper()
	if _, err := v.e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: name, Attributes: attrs}); err != nil {
		v.t.Fatal(err)
	}
}

func (v *env) send(queue string, bodies ...string) {
	v.t.Helper()
	fifo := strings.HasSuffix(queue, ".fifo")
	for i, b := range bodies {
		en := tidemq.SendEntry{Body: b}
		if fifo {
			en.MessageGroupID = b[:1]
			en.MessageDeduplicationID = fmt.Sprintf("%s-%d", b, i)
		}
		res, err := v.e.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: queue, Entries: []tidemq.SendEntry{en}})
		if err != nil || res[0].Err != nil {
			v.t.Fatal(err, res)
		}
	}
}

func (v *env) create(c trigger.Config) {
	v.t.Helper()
	if _, err := v.m.Create(context.Background(), c); err != nil {
		v.t.Fatal(err)
	}
}

func (v *env) stats(name string) trigger.Stats {
	s, err := v.m.Get(name)
	if err != nil {
		v.t.Fatal(err)
	}
	return s.Stats
}

func (v *env) peek(queue string) []*tidemq.Message {
	msgs, err := v.e.PeekMessages(context.Background(), tidemq.PeekMessagesParams{Queue: queue, Max: new(100), IncludeInflight: true})
	if err != nil {
		v.t.Fatal(err)
	}
	return msgs
}

// eventually waits (in real time, generously) for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func kinds(m *tidemq.Message) []string {
	var out []string
	for _, ev := range m.History {
		out = append(out, ev.Kind)
	}
	return out
}

func reportFailures() []string { return []string{trigger.ReportBatchItemFailures} }

// target is an httptest function that records what it sees.
type target struct {
	mu         sync.Mutex
	bodies     []string // bodies of records that succeeded, in order
	events     int
	concurrent int
	maxConc    int
	groupsBusy map[string]bool
	groupClash bool
	handle     func(ev trigger.Event, r *http.Request) (status int, resp any, ok func(body string) bool)
}

func newTarget(t *testing.T, handle func(ev trigger.Event, r *http.Request) (int, any, func(string) bool)) (*target, string) {
	tg := &target{handle: handle, groupsBusy: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev trigger.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		groups := map[string]bool{}
		for _, rec := range ev.Records {
			if g := rec.Attributes.MessageGroupID; g != "" {
				groups[g] = true
			}
		}
		tg.mu.Lock()
		tg.events++
		tg.concurrent++
		tg.maxConc = max(tg.maxConc, tg.concurrent)
		for g := range groups {
			if tg.groupsBusy[g] {
				tg.groupClash = true
			}
			tg.groupsBusy[g] = true
		}
		tg.mu.Unlock()
		status, resp, ok := handle(ev, r)
		tg.mu.Lock()
		tg.concurrent--
		for g := range groups {
			delete(tg.groupsBusy, g)
		}
		if status == 200 {
			for _, rec := range ev.Records {
				if ok == nil || ok(rec.Body) {
					tg.bodies = append(tg.bodies, rec.Body)
				}
			}
		}
		tg.mu.Unlock()
		w.WriteHeader(status)
		if resp != nil {
			_ = json.NewEncoder(w).Encode(resp)
		}
	}))
	t.Cleanup(srv.Close)
	return tg, srv.URL
}

func (tg *target) succeeded() []string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]string(nil), tg.bodies...)
}

func TestHTTPPartialBatch(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", nil)
	v.send("q", "ok1", "fail1", "ok2", "fail2", "ok3")
	tg, url := newTarget(t, func(ev trigger.Event, r *http.Request) (int, any, func(string) bool) {
		var f []map[string]string
		for _, rec := range ev.Records {
			if strings.HasPrefix(rec.Body, "fail") {
				f = append(f, map[string]string{"itemIdentifier": rec.MessageID})
			}
		}
		return 200, map[string]any{"batchItemFailures": f}, func(b string) bool { return !strings.HasPrefix(b, "fail") }
	})
	v.create(trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: url}, FunctionResponseTypes: reportFailures(), Timeout: 5})
	eventually(t, "three deletes", func() bool { return v.stats("t").MessagesDeleted == 3 })
	s := v.stats("t")
	if s.MessagesFailed != 2 || s.PartialFailures < 1 || s.Errors != 0 {
		t.Fatalf("stats = %+v", s)
	}
	left := v.peek("q")
	if len(left) != 2 {
		t.Fatalf("left in the queue: %d", len(left))
	}
	for _, m := range left {
		k := kinds(m)
		if !strings.HasPrefix(m.Body, "fail") || k[len(k)-1] != tidemq.HistoryConsumerFailed ||
			!strings.Contains(m.History[len(m.History)-1].Detail, "trigger t: listed in batchItemFailures") {
			t.Fatalf("%s: history %v %+v", m.Body, k, m.History)
		}
	}
	if got := tg.succeeded(); len(got) != 3 {
		t.Fatalf("target succeeded %v", got)
	}
}

func TestInvalidResponseFailsTheBatch(t *testing.T) {
	for _, resp := range []string{`{"batchItemFailures":[{"foo":"notvalid"}]}`, `{"batchItemFailures":[{"itemIdentifier":""}]}`,
		`{"batchItemFailures":[{"itemIdentifier":"not-in-batch"}]}`, `{not json`} {
		t.Run(resp, func(t *testing.T) {
			v := newEnv(t, false)
			v.queue("q", nil)
			v.send("q", "a", "b")
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				io.WriteString(w, resp)
			}))
			defer srv.Close()
			v.create(trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: srv.URL}, FunctionResponseTypes: reportFailures()})
			eventually(t, "the invalid response", func() bool { return v.stats("t").MessagesFailed == 2 })
			if s := v.stats("t"); s.InvalidResponses < 1 || s.MessagesDeleted != 0 {
				t.Fatalf("stats = %+v", s)
			}
			// The failure is counted a moment before it is written into the
			// messages' history.
			eventually(t, "the failure in both histories", func() bool {
				ms := v.peek("q")
				for _, m := range ms {
					if d := m.History[len(m.History)-1].Detail; !strings.Contains(d, "invalid batchItemFailures response") {
						return false
					}
				}
				return len(ms) == 2
			})
		})
	}
	// Without ReportBatchItemFailures the same answer is not read: all deleted.
	v := newEnv(t, false)
	v.queue("q", nil)
	v.send("q", "a", "b")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"batchItemFailures":[{"foo":"notvalid"}]}`)
	}))
	defer srv.Close()
	v.create(trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: srv.URL}})
	eventually(t, "deletes", func() bool { return v.stats("t").MessagesDeleted == 2 })
}

func TestTimeoutRedeliveryThenDLQ(t *testing.T) {
	v := newEnv(t, false)
	v.queue("dlq", nil)
	v.queue("q", map[string]string{"VisibilityTimeout": "30",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":2}`})
	_, url := newTarget(t, func(ev trigger.Event, r *http.Request) (int, any, func(string) bool) {
		<-r.Context().Done() // hang until the trigger gives up
		return 200, nil, nil
	})
	v.create(trigger.Config{Name: "slow", Queue: "q", Target: trigger.Target{URL: url}, Timeout: 0.2, BatchSize: 1,
		ScalingConfig: &trigger.ScalingConfig{MaximumConcurrency: 2}})
	v.send("q", "m")
	eventually(t, "the first timeout", func() bool { return v.stats("slow").Timeouts == 1 })
	if got := v.peek("q"); len(got) != 1 || got[0].ApproximateReceiveCount != 1 {
		t.Fatalf("after one timeout: %+v", got)
	}
	// A timeout is counted a moment before it is written into the
	// message's history: wait for the story before time moves on.
	failures := func(n int) func() bool {
		return func() bool {
			got := v.peek("q")
			return len(got) == 1 && strings.Count(strings.Join(kinds(got[0]), " "), "consumer-failed") == n
		}
	}
	eventually(t, "the first failure in the history", failures(1))
	v.clk.Advance(31 * time.Second) // visible again: redelivered
	eventually(t, "the second timeout", func() bool { return v.stats("slow").Timeouts == 2 })
	eventually(t, "the second failure in the history", failures(2))
	v.clk.Advance(31 * time.Second) // the next receive dead-letters it
	eventually(t, "the dead-letter move", func() bool { return len(v.peek("dlq")) == 1 })
	m := v.peek("dlq")[0]
	want := []string{"sent", "received", "consumer-failed", "visibility-expired", "received", "consumer-failed", "visibility-expired", "dead-lettered"}
	if got := kinds(m); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("history = %v, want %v", got, want)
	}
	if d := m.History[5].Detail; d != "trigger slow: function timed out after 200ms" {
		t.Fatalf("failure detail = %q", d)
	}
	if c := m.History[5].Client.UserAgent; c != "tidemq-trigger/slow" {
		t.Fatalf("failure client = %q", c)
	}
	if s := v.stats("slow"); s.Invocations != 2 || s.Errors != 2 || s.MessagesDeleted != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestCommandTarget(t *testing.T) {
	t.Setenv("TIDEMQ_TRIGGER_HELPER", "1")
	v := newEnv(t, true)
	v.queue("q", nil)
	v.send("q", "ok", "fail-me", "ok2")
	v.create(trigger.Config{Name: "cmd", Queue: "q", Target: trigger.Target{Command: []string{os.Args[0]}},
		FunctionResponseTypes: reportFailures(), Timeout: 10})
	eventually(t, "two deletes", func() bool { return v.stats("cmd").MessagesDeleted == 2 })
	if left := v.peek("q"); len(left) != 1 || left[0].Body != "fail-me" {
		t.Fatalf("left: %+v", left)
	}

	// A non-zero exit fails the whole batch; a hung process is killed.
	v.queue("crash", nil)
	v.send("crash", "ok", "crash")
	v.create(trigger.Config{Name: "crash", Queue: "crash", Target: trigger.Target{Command: []string{os.Args[0]}}, Timeout: 10})
	eventually(t, "the crash", func() bool { return v.stats("crash").Errors >= 1 })
	// The failure is counted a moment before it is written into the
	// messages' history.
	crashed := func(m *tidemq.Message) bool {
		return len(m.History) > 0 && strings.Contains(m.History[len(m.History)-1].Detail, "exit status 1: crashed on purpose")
	}
	eventually(t, "the crash in the history", func() bool {
		left := v.peek("crash")
		return len(left) == 2 && crashed(left[0])
	})
	v.queue("hang", nil)
	v.send("hang", "sleep")
	start := time.Now()
	v.create(trigger.Config{Name: "hang", Queue: "hang", Target: trigger.Target{Command: []string{os.Args[0]}}, Timeout: 0.5})
	eventually(t, "the kill", func() bool { return v.stats("hang").Timeouts == 1 })
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("killing the command took %s", took)
	}
}

func TestCommandTargetsAreOffByDefault(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", nil)
	_, err := v.m.Create(context.Background(), trigger.Config{Name: "c", Queue: "q", Target: trigger.Target{Command: []string{"true"}}})
	if err == nil || !strings.Contains(err.Error(), "--allow-trigger-commands") {
		t.Fatalf("err = %v", err)
	}
}

func TestFIFOOrderUnderFailure(t *testing.T) {
	v := newEnv(t, false)
	v.queue("f.fifo", map[string]string{"FifoQueue": "true", "VisibilityTimeout": "30"})
	var mu sync.Mutex
	failedOnce := false
	tg, url := newTarget(t, func(ev trigger.Event, r *http.Request) (int, any, func(string) bool) {
		time.Sleep(5 * time.Millisecond)
		// Process in order; on a2's first delivery, stop and report it and
		// every later record, as AWS advises for FIFO.
		mu.Lock()
		defer mu.Unlock()
		var f []map[string]string
		failing := map[string]bool{}
		for _, rec := range ev.Records {
			if rec.Body == "a2" && !failedOnce {
				failedOnce = true
				failing["a"] = true
			}
			if failing[rec.Attributes.MessageGroupID] {
				f = append(f, map[string]string{"itemIdentifier": rec.MessageID})
			}
		}
		ok := func(body string) bool { return !failing[body[:1]] }
		return 200, map[string]any{"batchItemFailures": f}, ok
	})
	v.send("f.fifo", "a0", "a1", "b0", "a2", "b1", "a3", "b2", "a4", "b3", "b4")
	v.create(trigger.Config{Name: "f", Queue: "f.fifo", Target: trigger.Target{URL: url}, BatchSize: 2,
		FunctionResponseTypes: reportFailures(), ScalingConfig: &trigger.ScalingConfig{MaximumConcurrency: 4}})
	eventually(t, "everything but group a's tail", func() bool {
		s := v.stats("f")
		return s.MessagesDeleted == 7 && s.ConcurrentInvocations == 0 && s.PartialFailures == 1
	})
	v.clk.Advance(31 * time.Second)
	eventually(t, "group a's tail", func() bool { return v.stats("f").MessagesDeleted == 10 })
	var a, b []string
	for _, body := range tg.succeeded() {
		if body[0] == 'a' {
			a = append(a, body)
		} else {
			b = append(b, body)
		}
	}
	if strings.Join(a, " ") != "a0 a1 a2 a3 a4" || strings.Join(b, " ") != "b0 b1 b2 b3 b4" {
		t.Fatalf("processing order: a=%v b=%v", a, b)
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if tg.groupClash {
		t.Fatal("a message group was in two invocations at once")
	}
	if tg.maxConc > 2 {
		t.Fatalf("%d invocations at once with two groups", tg.maxConc)
	}
}

func TestConcurrencyCap(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", nil)
	var bodies []string
	for i := range 60 {
		bodies = append(bodies, fmt.Sprint(i))
	}
	v.send("q", bodies...)
	tg, url := newTarget(t, func(ev trigger.Event, r *http.Request) (int, any, func(string) bool) {
		time.Sleep(10 * time.Millisecond)
		return 200, nil, nil
	})
	v.create(trigger.Config{Name: "c", Queue: "q", Target: trigger.Target{URL: url}, BatchSize: 1,
		ScalingConfig: &trigger.ScalingConfig{MaximumConcurrency: 3}})
	eventually(t, "all deleted", func() bool { return v.stats("c").MessagesDeleted == 60 })
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if tg.maxConc > 3 || tg.maxConc < 2 {
		t.Fatalf("the target saw %d concurrent invocations with a cap of 3", tg.maxConc)
	}
	if s := v.stats("c"); s.MaxConcurrentInvocations > 3 || s.Invocations != 60 || s.DurationSeconds <= 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestFilterDeletesWhatDoesNotMatch(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", nil)
	v.send("q", `{"type":"order","n":3}`, `{"type":"user"}`, `not json`)
	tg, url := newTarget(t, func(ev trigger.Event, r *http.Request) (int, any, func(string) bool) { return 200, nil, nil })
	v.create(trigger.Config{Name: "f", Queue: "q", Target: trigger.Target{URL: url},
		FilterCriteria: &trigger.FilterCriteria{Filters: []trigger.Filter{{Pattern: `{"body":{"type":["order"],"n":[{"numeric":[">",1]}]}}`}}}})
	eventually(t, "the queue to empty", func() bool { return len(v.peek("q")) == 0 })
	if got := tg.succeeded(); len(got) != 1 || !strings.Contains(got[0], "order") {
		t.Fatalf("delivered %v", got)
	}
	if s := v.stats("f"); s.MessagesFiltered != 2 || s.MessagesDeleted != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestThrottleAndHTTPError(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", nil)
	v.send("q", "x")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	v.create(trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: srv.URL}})
	eventually(t, "the throttle", func() bool { return v.stats("t").Throttles == 1 })
	st, _ := v.m.Get("t")
	if !strings.Contains(st.LastError, "429") || st.Stats.Errors != 1 || st.Stats.MessagesDeleted != 0 {
		t.Fatalf("status = %+v", st)
	}
}

// A command trigger saved while commands were allowed is not started by a
// server that no longer allows them.
func TestCommandTriggerDoesNotOutliveTheFlag(t *testing.T) {
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	store := storage.Share(mem.New())
	defer store.Close()
	open := func(allow bool) *trigger.Manager {
		m, err := trigger.NewManager(trigger.Options{Broker: e, AllowCommands: allow, Store: store.Share()})
		if err != nil {
			t.Fatal(err)
		}
		m.Start()
		return m
	}
	m := open(true)
	if _, err := m.Create(context.Background(), trigger.Config{Name: "c", Queue: "q", Target: trigger.Target{Command: []string{"true"}}}); err != nil {
		t.Fatal(err)
	}
	m.Close(context.Background())

	m = open(false)
	defer m.Close(context.Background())
	s, err := m.Get("c")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.LastError, "--allow-trigger-commands") {
		t.Errorf("a command trigger on a server without --allow-trigger-commands: LastError %q, want it not started", s.LastError)
	}
}

// A target that redirects does not get its batch and headers sent on to
// the other host: the redirect is a function error.
func TestRedirectsAreNotFollowed(t *testing.T) {
	stolen := make(chan string, 10)
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen <- r.Header.Get("X-Api-Key")
	}))
	defer thief.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer target.Close()
	v := newEnv(t, false)
	v.queue("q", nil)
	v.send("q", "secret batch")
	v.create(trigger.Config{Name: "r", Queue: "q", Target: trigger.Target{URL: target.URL, Headers: map[string]string{"X-Api-Key": "topsecret"}}})
	eventually(t, "the failed invocation", func() bool { return v.stats("r").Errors >= 1 })
	select {
	case key := <-stolen:
		t.Fatalf("the redirect was followed: the other host got the batch and X-Api-Key %q", key)
	default:
	}
}

// TestCreateOnAMissingQueueNamesIt: `trigger create --queue nosuchqueue`
// said only "The specified queue does not exist."; it names the queue.
func TestCreateOnAMissingQueueNamesIt(t *testing.T) {
	v := newEnv(t, false)
	_, err := v.m.Create(context.Background(), trigger.Config{Name: "t", Queue: "nosuchqueue", Target: trigger.Target{URL: "http://127.0.0.1:1/"}})
	if !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) || !strings.Contains(err.Error(), "The queue nosuchqueue does not exist: create it first") {
		t.Errorf("create on a missing queue: %v", err)
	}
}
