package trigger_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/internal/lambdatest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

func lastDetail(m *tidemq.Message) string {
	if len(m.History) == 0 {
		return ""
	}
	return m.History[len(m.History)-1].Detail
}

// A Python handler gets the batch through the Runtime API; its
// batchItemFailures keep the failed message, its exception fails the batch
// and dead-letters it after maxReceiveCount.
func TestPythonFunctionTarget(t *testing.T) {
	dir := lambdatest.PythonDir(t)
	v := newEnv(t, true)
	v.queue("q", nil)
	v.send("q", "ok", "fail", "ok")
	fn := &trigger.Function{Runtime: "python3.12", Handler: "app.handler", CodeUri: dir}
	v.create(trigger.Config{Name: "py", Queue: "q", Target: trigger.Target{Function: fn},
		FunctionResponseTypes: reportFailures(), Timeout: 10})
	eventually(t, "two deletes", func() bool { return v.stats("py").MessagesDeleted == 2 })
	eventually(t, "the failure in the history", func() bool {
		left := v.peek("q")
		return len(left) == 1 && left[0].Body == "fail" && lastDetail(left[0]) == "trigger py: listed in batchItemFailures"
	})

	v.queue("dlq", nil)
	v.queue("err", map[string]string{"VisibilityTimeout": "30",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`})
	v.send("err", "error")
	v.create(trigger.Config{Name: "pyerr", Queue: "err", Target: trigger.Target{Function: fn}, Timeout: 10})
	want := "trigger pyerr: function error: ValueError: the batch failed on purpose"
	eventually(t, "the exception in the history", func() bool {
		left := v.peek("err")
		return len(left) == 1 && lastDetail(left[0]) == want
	})
	v.clk.Advance(31 * time.Second)
	eventually(t, "the dead-letter move", func() bool { return len(v.peek("dlq")) == 1 })
	if s := v.stats("pyerr"); s.Errors != 1 || s.MessagesDeleted != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

// A Go binary built with aws-lambda-go runs as a provided.al2023
// function; a timeout kills its process and the next batch gets another.
func TestGoFunctionTarget(t *testing.T) {
	dir := lambdatest.BuildGo(t, t.TempDir(), "bootstrap")
	v := newEnv(t, true)
	v.queue("q", nil)
	v.send("q", "ok", "fail", "fail", "ok")
	fn := &trigger.Function{Runtime: "provided.al2023", Handler: "bootstrap", CodeUri: dir}
	v.create(trigger.Config{Name: "go", Queue: "q", Target: trigger.Target{Function: fn},
		FunctionResponseTypes: reportFailures(), Timeout: 10})
	eventually(t, "two deletes", func() bool { return v.stats("go").MessagesDeleted == 2 })
	if left := v.peek("q"); len(left) != 2 || left[0].Body != "fail" || left[1].Body != "fail" {
		t.Fatalf("left: %+v", left)
	}

	v.queue("slow", nil)
	v.send("slow", "sleep")
	v.create(trigger.Config{Name: "slow", Queue: "slow", Target: trigger.Target{Function: fn}, Timeout: 2, BatchSize: 1})
	eventually(t, "the timeout", func() bool { return v.stats("slow").Timeouts == 1 })
	eventually(t, "the timeout in the history", func() bool {
		left := v.peek("slow")
		return len(left) == 1 && lastDetail(left[0]) == "trigger slow: function timed out after 2s"
	})
	v.send("slow", "ok")
	eventually(t, "a batch on a new process", func() bool { return v.stats("slow").MessagesDeleted == 1 })

	v.queue("crash", nil)
	v.send("crash", "exit")
	v.create(trigger.Config{Name: "crash", Queue: "crash", Target: trigger.Target{Function: fn}, Timeout: 10})
	eventually(t, "the exit in the history", func() bool {
		left := v.peek("crash")
		return len(left) == 1 && strings.Contains(lastDetail(left[0]), "function error: Runtime.ExitError: Runtime exited with error: exit status 3")
	})
}

// A function runs code on the server: like a command, it needs
// --allow-trigger-commands, when it is created and each time the server
// starts.
func TestFunctionTargetsAreGated(t *testing.T) {
	dir := lambdatest.PythonDir(t)
	fn := &trigger.Function{Runtime: "python3.12", Handler: "app.handler", CodeUri: dir}
	v := newEnv(t, false)
	v.queue("q", nil)
	_, err := v.m.Create(context.Background(), trigger.Config{Name: "f", Queue: "q", Target: trigger.Target{Function: fn}})
	if err == nil || !strings.Contains(err.Error(), "--allow-trigger-commands") {
		t.Fatalf("create without --allow-trigger-commands: %v", err)
	}

	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "q"})
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
	if _, err := m.Create(context.Background(), trigger.Config{Name: "f", Queue: "q", Target: trigger.Target{Function: fn}}); err != nil {
		t.Fatal(err)
	}
	m.Close(context.Background())
	m = open(false)
	defer m.Close(context.Background())
	e.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "ok"}}})
	s, _ := m.Get("f")
	if !strings.Contains(s.LastError, "--allow-trigger-commands") || s.State != trigger.StateFailing || s.Stats.Invocations != 0 {
		t.Fatalf("state %s, LastError %q, stats %+v: want the trigger not started", s.State, s.LastError, s.Stats)
	}
}

// The function's environment values are secrets: redacted in every
// status, compared by digest, kept when an update gives them back
// redacted.
func TestFunctionEnvironmentIsSecret(t *testing.T) {
	dir := lambdatest.PythonDir(t)
	v := newEnv(t, true)
	v.queue("q", nil)
	c := trigger.Config{Name: "f", Queue: "q", Enabled: new(false), Target: trigger.Target{Function: &trigger.Function{
		Runtime: "python3.12", Handler: "app.handler", CodeUri: dir, Environment: map[string]string{"API_KEY": "s3cret"}}}}
	s, err := v.m.Create(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Target.Function.Environment["API_KEY"] != trigger.Redacted || s.SecretsDigest == "" || s.SecretsDigest != trigger.SecretsDigest(&c) {
		t.Fatalf("status shows %+v, digest %q", s.Target.Function, s.SecretsDigest)
	}
	// GET-modify-PUT: the redacted value keeps the stored one.
	s2, err := v.m.Update(context.Background(), "f", []byte(`{"Target":{"Function":{"Runtime":"python3.12","Handler":"app.handler","CodeUri":"`+dir+`","Environment":{"API_KEY":"********"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s2.SecretsDigest != s.SecretsDigest {
		t.Fatal("a redacted value given back changed the secret")
	}
	// Target.Function replaces the function as a whole: a variable left
	// out is removed.
	s3, err := v.m.Update(context.Background(), "f", []byte(`{"Target":{"Function":{"Runtime":"python3.12","Handler":"app.handler","CodeUri":"`+dir+`"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s3.Target.Function.Environment) != 0 || s3.SecretsDigest != "" {
		t.Fatalf("after an update without Environment: %+v, digest %q", s3.Target.Function, s3.SecretsDigest)
	}
	_, err = v.m.Update(context.Background(), "f", []byte(`{"Target":{"Function":{"Runtime":"python3.12","Handler":"app.handler","CodeUri":"`+dir+`","Environment":{"OTHER":"********"}}}}`))
	if err == nil || !strings.Contains(err.Error(), `Environment["OTHER"]`) {
		t.Fatalf("a redacted value with nothing stored: %v", err)
	}
}

func TestFunctionTargetValidation(t *testing.T) {
	dir := lambdatest.PythonDir(t)
	q := trigger.QueueFacts{VisibilityTimeout: time.Hour}
	for _, tc := range []struct {
		target trigger.Target
		want   string
	}{
		{trigger.Target{URL: "http://x/", Function: &trigger.Function{Runtime: "python3.12", Handler: "app.handler", CodeUri: dir}}, "one of a URL, a Command and a Function"},
		{trigger.Target{Function: &trigger.Function{Runtime: "nodejs22.x", Handler: "index.handler", CodeUri: dir}}, `Target.Function: runtime "nodejs22.x" is not supported`},
		{trigger.Target{Function: &trigger.Function{Runtime: "python3.12", Handler: "nothere.handler", CodeUri: dir}}, "module nothere of handler nothere.handler is not in"},
		{trigger.Target{Function: &trigger.Function{Runtime: "provided.al2023", CodeUri: dir}}, "bootstrap does not exist"},
		{trigger.Target{Function: &trigger.Function{Runtime: "python3.12", Handler: "app.handler", CodeUri: dir, Environment: map[string]string{"K": trigger.Redacted}}}, `Target.Function.Environment["K"] is ********`},
	} {
		c := trigger.Config{Name: "t", Queue: "q", Target: tc.target}
		if _, err := c.Validate(q); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.target.Function, err, tc.want)
		}
	}
}
