package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tidemq/tidemq/trigger"
)

// The state gauge has one series per state, 1 for the current one; the
// duration histogram one per outcome that happened.
func TestTriggerStateAndDurations(t *testing.T) {
	reg := prometheus.NewRegistry()
	st := trigger.TriggerStats{Name: "fn", Queue: "orders", State: "Paused", Stats: trigger.Stats{Pauses: 1, Invocations: 3, Errors: 1},
		Durations: map[string]trigger.Histogram{
			"success": {Count: 2, Sum: 0.3, Buckets: map[float64]uint64{0.1: 1, 1: 2}},
			"error":   {Count: 1, Sum: 5, Buckets: map[float64]uint64{0.1: 0, 1: 0}},
		}}
	reg.MustRegister(NewTriggerCollector(func() []trigger.TriggerStats { return []trigger.TriggerStats{st} }))
	expected := `
# HELP tidemq_trigger_state 1 for the state the trigger is in (Enabled, Disabled, Paused: its queue's visibility timeout is too short, Failing: it cannot poll), 0 for the others.
# TYPE tidemq_trigger_state gauge
tidemq_trigger_state{queue="orders",state="Disabled",trigger="fn"} 0
tidemq_trigger_state{queue="orders",state="Enabled",trigger="fn"} 0
tidemq_trigger_state{queue="orders",state="Failing",trigger="fn"} 0
tidemq_trigger_state{queue="orders",state="Paused",trigger="fn"} 1
# HELP tidemq_trigger_invocation_duration_seconds Duration of a trigger's invocations, by outcome: success, partial_failure, error, timeout, throttle or invalid_response.
# TYPE tidemq_trigger_invocation_duration_seconds histogram
tidemq_trigger_invocation_duration_seconds_bucket{outcome="error",queue="orders",trigger="fn",le="0.1"} 0
tidemq_trigger_invocation_duration_seconds_bucket{outcome="error",queue="orders",trigger="fn",le="1"} 0
tidemq_trigger_invocation_duration_seconds_bucket{outcome="error",queue="orders",trigger="fn",le="+Inf"} 1
tidemq_trigger_invocation_duration_seconds_sum{outcome="error",queue="orders",trigger="fn"} 5
tidemq_trigger_invocation_duration_seconds_count{outcome="error",queue="orders",trigger="fn"} 1
tidemq_trigger_invocation_duration_seconds_bucket{outcome="success",queue="orders",trigger="fn",le="0.1"} 1
tidemq_trigger_invocation_duration_seconds_bucket{outcome="success",queue="orders",trigger="fn",le="1"} 2
tidemq_trigger_invocation_duration_seconds_bucket{outcome="success",queue="orders",trigger="fn",le="+Inf"} 2
tidemq_trigger_invocation_duration_seconds_sum{outcome="success",queue="orders",trigger="fn"} 0.3
tidemq_trigger_invocation_duration_seconds_count{outcome="success",queue="orders",trigger="fn"} 2
# HELP tidemq_trigger_pauses_total Times a trigger paused because its queue's visibility timeout was lowered to or below the function timeout.
# TYPE tidemq_trigger_pauses_total counter
tidemq_trigger_pauses_total{queue="orders",trigger="fn"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expected),
		"tidemq_trigger_state", "tidemq_trigger_invocation_duration_seconds", "tidemq_trigger_pauses_total"); err != nil {
		t.Fatal(err)
	}
	st.State = "Enabled" // read at scrape time
	if err := testutil.GatherAndCompare(reg, strings.NewReader(strings.NewReplacer(
		`state="Enabled",trigger="fn"} 0`, `state="Enabled",trigger="fn"} 1`,
		`state="Paused",trigger="fn"} 1`, `state="Paused",trigger="fn"} 0`).Replace(expected)),
		"tidemq_trigger_state", "tidemq_trigger_invocation_duration_seconds", "tidemq_trigger_pauses_total"); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 13+4+2 {
		// 13 per-trigger series (messages has three), 4 states, 2 outcomes.
		t.Fatalf("%d series, %v", n, err)
	}
}
