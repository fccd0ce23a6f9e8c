package alarms_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/trigger"
)

func alarmOf(ev *alarms.Evaluator, alarm, queue, trigger string) *alarms.Alarm {
	for _, a := range ev.Alarms() {
		if a.Alarm == alarm && a.Queue == queue && a.Trigger == trigger {
			return &a
		}
	}
	return nil
}

// Messages that reach the end of the retention period fire
// messages_expired (on a dead-letter queue too) for the window after the
// last expiry; a queue can turn it off.
func TestExpiredAlarm(t *testing.T) {
	clk := clocktest.New(start)
	eng := openEngine(t, clk)
	ctx := context.Background()
	for _, q := range []string{"enrichment", "scratch", "orders-dlq"} {
		_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q, Attributes: map[string]string{"MessageRetentionPeriod": "60"}})
		must(t, err)
	}
	off := time.Duration(0)
	cfg := alarms.DefaultConfig()
	cfg.Queues = map[string]alarms.Override{"scratch": {ExpiredWindow: &off}}
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot, Clock: clk, Config: &cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	send(t, eng, "enrichment")
	send(t, eng, "enrichment")
	send(t, eng, "scratch")
	if got := ev.Evaluate(); len(got) != 0 {
		t.Fatalf("t=0: %+v", got)
	}
	if a := alarmOf(ev, alarms.Expired, "enrichment", ""); a == nil || a.State != alarms.StateOK || a.Value != 0 {
		t.Fatalf("t=0: %+v", a)
	}

	// t=61s: both messages of enrichment expired, unreceived.
	clk.Advance(61 * time.Second)
	got := ev.Evaluate()
	if len(got) != 1 || got[0].Alarm.Alarm != alarms.Expired || got[0].Queue != "enrichment" || got[0].State != alarms.StateFiring || got[0].Value != 2 {
		t.Fatalf("t=61s: %+v", got)
	}
	if !strings.Contains(got[0].Summary, "2 messages expired in the last 1h0m0s") {
		t.Errorf("summary %q", got[0].Summary)
	}
	if a := alarmOf(ev, alarms.Expired, "scratch", ""); a != nil {
		t.Errorf("turned off for scratch, evaluated: %+v", a)
	}
	if p := alarms.NewPayload(got[0], ""); p.Alerts[0].Labels["alertname"] != "TidemqMessagesExpired" || p.Alerts[0].Labels["severity"] != "critical" {
		t.Errorf("payload labels %v", p.Alerts[0].Labels)
	}

	// A dead letter that expires is lost too. At t=30m another one of
	// enrichment expires: the window starts again from it.
	clk.Advance(29 * time.Minute)
	send(t, eng, "orders-dlq")
	send(t, eng, "enrichment")
	clk.Advance(61 * time.Second)
	got = ev.Evaluate()
	if len(got) != 1 || got[0].Queue != "orders-dlq" || got[0].State != alarms.StateFiring {
		t.Fatalf("t=31m: %+v", got)
	}
	if a := alarmOf(ev, alarms.Expired, "enrichment", ""); a.State != alarms.StateFiring || a.Value != 3 {
		t.Fatalf("t=31m, enrichment: %+v", a)
	}
	// t=61m: the first two are out of the window, the third is not.
	clk.Advance(30 * time.Minute)
	if got := ev.Evaluate(); len(got) != 0 {
		t.Fatalf("t=61m: %+v", got)
	}
	if a := alarmOf(ev, alarms.Expired, "enrichment", ""); a.State != alarms.StateFiring || a.Value != 1 {
		t.Fatalf("t=61m, enrichment: %+v", a)
	}
	// An hour after the last expiry, both resolve.
	clk.Advance(31 * time.Minute)
	got = ev.Evaluate()
	if len(got) != 2 || got[0].State != alarms.StateOK || got[1].State != alarms.StateOK {
		t.Fatalf("t=92m: %+v", got)
	}
}

