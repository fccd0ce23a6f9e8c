package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

func TestTriggerCommands(t *testing.T) {
	e, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
		t.Fatal(err)
	}
	m, err := trigger.NewManager(trigger.Options{Broker: e, AllowCommands: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
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
