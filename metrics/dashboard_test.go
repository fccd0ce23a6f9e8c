package metrics_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"regexp"
	"testing"

	"github.com/tidemq/tidemq/metrics"
	"github.com/tidemq/tidemq/trigger"
)

var update = flag.Bool("update", false, "rewrite deploy/grafana-dashboard.json")

const shippedDashboard = "../deploy/grafana-dashboard.json"

// TestShippedDashboard checks that deploy/grafana-dashboard.json is what
// GrafanaDashboard generates (go test ./metrics -update rewrites it), and
// that every metric it queries is one tidemq exposes.
func TestShippedDashboard(t *testing.T) {
	got := metrics.GrafanaDashboard()
	if *update {
		if err := os.WriteFile(shippedDashboard, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(shippedDashboard)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date: run go test ./metrics -update", shippedDashboard)
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(got, &d); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, n := range exposedNames(t) {
		known[n] = true
	}
	re := regexp.MustCompile(`tidemq_[a-z_]+`)
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, n := range re.FindAllString(tg.Expr, -1) {
				n = regexp.MustCompile(`_(bucket|sum|count)$`).ReplaceAllString(n, "")
				if !known[n] {
					t.Errorf("dashboard queries %s, which tidemq does not expose", n)
				}
			}
		}
	}
}

// exposedNames are the metric families of a registry with every source.
func exposedNames(t *testing.T) []string {
	r := newRig(t)
	r.ok("CreateQueue", `{"QueueName":"dlq"}`)
	r.ok("CreateQueue", `{"QueueName":"q","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:dlq\",\"maxReceiveCount\":\"3\"}"}}`)
	r.ok("SendMessage", `{"QueueUrl":"`+url+`q","MessageBody":"a"}`)
	m := metrics.New(metrics.Options{NoRuntime: true, Snapshots: r.eng.Snapshot,
		Storage: func() metrics.StorageStats { return metrics.StorageStats{} },
		Alarms: func() []metrics.AlarmState {
			return []metrics.AlarmState{{Alarm: "a", Queue: "q"}, {Alarm: "trigger_errors", Queue: "q", Trigger: "fn"}}
		}})
	m.Registry().MustRegister(metrics.NewTriggerCollector(func() []trigger.TriggerStats {
		return []trigger.TriggerStats{{Name: "fn", Queue: "q", State: "Enabled",
			Durations: map[string]trigger.Histogram{"success": {Count: 1, Sum: 1, Buckets: map[float64]uint64{1: 1}}}}}
	}))
	m.ObserveRequest("SendMessage", "InvalidParameterValue", 400, 0)
	m.ObserveMessageSize("q", 1)
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fams {
		names = append(names, f.GetName())
	}
	return names
}
