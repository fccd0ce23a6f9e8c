package alarms_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/tidemq/tidemq/alarms"
)

var update = flag.Bool("update", false, "rewrite deploy/prometheus-rules.yml")

const shippedRules = "../deploy/prometheus-rules.yml"

// TestShippedRules checks that deploy/prometheus-rules.yml is what
// `tidemq alarms rules` generates with the default thresholds
// (go test ./alarms -update rewrites it).
func TestShippedRules(t *testing.T) {
	got := alarms.PrometheusRules(alarms.DefaultConfig())
	if *update {
		must(t, os.WriteFile(shippedRules, got, 0o644))
	}
	want, err := os.ReadFile(shippedRules)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date: run go test ./alarms -update", shippedRules)
	}
}

// rulesFile is the shape of a Prometheus rules file.
type rulesFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record      string            `yaml:"record"`
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func overridden(t *testing.T) alarms.Config {
	c, err := alarms.ParseConfig([]byte(`
defaults:
  no_receive: 30m
queues:
  orders:
    growth_window: 5m
    oldest_age_share: 0.25
  "batch-*":
    no_receive: off
    dlq_not_empty: false
`))
	must(t, err)
	return c
}

// TestRulesParse reads the generated rules back as YAML and checks their
// shape; with overrides, every alarm gets a rule per override and a default
// rule that leaves the overridden queues out.
func TestRulesParse(t *testing.T) {
	for _, c := range []alarms.Config{alarms.DefaultConfig(), overridden(t)} {
		var f rulesFile
		must(t, yaml.UnmarshalWithOptions(alarms.PrometheusRules(c), &f, yaml.Strict()))
		if len(f.Groups) != 2 || f.Groups[0].Rules[0].Record != "tidemq:queue_depth" {
			t.Fatalf("groups %+v", f.Groups)
		}
		for _, r := range f.Groups[1].Rules {
			if r.Alert == "" || r.Expr == "" || r.Labels["alarm"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("incomplete rule %+v", r)
			}
			if strings.Count(r.Expr, "(") != strings.Count(r.Expr, ")") {
				t.Errorf("unbalanced %s", r.Expr)
			}
		}
	}
	var f rulesFile
	must(t, yaml.Unmarshal(alarms.PrometheusRules(overridden(t)), &f))
	var exprs []string
	for _, r := range f.Groups[1].Rules {
		if r.Alert == "TidemqConsumerGone" || r.Alert == "TidemqQueueGrowing" {
			exprs = append(exprs, r.Expr)
		}
	}
	want := []string{
		`tidemq_messages_visible{queue!~"orders|batch-.*"} > 0 and increase(tidemq_messages_received_total{queue!~"orders|batch-.*"}[30m]) + increase(tidemq_empty_receives_total{queue!~"orders|batch-.*"}[30m]) == 0 and tidemq_messages_visible{queue!~"orders|batch-.*"} offset 30m unless tidemq_queue_is_dead_letter_queue == 1`,
		`tidemq_messages_visible{queue=~"orders"} > 0 and increase(tidemq_messages_received_total{queue=~"orders"}[30m]) + increase(tidemq_empty_receives_total{queue=~"orders"}[30m]) == 0 and tidemq_messages_visible{queue=~"orders"} offset 30m unless tidemq_queue_is_dead_letter_queue == 1`,
		`min_over_time((tidemq:queue_depth{queue!~"orders|batch-.*"} - tidemq:queue_depth{queue!~"orders|batch-.*"} offset 1m)[10m:1m]) > 0 unless tidemq_queue_is_dead_letter_queue == 1`,
		`min_over_time((tidemq:queue_depth{queue=~"orders"} - tidemq:queue_depth{queue=~"orders"} offset 1m)[5m:1m]) > 0 unless tidemq_queue_is_dead_letter_queue == 1`,
		`min_over_time((tidemq:queue_depth{queue=~"batch-.*",queue!~"orders"} - tidemq:queue_depth{queue=~"batch-.*",queue!~"orders"} offset 1m)[10m:1m]) > 0 unless tidemq_queue_is_dead_letter_queue == 1`,
	}
	if strings.Join(exprs, "\n") != strings.Join(want, "\n") {
		t.Errorf("exprs:\n%s\nwant:\n%s", strings.Join(exprs, "\n"), strings.Join(want, "\n"))
	}
}

// TestPromtool runs promtool check rules on the shipped file and on rules
// with overrides. It is skipped when promtool is not installed (Debian:
// apt-get install prometheus).
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	other := filepath.Join(t.TempDir(), "overrides.yml")
	must(t, os.WriteFile(other, alarms.PrometheusRules(overridden(t)), 0o644))
	for _, f := range []string{shippedRules, other} {
		out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool check rules %s: %v\n%s", f, err, out)
		}
	}
}

