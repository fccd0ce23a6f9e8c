package engine_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/tidemq/tidemq"
)

// A FIFO queue stops handing out messages at 120,000 in flight, as AWS
// documents it: no error, just no messages, while the rest stay visible;
// a delete makes room again.
func TestFIFOInflightLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("120,000 messages")
	}
	ctx := context.Background()
	e, _ := open(t)
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q.fifo", Attributes: map[string]string{
		"FifoQueue": "true", "ContentBasedDeduplication": "true"}}); err != nil {
		t.Fatal(err)
	}
	const groups = tidemq.MaxInflightFIFO/10 + 1
	for g := 0; g < groups; g++ {
		entries := make([]tidemq.SendEntry, 10)
		for i := range entries {
			entries[i] = tidemq.SendEntry{ID: strconv.Itoa(i), Body: fmt.Sprintf("%d-%d", g, i), MessageGroupID: strconv.Itoa(g)}
		}
		if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q.fifo", Entries: entries, Batch: true}); err != nil {
			t.Fatal(err)
		}
	}
	var last *tidemq.Message
	for got := 0; got < tidemq.MaxInflightFIFO; {
		msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q.fifo", MaxNumberOfMessages: new(10), VisibilityTimeout: new(3600)})
		if err != nil || len(msgs) == 0 {
			t.Fatalf("receive after %d messages: %v, %d messages", got, err, len(msgs))
		}
		got += len(msgs)
		last = msgs[0]
	}
	msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q.fifo", MaxNumberOfMessages: new(10)})
	if err != nil || len(msgs) != 0 {
		t.Fatalf("receive at 120,000 in flight: %v, %d messages; want none and no error", err, len(msgs))
	}
	a, err := e.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: "q.fifo", Names: []string{tidemq.AttrAll}})
	if err != nil || a[tidemq.AttrApproximateNumberOfMessagesNotVisible] != "120000" || a[tidemq.AttrApproximateNumberOfMessages] != "10" {
		t.Fatalf("at the limit: %v %v", err, a)
	}
	if _, err := e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q.fifo", Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: last.ReceiptHandle}}}); err != nil {
		t.Fatal(err)
	}
	if msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q.fifo", MaxNumberOfMessages: new(10)}); err != nil || len(msgs) != 1 {
		t.Fatalf("after a delete below the limit: %v, %d messages, want 1", err, len(msgs))
	}
}
