package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// `trigger create --runtime ... --code-uri DIR` creates a function
// target, with a relative code directory sent absolute and the
// environment redacted on the way back; a URL or a command replaces it.
func TestTriggerFunctionFlags(t *testing.T) {
	e, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "120"}})
	m, err := trigger.NewManager(trigger.Options{Broker: e, AllowCommands: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "app.py"), []byte("def handler(e, c):\n    return None\n"), 0o644)
	t.Chdir(dir)
	run := func(args ...string) (string, error) {
		cmd := newTriggerCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{args[0], "--endpoint", srv.URL}, args[1:]...))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := cmd.ExecuteContext(ctx)
		return out.String(), err
	}
	out, err := run("create", "py", "--queue", "q", "--runtime", "python3.12", "--handler", "app.handler", "--code-uri", "src",
		"--memory-size", "256", "--env", "API_KEY=s3cret", "--enabled=false")
	if err != nil {
		t.Fatalf("create: %v %s", err, out)
	}
	s, _ := m.Get("py")
	fn := s.Target.Function
	if fn == nil || fn.Runtime != "python3.12" || fn.Handler != "app.handler" || fn.CodeUri != filepath.Join(dir, "src") ||
		fn.MemorySize != 256 || fn.Environment["API_KEY"] != trigger.Redacted {
		t.Fatalf("function = %+v", fn)
	}
	if out, err := run("list"); err != nil || !strings.Contains(out, "function python3.12 app.handler") || strings.Contains(out, "s3cret") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if _, err := run("update", "py", "--handler", "app.handler"); err == nil || !strings.Contains(err.Error(), "needs --runtime and --code-uri") {
		t.Fatalf("a partial function: %v", err)
	}
	if _, err := run("update", "py", "--url", "http://127.0.0.1:1/", "--runtime", "python3.12"); err == nil || !strings.Contains(err.Error(), "give one target") {
		t.Fatalf("two targets: %v", err)
	}
	if _, err := run("update", "py", "--url", "http://127.0.0.1:1/"); err != nil {
		t.Fatal(err)
	}
	if s, _ := m.Get("py"); s.Target.Function != nil || s.Target.URL != "http://127.0.0.1:1/" {
		t.Fatalf("after --url: %+v", s.Target)
	}
}