// TestPromtoolAlerts runs promtool's rule unit tests on the shipped rules:
// messages_expired fires once the expired counter grows and resolves when
// the window has passed; trigger_errors likewise for a trigger's errors,
// invalid responses and partial failures (seed 000: BatchSize 1 with
// ReportBatchItemFailures, where every failure is a partial one).
func TestPromtoolAlerts(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	abs, err := filepath.Abs(shippedRules)
	must(t, err)
	tests := `rule_files:
  - ` + abs + `
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'tidemq_messages_expired_total{queue="enrichment"}'
        values: '0 0 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2'
      - series: 'tidemq_messages_expired_total{queue="orders"}'
        values: '0x70'
      - series: 'tidemq_trigger_errors_total{trigger="orders-fn",queue="orders"}'
        values: '0 0 1 1 1 1 1 1 1 1 1'
      - series: 'tidemq_trigger_invalid_responses_total{trigger="orders-fn",queue="orders"}'
        values: '0 0 0 0 0 0 0 0 0 0 0'
      - series: 'tidemq_trigger_errors_total{trigger="audit-fn",queue="orders"}'
        values: '0 0 0 0 0 0 0 0 0 0 0'
      - series: 'tidemq_trigger_invalid_responses_total{trigger="audit-fn",queue="orders"}'
        values: '0 0 0 2 2 2 2 2 2 2 2'
      - series: 'tidemq_trigger_partial_failures_total{trigger="orders-fn",queue="orders"}'
        values: '0 0 0 0 0 0 0 0 0 0 0'
      - series: 'tidemq_trigger_partial_failures_total{trigger="audit-fn",queue="orders"}'
        values: '0 0 0 0 0 0 0 0 0 0 0'
      - series: 'tidemq_trigger_errors_total{trigger="hubspot-fn",queue="hubspot"}'
        values: '0 0 0 0 0 0 0 0 0 0 0'
      - series: 'tidemq_trigger_invalid_responses_total{trigger="hubspot-fn",queue="hubspot"}'
        values: '0 0 0 0 0 0 0 0 0 0 0'
      - series: 'tidemq_trigger_partial_failures_total{trigger="hubspot-fn",queue="hubspot"}'
        values: '0 0 2 2 2 2 2 2 2 2 2'
    alert_rule_test:
      - eval_time: 3m
        alertname: TidemqMessagesExpired
        exp_alerts:
          - exp_labels: {alertname: TidemqMessagesExpired, alarm: messages_expired, severity: critical, source: tidemq, queue: enrichment}
            exp_annotations:
              summary: "Messages of enrichment expired in the last 1h (about 2)"
              description: "They reached the end of the retention period unprocessed and were dropped with no dead-letter entry (unless the queue's tidemq:capture-expired tag moves them): the consumer is gone, disabled or too slow."
      - eval_time: 65m
        alertname: TidemqMessagesExpired
        exp_alerts: []
      - eval_time: 3m
        alertname: TidemqTriggerErrors
        exp_alerts:
          - exp_labels: {alertname: TidemqTriggerErrors, alarm: trigger_errors, severity: warning, source: tidemq, queue: orders, trigger: orders-fn}
            exp_annotations:
              summary: "Trigger orders-fn on orders had failed invocations in the last 5m"
              description: "Function errors, timeouts, throttles, unusable batchItemFailures answers or messages listed in them: the messages come back after the visibility timeout and may be dead-lettered (tidemq trigger list shows the latest invocations)."
          - exp_labels: {alertname: TidemqTriggerErrors, alarm: trigger_errors, severity: warning, source: tidemq, queue: orders, trigger: audit-fn}
            exp_annotations:
              summary: "Trigger audit-fn on orders had failed invocations in the last 5m"
              description: "Function errors, timeouts, throttles, unusable batchItemFailures answers or messages listed in them: the messages come back after the visibility timeout and may be dead-lettered (tidemq trigger list shows the latest invocations)."
          - exp_labels: {alertname: TidemqTriggerErrors, alarm: trigger_errors, severity: warning, source: tidemq, queue: hubspot, trigger: hubspot-fn}
            exp_annotations:
              summary: "Trigger hubspot-fn on hubspot had failed invocations in the last 5m"
              description: "Function errors, timeouts, throttles, unusable batchItemFailures answers or messages listed in them: the messages come back after the visibility timeout and may be dead-lettered (tidemq trigger list shows the latest invocations)."
      - eval_time: 10m
        alertname: TidemqTriggerErrors
        exp_alerts: []
`
	f := filepath.Join(t.TempDir(), "alerts_test.yml")
	must(t, os.WriteFile(f, []byte(tests), 0o644))
	out, err := exec.Command(promtool, "test", "rules", f).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}