// A trigger with failed invocations in the window fires trigger_errors,
// with the trigger in the alarm and the webhook's labels; the window is
// its queue's; a trigger deleted takes its alarm with it.
func TestTriggerErrorsAlarm(t *testing.T) {
	clk := clocktest.New(start)
	snaps := []tidemq.QueueSnapshot{{Name: "orders", RetentionSeconds: 345600}, {Name: "jobs", RetentionSeconds: 345600}}
	trigs := []trigger.TriggerStats{{Name: "orders-fn", Queue: "orders"}, {Name: "audit-fn", Queue: "orders"}, {Name: "jobs-fn", Queue: "jobs"}}
	off := time.Duration(0)
	cfg := alarms.DefaultConfig()
	cfg.Queues = map[string]alarms.Override{"jobs": {TriggerErrorWindow: &off}}
	ev := alarms.New(alarms.Options{Snapshots: func() []tidemq.QueueSnapshot { return snaps },
		Triggers: func() []trigger.TriggerStats { return trigs },
		Clock:    clk, Config: &cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if got := ev.Evaluate(); len(got) != 0 {
		t.Fatalf("t=0: %+v", got)
	}
	if a := alarmOf(ev, alarms.TriggerErrors, "orders", "orders-fn"); a == nil || a.State != alarms.StateOK {
		t.Fatalf("t=0: %+v", a)
	}
	if a := alarmOf(ev, alarms.TriggerErrors, "jobs", "jobs-fn"); a != nil {
		t.Fatalf("turned off for jobs, evaluated: %+v", a)
	}

	clk.Advance(30 * time.Second)
	trigs[0].Errors, trigs[2].Errors = 3, 7
	got := ev.Evaluate()
	if len(got) != 1 || got[0].Alarm.Alarm != alarms.TriggerErrors || got[0].Trigger != "orders-fn" || got[0].Queue != "orders" ||
		got[0].State != alarms.StateFiring || got[0].Value != 3 {
		t.Fatalf("t=30s: %+v", got)
	}
	p := alarms.NewPayload(got[0], "")
	if l := p.Alerts[0].Labels; l["alertname"] != "TidemqTriggerErrors" || l["trigger"] != "orders-fn" || l["queue"] != "orders" ||
		p.GroupLabels["trigger"] != "orders-fn" || !strings.Contains(p.GroupKey, `trigger="orders-fn"`) {
		t.Errorf("payload %+v", p)
	}
	// Five minutes without another error: resolved.
	clk.Advance(4 * time.Minute)
	if got := ev.Evaluate(); len(got) != 0 {
		t.Fatalf("t=4m30s: %+v", got)
	}
	clk.Advance(time.Minute)
	got = ev.Evaluate()
	if len(got) != 1 || got[0].Trigger != "orders-fn" || got[0].State != alarms.StateOK {
		t.Fatalf("t=5m30s: %+v", got)
	}
	// A trigger deleted and made again counts from zero: its first error
	// fires; deleted while firing, its alarm resolves and goes.
	trigs[0].Errors = 1
	clk.Advance(30 * time.Second)
	if got := ev.Evaluate(); len(got) != 1 || got[0].State != alarms.StateFiring || got[0].Value != 1 {
		t.Fatalf("after the counter restarted: %+v", got)
	}
	trigs = trigs[1:]
	got = ev.Evaluate()
	if len(got) != 1 || got[0].Trigger != "orders-fn" || got[0].State != alarms.StateOK {
		t.Fatalf("trigger deleted: %+v", got)
	}
	if a := alarmOf(ev, alarms.TriggerErrors, "orders", "orders-fn"); a != nil {
		t.Fatalf("alarm of a deleted trigger: %+v", a)
	}
	if a := alarmOf(ev, alarms.TriggerErrors, "orders", "audit-fn"); a == nil || a.State != alarms.StateOK {
		t.Fatalf("audit-fn: %+v", a)
	}
}
