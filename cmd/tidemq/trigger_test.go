package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// triggerCLI serves a trigger manager, on an engine with a queue "q"
// (visibility timeout 120 s), and returns it with a function that runs
// `tidemq trigger ARGS...` against it.
func triggerCLI(t *testing.T) (*trigger.Manager, func(args ...string) (string, error)) {
	t.Helper()
	e, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
		t.Fatal(err)
	}
	m, err := trigger.NewManager(trigger.Options{Broker: e, AllowCommands: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(func() {
		srv.Close()
		m.Close(context.Background()) // before the engine's Close, registered earlier
	})
	return m, func(args ...string) (string, error) {
		cmd := newTriggerCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{args[0], "--endpoint", srv.URL}, args[1:]...))
		// A hang guard, not a timing check: creating a python3.x
		// function has the server start the interpreter, which took
		// over 10 s on a machine at load 27.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		err := cmd.ExecuteContext(ctx)
		return out.String(), err
	}
}

func TestTriggerCommands(t *testing.T) {
	m, run := triggerCLI(t)
	if out, err := run("create", "t", "--queue", "q", "--url", "http://127.0.0.1:1/", "--batch-size", "5",
		"--report-batch-item-failures", "--max-concurrency", "2", "--filter", `{"body":{"k":["v"]}}`, "--enabled=false"); err != nil || !strings.Contains(out, "created t (Disabled") {
		t.Fatalf("create: %v %s", err, out)
	}
	if _, err := run("create", "u", "--queue", "q", "--batch-size", "11", "--url", "http://x/"); err == nil ||
		!strings.Contains(err.Error(), "Maximum batch window in seconds must be greater than 0") {
		t.Fatalf("batch 11: %v", err)
	}
	if out, err := run("update", "t", "--timeout", "10", "--", "/bin/cat"); err != nil || !strings.Contains(out, "updated t") {
		t.Fatalf("update: %v %s", err, out)
	}
	s, _ := m.Get("t")
	if s.Timeout != 10 || s.Target.URL != "" || len(s.Target.Command) != 1 || s.BatchSize != 5 || s.ScalingConfig.MaximumConcurrency != 2 || len(s.FilterCriteria.Filters) != 1 {
		t.Fatalf("after update: %+v", s)
	}
	if out, err := run("list"); err != nil || !strings.Contains(out, "t     q      Disabled  /bin/cat") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if _, err := run("enable", "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := run("disable", "nope"); err == nil || !strings.Contains(err.Error(), `no trigger named "nope"`) {
		t.Fatalf("disable nope: %v", err)
	}
	if out, err := run("delete", "t"); err != nil || !strings.Contains(out, "deleted t") {
		t.Fatalf("delete: %v %s", err, out)
	}
	if out, _ := run("list"); !strings.Contains(out, "no triggers") {
		t.Fatalf("list after delete: %s", out)
	}
}

// A command given relative to the shell (./handler.sh) is sent absolute,
// to run from the shell's directory; bare names and --dir are left alone.
func TestTriggerLocalCommand(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("handler.sh", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	patch := func(args ...string) map[string]any {
		t.Helper()
		cmd := newTriggerCommand()
		create, _, err := cmd.Find([]string{"create"})
		if err != nil {
			t.Fatal(err)
		}
		if err := create.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		out, err := triggerFlagsToJSON(create, create.Flags().Args())
		if err != nil {
			t.Fatal(err)
		}
		return out["Target"].(map[string]any)
	}
	tg := patch("t1", "--", "./handler.sh", "arg")
	if c := tg["Command"].([]string); c[0] != filepath.Join(dir, "handler.sh") || c[1] != "arg" || tg["Dir"] != dir {
		t.Errorf("./handler.sh became %v in %v", c, tg["Dir"])
	}
	if tg := patch("t2", "--", "python3", "x.py"); tg["Command"].([]string)[0] != "python3" || tg["Dir"] != nil {
		t.Errorf("a bare name was changed: %v", tg)
	}
	if tg := patch("t3", "--dir", "/srv", "--", "./handler.sh"); tg["Command"].([]string)[0] != "./handler.sh" || tg["Dir"] != "/srv" {
		t.Errorf("with --dir the command must be left as given: %v", tg)
	}
}

// trigger list shows each trigger's latest invocations under the table;
// --recent bounds them, and --json has them all.
func TestTriggerListRecentInvocations(t *testing.T) {
	e, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
		t.Fatal(err)
	}
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev trigger.Event
		_ = json.NewDecoder(r.Body).Decode(&ev)
		if ev.Records[0].Body == "boom" {
			http.Error(w, "kaboom\nat line 3", http.StatusInternalServerError)
		}
	}))
	defer fn.Close()
	m, err := trigger.NewManager(trigger.Options{Broker: e, WaitTimeSeconds: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	m.Start()
	if _, err := m.Create(ctx, trigger.Config{Name: "t", Queue: "q", BatchSize: 1, Target: trigger.Target{URL: fn.URL}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	for i, body := range []string{"ok", "ok", "boom"} {
		if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: body}}}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(15 * time.Second)
		for s, _ := m.Get("t"); len(s.RecentInvocations) < i+1; s, _ = m.Get("t") {
			if time.Now().After(deadline) {
				t.Fatalf("invocation %d never came", i+1)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := newTriggerCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"list", "--endpoint", srv.URL}, args...))
		if err := cmd.ExecuteContext(ctx); err != nil {
			t.Fatalf("list %v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	out := run("--recent", "2")
	lines := strings.Split(out, "\n")
	i := slices.Index(lines, "recent invocations of t, latest first:")
	if i < 0 || len(lines) < i+4 {
		t.Fatalf("no recent invocations:\n%s", out)
	}
	head, first, second := strings.Fields(lines[i+1]), strings.Fields(lines[i+2]), strings.Fields(lines[i+3])
	if strings.Join(head, " ") != "TIME BATCH DURATION OUTCOME FAILED ERROR" ||
		first[1] != "1" || first[3] != "error" || first[4] != "1" || !strings.Contains(lines[i+2], "HTTP 500 Internal Server Error: kaboom at line 3") ||
		second[3] != "success" || second[4] != "0" || strings.TrimSpace(lines[i+4]) != "" {
		t.Fatalf("recent invocations:\n%s", out)
	}
	if out := run("--recent", "0"); strings.Contains(out, "recent invocations") {
		t.Fatalf("--recent 0:\n%s", out)
	}
	var l struct{ Triggers []*trigger.Status }
	if err := json.Unmarshal([]byte(run("--json")), &l); err != nil || len(l.Triggers) != 1 || len(l.Triggers[0].RecentInvocations) != 3 {
		t.Fatalf("--json: %v %+v", err, l)
	}
	if inv := l.Triggers[0].RecentInvocations[0]; inv.Outcome != trigger.OutcomeError || inv.DurationSeconds <= 0 || inv.Time.IsZero() {
		t.Fatalf("--json invocation %+v", inv)
	}
}
