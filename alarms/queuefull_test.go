package alarms_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// queue_full fires while a queue's messages reach --max-queue-bytes, and
// resolves once consumers drain it; without the limit it does not exist.
func TestQueueFull(t *testing.T) {
	clk := clocktest.New(start)
	eng, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1, MaxQueueBytes: 10,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	must(t, err)
	t.Cleanup(func() { eng.Close() })
	ctx := context.Background()
	_, err = eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"})
	must(t, err)
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ev.Evaluate()
	_, err = eng.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: "0123456789"}}})
	must(t, err)
	clk.Advance(time.Second)
	got := ev.Evaluate()
	if len(got) != 1 || got[0].Alarm.Alarm != alarms.QueueFull || got[0].State != alarms.StateFiring || got[0].Value != 10 || got[0].Threshold != 10 {
		t.Fatalf("transitions at the limit: %+v", got)
	}
	if alarms.AlertName(alarms.QueueFull) == "" {
		t.Fatal("no alert name")
	}
	msgs, err := eng.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	must(t, err)
	_, err = eng.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: msgs[0].ReceiptHandle}}})
	must(t, err)
	clk.Advance(time.Second)
	got = ev.Evaluate()
	if len(got) != 1 || got[0].Alarm.Alarm != alarms.QueueFull || got[0].State != alarms.StateOK {
		t.Fatalf("transitions once drained: %+v", got)
	}

	plain := openEngine(t, clk)
	_, err = plain.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"})
	must(t, err)
	ev = alarms.New(alarms.Options{Snapshots: plain.Snapshot, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ev.Evaluate()
	for _, a := range ev.Alarms() {
		if a.Alarm == alarms.QueueFull {
			t.Fatalf("queue_full without a limit: %+v", a)
		}
	}
}
