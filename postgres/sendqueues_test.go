package postgres_test

import (
	"testing"

	"github.com/tidemq/tidemq"
)

// SendToQueues on a node whose cache still has a queue that another node
// deleted: the send is refused as a whole and the other queue of the send
// gets nothing, whether the node learned of the deletion first or its
// statement failed on the stale queue and it looked again; once the queue
// is made again, the node sends into the new one.
func TestSendToQueuesAfterAnotherNodeDeletedAQueue(t *testing.T) {
	ctx, a, b := cachingNodes(t)
	for _, q := range []string{"x", "y"} {
		if _, err := a.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q}); err != nil {
			t.Fatal(err)
		}
	}
	both := func(body string) []tidemq.SendMessagesParams {
		return []tidemq.SendMessagesParams{
			{Queue: "x", Entries: []tidemq.SendEntry{{ID: "0", Body: body}}},
			{Queue: "y", Entries: []tidemq.SendEntry{{ID: "0", Body: body}}},
		}
	}
	depth := func(q, want, when string) {
		t.Helper()
		attrs, err := a.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: q, Names: []string{tidemq.AttrApproximateNumberOfMessages}})
		if err != nil || attrs[tidemq.AttrApproximateNumberOfMessages] != want {
			t.Fatalf("%s: %s holds %v (%v), want %s", when, q, attrs, err, want)
		}
	}
	if _, err := b.SendToQueues(ctx, both("first")); err != nil { // b caches both
		t.Fatal(err)
	}
	if err := a.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "y"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SendToQueues(ctx, both("second")); !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
		t.Fatalf("SendToQueues with y deleted on the other node: %v, want QueueDoesNotExist", err)
	}
	depth("x", "1", "after the refused send")
	if _, err := a.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "y"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SendToQueues(ctx, both("third")); err != nil {
		t.Fatalf("SendToQueues once y was made again: %v", err)
	}
	depth("x", "2", "after the send into the new y")
	depth("y", "1", "after the send into the new y")
}
