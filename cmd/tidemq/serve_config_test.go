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

// applyConfigFile is what 'tidemq serve --config --no-lint' does with
// the file: load it, then apply it. (The fixtures have lint errors on
// purpose: a disabled trigger, a placeholder URL.)
func applyConfigFile(ctx context.Context, ct configTargets, path, region, accountID string, params []string, log *slog.Logger) error {
	c, err := loadConfigFile(path, region, accountID, params, false, log)
	if err != nil {
		return err
	}
	return applyConfig(ctx, ct, c, log)
}

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
	if err := applyConfigFile(ctx, ct, file, "us-east-1", "000000000000", nil, log); err != nil {
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
	if err := applyConfigFile(ctx, ct, file, "us-east-1", "000000000000", nil, log); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "created") || strings.Contains(logs.String(), "updated") {
		t.Errorf("second apply changed something:\n%s", logs.String())
	}
	// Without the alarms (--no-alarms), alarms are reported, not applied.
	logs.Reset()
	ct.alarms = nil
	if err := applyConfigFile(ctx, ct, file, "us-east-1", "000000000000", nil, log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `alarm=orders-age reason="the built-in alarms are off (--no-alarms)"`) {
		t.Errorf("logs:\n%s", logs.String())
	}
}

// paramTemplate has two parameters without defaults, Stage then Suffix:
// an error about Suffix shows that Stage was given.
const paramTemplate = `Parameters:
  Stage:
    Type: String
  Suffix:
    Type: String
Resources:
  Jobs:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub "jobs-${Stage}${Suffix}"
`

// TestApplyConfigFileParams: 'serve --config' takes a template's
// parameters from --config-param, and names that flag (not lint's --param)
// when one is missing.
func TestApplyConfigFileParams(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	file := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(file, []byte(paramTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ct := configTargets{broker: eng}
	for _, c := range []struct {
		params []string
		want   string
	}{
		{nil, "line 2: parameter Stage has no default: give it with --config-param Stage=VALUE"},
		{[]string{"Stage=dev"}, "line 4: parameter Suffix has no default: give it with --config-param Suffix=VALUE"},
		{[]string{"Stage=dev", "Suffix"}, `--config-param wants NAME=VALUE, not "Suffix"`},
	} {
		err := applyConfigFile(ctx, ct, file, "us-east-1", "000000000000", c.params, log)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "--param ") {
			t.Errorf("params %q: err = %v, want %q", c.params, err, c.want)
		}
	}
	if err := applyConfigFile(ctx, ct, file, "us-east-1", "000000000000", []string{"Stage=dev", "Suffix=-a"}, log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `msg="config: queue created" queue=jobs-dev-a`) {
		t.Errorf("logs:\n%s", logs.String())
	}
	// A tidemq.yaml has no parameters: they are ignored, with a warning.
	yml := filepath.Join(t.TempDir(), "tidemq.yaml")
	if err := os.WriteFile(yml, []byte("queues:\n  - name: plain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	if err := applyConfigFile(ctx, ct, yml, "us-east-1", "000000000000", []string{"Stage=dev"}, log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "--config-param ignored") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

// TestServeConfigParamFlag runs 'tidemq serve --config' on paramTemplate
// up to the failed apply (Suffix is never given, so the server stops
// before it listens): --config-param is repeatable, and
// $TIDEMQ_CONFIG_PARAM gives one parameter, whole (bindEnv sets a
// string-array flag once, so commas are not separators), unless the flag
// is on the command line.
func TestServeConfigParamFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(file, []byte(paramTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--in-memory", "--listen", "127.0.0.1:0", "--no-alarms", "--log-level", "error", "--config", file}
	missingStage := "parameter Stage has no default: give it with --config-param Stage=VALUE"
	missingSuffix := "parameter Suffix has no default: give it with --config-param Suffix=VALUE"
	for _, c := range []struct {
		name string
		env  string // TIDEMQ_CONFIG_PARAM, if not empty
		args []string
		want string
	}{
		{"none", "", nil, missingStage},
		{"flag", "", []string{"--config-param", "Stage=dev"}, missingSuffix},
		{"repeated flag", "", []string{"--config-param", "Stage=dev", "--config-param", "Suffix"}, `--config-param wants NAME=VALUE, not "Suffix"`},
		{"environment", "Stage=a,b", nil, missingSuffix},
		{"flag wins", "Stage", []string{"--config-param", "Stage=dev"}, missingSuffix},
		{"bad environment", "Stage", nil, `--config-param wants NAME=VALUE, not "Stage"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("TIDEMQ_CONFIG_PARAM", c.env)
			}
			_, err := run(newServeCommand(), append(append([]string{}, base...), c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}
