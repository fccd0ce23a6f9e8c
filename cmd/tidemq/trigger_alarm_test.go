package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// TestTriggerErrorsAlarmCountsFailedItems: seed 000's consumer runs with
// BatchSize 1 and ReportBatchItemFailures, so every failure it has is a
// "partial" one. 2 of 5 invocations failed their one message, and the
// trigger_errors alarm said "0 failed invocations"; the first signal was
// the DLQ alarm minutes later. A failed item now counts, in the alarm (and
// so in `tidemq alarms --all`) and in the metrics the Prometheus rule reads.
func TestTriggerErrorsAlarmCountsFailedItems(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "hubspot", Attributes: map[string]string{"VisibilityTimeout": "600"}}); err != nil {
		t.Fatal(err)
	}
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev trigger.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var failed []map[string]string
		for _, rec := range ev.Records {
			if strings.Contains(rec.Body, "bad") {
				failed = append(failed, map[string]string{"itemIdentifier": rec.MessageID})
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"batchItemFailures": failed})
	}))
	defer fn.Close()

	reg := prometheus.NewRegistry()
	trg, err := startTriggers(eng, mem.New(), reg, &serveOptions{inMemory: true}, "", log)
	if err != nil {
		t.Fatal(err)
	}
	defer trg.stop(5 * time.Second)
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ev.SetTriggers(trg.m.Stats)
	if _, err := trg.m.Create(ctx, trigger.Config{Name: "hubspot-fn", Queue: "hubspot", BatchSize: 1,
		FunctionResponseTypes: []string{trigger.ReportBatchItemFailures}, Target: trigger.Target{URL: fn.URL}}); err != nil {
		t.Fatal(err)
	}
	ev.Evaluate() // the counters' starting point
	var entries []tidemq.SendEntry
	for i, body := range []string{"ok 1", "bad 2", "ok 3", "bad 4", "ok 5"} {
		entries = append(entries, tidemq.SendEntry{ID: string(rune('a' + i)), Body: body})
	}
	if _, err := eng.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "hubspot", Entries: entries}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ss := trg.m.Stats()
		if len(ss) == 1 && ss[0].Invocations == 5 && ss[0].MessagesDeleted == 3 && ss[0].MessagesFailed == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trigger never ran the 5 messages: %+v", ss)
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := ev.Evaluate()
	var fired *alarms.Transition
	for i := range got {
		if got[i].Alarm.Alarm == alarms.TriggerErrors {
			fired = &got[i]
		}
	}
	if fired == nil || fired.State != alarms.StateFiring || fired.Value != 2 || fired.Trigger != "hubspot-fn" ||
		!strings.Contains(fired.Summary, "trigger hubspot-fn had 2 failed invocations") {
		t.Fatalf("trigger_errors after 2 failed items of 5: %+v", got)
	}
	want := `
# HELP tidemq_trigger_partial_failures_total Invocations whose batchItemFailures answer listed messages (they come back and may be dead-lettered).
# TYPE tidemq_trigger_partial_failures_total counter
tidemq_trigger_partial_failures_total{queue="hubspot",trigger="hubspot-fn"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "tidemq_trigger_partial_failures_total"); err != nil {
		t.Error(err)
	}
}
