package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/engine"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// TestApplyConfigFile is 'tidemq serve --config' on the server's parts in
// process: the engine, the topic store, the trigger manager and the alarm
// evaluator. It logs what it did; a restart (a second apply) logs nothing
// but what it cannot apply.
func TestApplyConfigFile(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	topics, err := topicstore.Open(topicstore.Options{Broker: eng})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := any(topics).(io.Closer); ok {
		defer c.Close()
	}
	m, err := trigger.NewManager(trigger.Options{Broker: eng, WaitTimeSeconds: -1, AllowCommands: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		m.Close(ctx)
	}()
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot})
	data, err := os.ReadFile("../../topology/testdata/apply-full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tidemq.yaml")
	os.WriteFile(file, []byte(strings.ReplaceAll(string(data), "FUNCTION_URL", "http://127.0.0.1:1/")), 0o644)

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ct := configTargets{broker: eng, topics: topics, triggers: m, alarms: ev}
	if err := applyConfigFile(ctx, ct, file, "us-east-1", "000000000000", log); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`msg="config: queue created" queue=orders`,
		`msg="config: topic created" topic=events`,
		`msg="config: subscription created" subscription="events -> sqs:orders"`,
		`msg="config: trigger created" trigger=order-worker.orders`,
		`msg="config: alarm updated" alarm=orders-age`,
		`msg="config: trigger not applied" trigger=reporter.reports reason="function reporter has no url or command to stand for it locally"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s:\n%s", want, logs.String())
		}
	}
	if _, err := m.Get("order-worker.orders"); err != nil {
		t.Error(err)
	}
	if th := ev.Thresholds("orders"); th.OldestAgeShare != 0.25 {
		t.Errorf("orders thresholds %+v", th)
	}
	logs.Reset()
	if err := applyConfigFile(ctx, ct, file, "us-east-1", "000000000000", log); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "created") || strings.Contains(logs.String(), "updated") {
		t.Errorf("second apply changed something:\n%s", logs.String())
	}
	// Without the alarms (--no-alarms), alarms are reported, not applied.
	logs.Reset()
	ct.alarms = nil
	if err := applyConfigFile(ctx, ct, file, "us-east-1", "000000000000", log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `alarm=orders-age reason="the built-in alarms are off (--no-alarms)"`) {
		t.Errorf("logs:\n%s", logs.String())
	}
}
