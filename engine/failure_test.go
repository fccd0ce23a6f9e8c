package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

func TestRecordFailureJoinsTheStory(t *testing.T) {
	ctx := context.Background()
	e, clk := open(t)
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "dlq"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "x"}}}); err != nil {
		t.Fatal(err)
	}
	msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	if err != nil || len(msgs) != 1 {
		t.Fatal(err, msgs)
	}
	h := msgs[0].ReceiptHandle
	errs, err := e.RecordFailure(ctx, tidemq.RecordFailureParams{Queue: "q", ReceiptHandles: []string{h, "garbage"},
		Detail: "trigger t: HTTP 500", Client: tidemq.ClientInfo{UserAgent: "tidemq-trigger/t"}})
	if err != nil || errs[0] != nil || errs[1] == nil {
		t.Fatalf("RecordFailure = %v, %v", errs, err)
	}
	if _, err := e.RecordFailure(ctx, tidemq.RecordFailureParams{Queue: "nope", ReceiptHandles: []string{h}}); err == nil {
		t.Fatal("RecordFailure on a missing queue succeeded")
	}
	// Nothing else changed: still in flight until the timeout.
	if again, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"}); len(again) != 0 {
		t.Fatalf("recording a failure released the message: %+v", again)
	}
	clk.Advance(31 * time.Second)
	if again, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"}); len(again) != 0 {
		t.Fatalf("expected a dead-letter move, got %+v", again)
	}
	peek, err := e.PeekMessages(ctx, tidemq.PeekMessagesParams{Queue: "dlq", Max: new(10)})
	if err != nil || len(peek) != 1 {
		t.Fatal(err, peek)
	}
	var kinds []string
	for _, ev := range peek[0].History {
		kinds = append(kinds, ev.Kind)
	}
	want := []string{tidemq.HistorySent, tidemq.HistoryReceived, tidemq.HistoryConsumerFailed, tidemq.HistoryExpired, tidemq.HistoryDeadLetter}
	if len(kinds) != len(want) {
		t.Fatalf("history kinds = %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("history kinds = %v, want %v", kinds, want)
		}
	}
	if ev := peek[0].History[2]; ev.Detail != "trigger t: HTTP 500" || ev.Client.UserAgent != "tidemq-trigger/t" {
		t.Fatalf("failure event = %+v", ev)
	}
	// A stale handle (from an earlier receive) is refused.
	if errs, _ := e.RecordFailure(ctx, tidemq.RecordFailureParams{Queue: "q", ReceiptHandles: []string{h}}); errs[0] == nil {
		t.Fatal("a handle of a moved message was accepted")
	}
}

func TestRecordFailureSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	e, clk, store := openWithStore(t)
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "x"}}}); err != nil {
		t.Fatal(err)
	}
	msgs, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	if _, err := e.RecordFailure(ctx, tidemq.RecordFailureParams{Queue: "q", ReceiptHandles: []string{msgs[0].ReceiptHandle}, Detail: "boom"}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e2, err := engine.Open(engine.Options{Store: store, Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	peek, _ := e2.PeekMessages(ctx, tidemq.PeekMessagesParams{Queue: "q", Max: new(1), IncludeInflight: true})
	if len(peek) != 1 {
		t.Fatalf("peek = %+v", peek)
	}
	h := peek[0].History
	if last := h[len(h)-1]; last.Kind != tidemq.HistoryConsumerFailed || last.Detail != "boom" {
		t.Fatalf("history after restart = %+v", h)
	}
}

func openWithStore(t *testing.T) (*engine.Engine, *clocktest.Clock, *mem.Store) {
	t.Helper()
	store := mem.New()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := engine.Open(engine.Options{Store: store, Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return e, clk, store
}
