package trigger_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/trigger"
)

// Each invocation is remembered with its outcome, latest first, and
// observed in the duration histogram of its outcome.
func TestRecentInvocations(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", nil)
	_, url := newTarget(t, func(ev trigger.Event, r *http.Request) (int, any, func(string) bool) {
		switch ev.Records[0].Body {
		case "boom":
			return 500, map[string]string{"errorMessage": "kaboom"}, nil
		case "part":
			return 200, map[string]any{"batchItemFailures": []map[string]string{{"itemIdentifier": ev.Records[0].MessageID}}}, nil
		}
		return 200, nil, nil
	})
	v.create(trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: url}, BatchSize: 1, FunctionResponseTypes: reportFailures()})
	for i, body := range []string{"ok", "boom", "part"} {
		v.send("q", body)
		eventually(t, body+"'s invocation recorded", func() bool { return len(v.status("t").RecentInvocations) == i+1 })
	}
	got := v.status("t").RecentInvocations
	want := []struct {
		outcome string
		failed  int
		err     string
	}{{trigger.OutcomePartial, 1, ""}, {trigger.OutcomeError, 1, "HTTP 500 Internal Server Error: {\"errorMessage\":\"kaboom\"}"}, {trigger.OutcomeSuccess, 0, ""}}
	for i, w := range want {
		g := got[i]
		if g.Outcome != w.outcome || g.FailedMessages != w.failed || g.Error != w.err || g.BatchSize != 1 || g.DurationSeconds <= 0 || g.Time.IsZero() {
			t.Errorf("invocation %d = %+v, want %+v", i, g, w)
		}
	}
	if !got[0].Time.After(got[1].Time) || !got[1].Time.After(got[2].Time) {
		t.Errorf("not latest first: %v %v %v", got[0].Time, got[1].Time, got[2].Time)
	}
	var ts trigger.TriggerStats
	for _, s := range v.m.Stats() {
		if s.Name == "t" {
			ts = s
		}
	}
	if ts.State != trigger.StateEnabled || len(ts.Durations) != 3 {
		t.Fatalf("stats: state %s, durations %+v", ts.State, ts.Durations)
	}
	for _, o := range []string{trigger.OutcomeSuccess, trigger.OutcomeError, trigger.OutcomePartial} {
		h := ts.Durations[o]
		if h.Count != 1 || h.Sum <= 0 || h.Buckets[900] != 1 {
			t.Errorf("%s histogram %+v", o, h)
		}
	}
	if strings.Contains(got[1].Error, "\n") {
		t.Errorf("multi-line error %q", got[1].Error)
	}
}
