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

// TestDLQAlarmOutlivesItsSource: a dead-letter queue keeps its
// dlq_not_empty alarm after its source queue is deleted (per-batch queues
// are), across a restart, and a DLQ named like one fires for messages sent
// to it directly although no RedrivePolicy names it any more. A queue that
// is none of these never gets the alarm.
func TestDLQAlarmOutlivesItsSource(t *testing.T) {
	clk := clocktest.New(start)
	store := mem.New()
	open := func() *engine.Engine {
		t.Helper()
		eng, err := engine.Open(engine.Options{Store: store, Clock: clk, SweepInterval: -1,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		must(t, err)
		return eng
	}
	eng := open()
	defer func() { eng.Close() }()
	ctx := context.Background()
	create := func(name string, attrs map[string]string) {
		t.Helper()
		_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs})
		must(t, err)
	}
	redrive := func(dlq string) map[string]string {
		return map[string]string{"VisibilityTimeout": "0",
			"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:` + dlq + `","maxReceiveCount":"1"}`}
	}
	// "parking" is not named like a DLQ: only its RedrivePolicy, and then
	// its dead letters, make it one.
	create("parking", nil)
	create("jobs", redrive("parking"))
	create("stack_doc_loader_1001_7_dlq", nil)
	create("stack_doc_loader_1001_7", redrive("stack_doc_loader_1001_7_dlq"))
	create("plain", nil)
	send(t, eng, "jobs")
	send(t, eng, "jobs")
	receive(t, eng, "jobs")
	receive(t, eng, "jobs") // dead-letters both
	send(t, eng, "plain")

	ev := alarms.New(alarms.Options{Snapshots: func() []tidemq.QueueSnapshot { return eng.Snapshot() }, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	firing := func() map[string]bool {
		out := map[string]bool{}
		for _, a := range ev.Alarms() {
			if a.Alarm == alarms.DLQNotEmpty && a.State == alarms.StateFiring {
				out[a.Queue] = true
			}
		}
		return out
	}
	ev.Evaluate()
	if f := firing(); !f["parking"] || len(f) != 1 {
		t.Fatalf("dlq_not_empty firing on %v, want parking", f)
	}

	// The source queues go, as a finished batch's do; a worker then sends
	// a message straight to the batch's DLQ (seed 002's send_to_dlq).
	must(t, eng.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "jobs"}))
	must(t, eng.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "stack_doc_loader_1001_7"}))
	send(t, eng, "stack_doc_loader_1001_7_dlq")
	clk.Advance(time.Minute)
	for _, tr := range ev.Evaluate() {
		if tr.Alarm.Alarm == alarms.DLQNotEmpty && tr.State == alarms.StateOK {
			t.Errorf("resolved with messages still dead: %+v", tr.Alarm)
		}
	}
	if f := firing(); !f["parking"] || !f["stack_doc_loader_1001_7_dlq"] || len(f) != 2 {
		t.Fatalf("after the sources were deleted, dlq_not_empty fires on %v", f)
	}

	// After a restart the engine still knows what parking holds.
	must(t, eng.Close())
	eng = open()
	clk.Advance(time.Minute)
	ev.Evaluate()
	if f := firing(); !f["parking"] || len(f) != 2 {
		t.Fatalf("after a restart, dlq_not_empty fires on %v", f)
	}
	snaps := map[string]tidemq.QueueSnapshot{}
	for _, s := range eng.Snapshot() {
		snaps[s.Name] = s
	}
	if !snaps["parking"].IsDeadLetterQueue || !snaps["stack_doc_loader_1001_7_dlq"].IsDeadLetterQueue || snaps["plain"].IsDeadLetterQueue {
		t.Errorf("IsDeadLetterQueue: %+v", snaps)
	}

	// Once its dead letters are gone (one deleted, one purged), parking is
	// an ordinary queue again.
	zero := 0
	got, err := eng.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "parking", WaitTimeSeconds: &zero})
	must(t, err)
	if len(got) != 1 {
		t.Fatalf("received %d from parking", len(got))
	}
	_, err = eng.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "parking", Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: got[0].ReceiptHandle}}})
	must(t, err)
	if ev.Evaluate(); !firing()["parking"] {
		t.Fatalf("parking holds a dead letter still, but its alarm is off")
	}
	must(t, eng.PurgeQueue(ctx, tidemq.PurgeQueueParams{Queue: "parking"}))
	clk.Advance(time.Minute)
	ev.Evaluate()
	if f := firing(); f["parking"] {
		t.Errorf("dlq_not_empty still fires on the emptied parking")
	}
	for _, s := range eng.Snapshot() {
		if s.Name == "parking" && s.IsDeadLetterQueue {
			t.Errorf("parking is still a DLQ without a dead letter or a RedrivePolicy naming it")
		}
	}
}
