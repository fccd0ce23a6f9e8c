package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/trigger"
)

// `trigger create --runtime ... --code-uri DIR` creates a function
// target, with a relative code directory sent absolute and the
// environment redacted on the way back; a URL or a command replaces it.
func TestTriggerFunctionFlags(t *testing.T) {
	m, run := triggerCLI(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "app.py"), []byte("def handler(e, c):\n    return None\n"), 0o644)
	t.Chdir(dir)
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
