package lambdart_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq/internal/lambdatest"
	"github.com/tidemq/tidemq/internal/testlog"
	"github.com/tidemq/tidemq/lambdart"
)

// sqsEvent is a Lambda SQS event whose records have the given bodies;
// message ids are m0, m1, ...
func sqsEvent(bodies ...string) []byte {
	type rec struct {
		MessageID   string `json:"messageId"`
		Body        string `json:"body"`
		EventSource string `json:"eventSource"`
	}
	var ev struct {
		Records []rec `json:"Records"`
	}
	for i, b := range bodies {
		ev.Records = append(ev.Records, rec{MessageID: fmt.Sprintf("m%d", i), Body: b, EventSource: "aws:sqs"})
	}
	out, _ := json.Marshal(ev)
	return out
}

// waitLog waits for a line of the function's output: it is read from the
// process's pipe while the response travels over HTTP, so it may come a
// moment after the response.
func waitLog(t *testing.T, logs *testlog.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%q is not in the log:\n%s", want, logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newPool(t *testing.T, f lambdart.Function, size int) (*lambdart.Pool, *testlog.Buffer) {
	t.Helper()
	logs := &testlog.Buffer{}
	if f.Name == "" {
		f.Name = "fn"
	}
	f.ARN = "arn:aws:lambda:eu-west-1:000000000000:function:" + f.Name
	f.Region = "eu-west-1"
	if f.Timeout == 0 {
		f.Timeout = 10 * time.Second
	}
	p, err := lambdart.NewPool(f, lambdart.Options{Size: size, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p, logs
}

func invoke(t *testing.T, p *lambdart.Pool, timeout time.Duration, bodies ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return p.Invoke(ctx, sqsEvent(bodies...))
}

func mustInvoke(t *testing.T, p *lambdart.Pool, bodies ...string) map[string]any {
	t.Helper()
	resp, err := invoke(t, p, 20*time.Second, bodies...)
	if err != nil {
		t.Fatalf("invoke %v: %v", bodies, err)
	}
	var out map[string]any
	if err := json.Unmarshal(resp, &out); err != nil {
		t.Fatalf("response %s: %v", resp, err)
	}
	return out
}

func functionError(t *testing.T, err error) *lambdart.FunctionError {
	t.Helper()
	var fe *lambdart.FunctionError
	if !errors.As(err, &fe) {
		t.Fatalf("want a FunctionError, got %T %v", err, err)
	}
	return fe
}

// The Go handler, built with aws-lambda-go, runs unmodified as a
// provided.al2023 bootstrap and as a go1.x handler.
func TestGoRuntime(t *testing.T) {
	dir := lambdatest.BuildGo(t, t.TempDir(), "bootstrap")
	lambdatest.BuildGo(t, dir, "handler")
	goFn := lambdart.Function{Runtime: "provided.al2023", Handler: "main", CodeDir: dir, MemorySize: 256,
		Environment: map[string]string{"GREETING": "hello"}}

	t.Run("PartialBatchResponse", func(t *testing.T) {
		p, logs := newPool(t, goFn, 1)
		out := mustInvoke(t, p, "ok", "fail", "ok", "fail")
		got, _ := json.Marshal(out["batchItemFailures"])
		if string(got) != `[{"itemIdentifier":"m1"},{"itemIdentifier":"m3"}]` {
			t.Fatalf("batchItemFailures = %s", got)
		}
		waitLog(t, logs, "processed m0")
	})

	t.Run("ContextAndEnvironment", func(t *testing.T) {
		p, _ := newPool(t, goFn, 1)
		resp, err := invoke(t, p, 5*time.Second, "env")
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		json.Unmarshal(resp, &out)
		want := map[string]any{"functionName": "fn", "functionArn": "arn:aws:lambda:eu-west-1:000000000000:function:fn",
			"memory": 256.0, "handler": "main", "region": "eu-west-1", "taskRoot": dir, "greeting": "hello", "source": "aws:sqs"}
		for k, v := range want {
			if out[k] != v {
				t.Errorf("%s = %v, want %v", k, out[k], v)
			}
		}
		if id, _ := out["requestId"].(string); len(id) != 36 {
			t.Errorf("requestId = %v", out["requestId"])
		}
		// The deadline is the context's: 5 s from the call.
		if d, _ := out["deadlineIn"].(float64); d < 3000 || d > 5000 {
			t.Errorf("deadline in %vms, want about 5000", d)
		}
	})

	t.Run("ProcessIsReused", func(t *testing.T) {
		p, _ := newPool(t, goFn, 1)
		a, b := mustInvoke(t, p, "env"), mustInvoke(t, p, "env")
		if a["pid"] != b["pid"] || a["requestId"] == b["requestId"] {
			t.Fatalf("two invocations: pids %v %v, request ids %v %v", a["pid"], b["pid"], a["requestId"], b["requestId"])
		}
	})

	t.Run("FunctionError", func(t *testing.T) {
		p, _ := newPool(t, goFn, 1)
		before := mustInvoke(t, p, "env")
		_, err := invoke(t, p, 10*time.Second, "ok", "error")
		fe := functionError(t, err)
		if fe.Type != "errorString" || fe.Message != "the batch failed on purpose" || fe.Init {
			t.Fatalf("error = %+v", fe)
		}
		// A reported error keeps the process.
		if after := mustInvoke(t, p, "env"); after["pid"] != before["pid"] {
			t.Fatalf("the process was replaced after a function error")
		}
	})

	t.Run("PanicRestartsTheProcess", func(t *testing.T) {
		p, _ := newPool(t, goFn, 1)
		before := mustInvoke(t, p, "env")
		_, err := invoke(t, p, 10*time.Second, "panic")
		if fe := functionError(t, err); !strings.Contains(fe.Message, "handler panicked on purpose") {
			t.Fatalf("error = %+v", fe)
		}
		if after := mustInvoke(t, p, "env"); after["pid"] == before["pid"] {
			t.Fatalf("the process that panicked answered again")
		}
	})

	t.Run("ExitIsAnErrorAndRestarts", func(t *testing.T) {
		p, _ := newPool(t, goFn, 1)
		before := mustInvoke(t, p, "env")
		_, err := invoke(t, p, 10*time.Second, "exit")
		fe := functionError(t, err)
		if fe.Type != "Runtime.ExitError" || !strings.Contains(fe.Message, "exit status 3") {
			t.Fatalf("error = %+v", fe)
		}
		if after := mustInvoke(t, p, "env"); after["pid"] == before["pid"] {
			t.Fatalf("pid %v answered after it exited", after["pid"])
		}
	})

	t.Run("TimeoutKillsAndRestarts", func(t *testing.T) {
		p, _ := newPool(t, lambdart.Function{Runtime: goFn.Runtime, Handler: "main", CodeDir: dir, Timeout: 300 * time.Millisecond}, 1)
		before := mustInvoke(t, p, "env")
		start := time.Now()
		_, err := invoke(t, p, 300*time.Millisecond, "sleep")
		var te *lambdart.TimeoutError
		if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("want a timeout, got %T %v", err, err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("the timeout took %s", took)
		}
		if !strings.Contains(err.Error(), "Task timed out after 0.30 seconds") {
			t.Errorf("error = %v", err)
		}
		if after := mustInvoke(t, p, "env"); after["pid"] == before["pid"] {
			t.Fatalf("the timed-out process answered again")
		}
	})

	t.Run("InitFailure", func(t *testing.T) {
		f := goFn
		f.Environment = map[string]string{"INIT_FAIL": "1"}
		p, _ := newPool(t, f, 1)
		_, err := invoke(t, p, 10*time.Second, "ok")
		fe := functionError(t, err)
		if fe.Type != "Runtime.ExitError" || !strings.Contains(fe.Message, "cannot initialise: INIT_FAIL is set") {
			t.Fatalf("error = %+v", fe)
		}
	})

	t.Run("GoHandlerRuntime", func(t *testing.T) {
		p, _ := newPool(t, lambdart.Function{Runtime: "go1.x", Handler: "handler", CodeDir: dir}, 1)
		if out := mustInvoke(t, p, "env"); out["handler"] != "handler" {
			t.Fatalf("_HANDLER = %v", out["handler"])
		}
	})

	t.Run("ConcurrencyIsCapped", func(t *testing.T) {
		p, _ := newPool(t, goFn, 2)
		pids := map[any]bool{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := mustInvoke(t, p, "env")
				mu.Lock()
				pids[out["pid"]] = true
				mu.Unlock()
			}()
		}
		wg.Wait()
		if len(pids) == 0 || len(pids) > 2 {
			t.Fatalf("%d processes for a pool of 2", len(pids))
		}
	})
}

func TestPythonRuntime(t *testing.T) {
	dir := lambdatest.PythonDir(t)
	pyFn := lambdart.Function{Runtime: "python3.12", Handler: "app.handler", CodeDir: dir,
		Environment: map[string]string{"GREETING": "hallo"}}

	t.Run("PartialBatchResponse", func(t *testing.T) {
		p, logs := newPool(t, pyFn, 1)
		out := mustInvoke(t, p, "ok", "fail")
		got, _ := json.Marshal(out)
		if string(got) != `{"batchItemFailures":[{"itemIdentifier":"m1"}]}` {
			t.Fatalf("response = %s", got)
		}
		waitLog(t, logs, "processed m0")
	})

	t.Run("Context", func(t *testing.T) {
		p, _ := newPool(t, pyFn, 1)
		resp, err := invoke(t, p, 4*time.Second, "env")
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		json.Unmarshal(resp, &out)
		want := map[string]any{"functionName": "fn", "functionArn": "arn:aws:lambda:eu-west-1:000000000000:function:fn",
			"memory": "128", "logGroup": "/aws/lambda/fn", "handler": "app.handler", "region": "eu-west-1",
			"taskRoot": dir, "greeting": "hallo"}
		for k, v := range want {
			if out[k] != v {
				t.Errorf("%s = %v, want %v", k, out[k], v)
			}
		}
		if r, _ := out["remaining"].(float64); r <= 0 || r > 4000 {
			t.Errorf("get_remaining_time_in_millis() = %v, want in (0, 4000]", out["remaining"])
		}
		if tr, _ := out["trace"].(string); !strings.HasPrefix(tr, "Root=1-") {
			t.Errorf("_X_AMZN_TRACE_ID = %v", out["trace"])
		}
		if s, _ := out["logStream"].(string); !strings.Contains(s, "[$LATEST]") {
			t.Errorf("log_stream_name = %v", out["logStream"])
		}
	})

	// A function that sends its own HTTP calls through a proxy
	// (HTTP_PROXY in its Environment, as in many networks) still talks to
	// the Runtime API directly: the proxy would not reach it, and would
	// see every event.
	t.Run("ProxyEnvironment", func(t *testing.T) {
		f := pyFn
		f.Environment = map[string]string{"HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}
		p, _ := newPool(t, f, 1)
		if out := mustInvoke(t, p, "env"); out["functionName"] != "fn" {
			t.Fatalf("response = %v", out)
		}
	})

	t.Run("ErrorShape", func(t *testing.T) {
		p, _ := newPool(t, pyFn, 1)
		before := mustInvoke(t, p, "env")
		_, err := invoke(t, p, 10*time.Second, "error")
		fe := functionError(t, err)
		if fe.Type != "ValueError" || fe.Message != "the batch failed on purpose" {
			t.Fatalf("error = %+v", fe)
		}
		var trace []string
		if err := json.Unmarshal(fe.StackTrace, &trace); err != nil || len(trace) == 0 || !strings.Contains(strings.Join(trace, ""), "app.py") {
			t.Fatalf("stackTrace = %s", fe.StackTrace)
		}
		if after := mustInvoke(t, p, "env"); after["pid"] != before["pid"] {
			t.Fatal("the process was replaced after an exception")
		}
	})

	t.Run("ImportErrorIsAnInitError", func(t *testing.T) {
		p, _ := newPool(t, lambdart.Function{Runtime: "python3.12", Handler: "broken.handler", CodeDir: dir}, 1)
		_, err := invoke(t, p, 10*time.Second, "ok")
		fe := functionError(t, err)
		if !fe.Init || fe.Type != "Runtime.ImportModuleError" || !strings.Contains(fe.Message, "Unable to import module 'broken'") {
			t.Fatalf("error = %+v (init %v)", fe, fe.Init)
		}
	})

	t.Run("MissingHandlerIsAnInitError", func(t *testing.T) {
		p, _ := newPool(t, lambdart.Function{Runtime: "python3.12", Handler: "app.nothere", CodeDir: dir}, 1)
		_, err := invoke(t, p, 10*time.Second, "ok")
		if fe := functionError(t, err); !fe.Init || fe.Type != "Runtime.HandlerNotFound" {
			t.Fatalf("error = %+v", fe)
		}
	})

	t.Run("UnserialisableResponse", func(t *testing.T) {
		p, _ := newPool(t, lambdart.Function{Runtime: "python3.12", Handler: "app.not_json", CodeDir: dir}, 1)
		_, err := invoke(t, p, 10*time.Second, "ok")
		if fe := functionError(t, err); fe.Type != "Runtime.MarshalError" {
			t.Fatalf("error = %+v", fe)
		}
	})

	t.Run("ExitAndTimeout", func(t *testing.T) {
		p, _ := newPool(t, pyFn, 1)
		_, err := invoke(t, p, 10*time.Second, "exit")
		if fe := functionError(t, err); fe.Type != "Runtime.ExitError" || !strings.Contains(fe.Message, "exit status 4") {
			t.Fatalf("error = %+v", fe)
		}
		_, err = invoke(t, p, 500*time.Millisecond, "sleep")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("want a timeout, got %v", err)
		}
		mustInvoke(t, p, "ok")
	})
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "app.py"), []byte("def handler(e, c): pass\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "noexec"), []byte("x"), 0o644)
	for _, tc := range []struct {
		f    lambdart.Function
		want string
	}{
		{lambdart.Function{Runtime: "nodejs20.x", Handler: "index.handler", CodeDir: dir}, `runtime "nodejs20.x" is not supported`},
		{lambdart.Function{Runtime: "python3.12", Handler: "app.handler", CodeDir: "rel"}, "must be an absolute path"},
		{lambdart.Function{Runtime: "python3.12", Handler: "app.handler", CodeDir: filepath.Join(dir, "nope")}, "does not exist"},
		{lambdart.Function{Runtime: "python3.12", Handler: "handler", CodeDir: dir}, "module.function"},
		{lambdart.Function{Runtime: "python3.12", Handler: "other.handler", CodeDir: dir}, "module other of handler other.handler is not in"},
		{lambdart.Function{Runtime: "provided.al2", Handler: "x", CodeDir: dir}, "bootstrap does not exist"},
		{lambdart.Function{Runtime: "go1.x", Handler: "noexec", CodeDir: dir}, "is not executable"},
		{lambdart.Function{Runtime: "go1.x", Handler: "../x", CodeDir: dir}, "names its executable"},
		{lambdart.Function{Runtime: "python3.12", Handler: "app.handler", CodeDir: dir, Environment: map[string]string{"AWS_REGION": "x"}}, "AWS_REGION is reserved"},
		{lambdart.Function{Runtime: "python3.12", Handler: "app.handler", CodeDir: dir, Environment: map[string]string{"1X": "x"}}, "not valid"},
		{lambdart.Function{Runtime: "python3.12", Handler: "app.handler", CodeDir: dir, MemorySize: 20000}, "MemorySize"},
	} {
		err := tc.f.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.f, err, tc.want)
		}
	}
	ok := lambdart.Function{Runtime: "python3.11", Handler: "app.handler", CodeDir: dir}
	if err := ok.Check(); err != nil {
		t.Errorf("valid function: %v", err)
	}

	// Without an interpreter on the PATH, Check refuses a Python function
	// and CheckCode, what clients run, does not look for one.
	t.Setenv("PATH", t.TempDir())
	noPython := lambdart.Function{Runtime: "python3.99", Handler: "app.handler", CodeDir: dir}
	if err := noPython.Check(); err == nil || !strings.Contains(err.Error(), "needs python3.99 or python3") {
		t.Errorf("Check without python on the PATH: %v", err)
	}
	if err := noPython.CheckCode(); err != nil {
		t.Errorf("CheckCode without python on the PATH: %v", err)
	}
}
