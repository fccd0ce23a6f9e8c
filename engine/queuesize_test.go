package engine

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/tidemq/tidemq"
)

// An empty queue is most of what a server with 100,000 queues holds
// (issue 25): its struct stays in the 352-byte size class (it was 504
// bytes, the 512 class, with its ARN, receipt secret, store, page size and
// settings copied in).
func TestQueueStructSize(t *testing.T) {
	if n := unsafe.Sizeof(queue{}); n > 352 {
		t.Errorf("queue is %d bytes, want at most 352", n)
	}
}

// Queues with the same attributes share their parsed settings; changing
// one queue's attributes gives it its own and leaves the others' alone.
func TestSharedSettingsStayPerQueue(t *testing.T) {
	ctx := context.Background()
	e, clk := openMem(t)
	for _, name := range []string{"a", "b"} {
		if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if e.queues["a"].QueueSettings != e.queues["b"].QueueSettings {
		t.Error("two queues of the default attributes do not share their settings")
	}
	if err := e.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "a", Attributes: map[string]string{"VisibilityTimeout": "5"}}); err != nil {
		t.Fatal(err)
	}
	if got := e.queues["b"].Visibility; got != 30*time.Second {
		t.Fatalf("b's visibility timeout is %v after a's was set to 5 s, want 30s", got)
	}
	// And in behaviour: a message received from b stays invisible past
	// a's 5 seconds; one received from a comes back after them.
	for _, name := range []string{"a", "b"} {
		if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: name, Entries: []tidemq.SendEntry{{Body: name}}}); err != nil {
			t.Fatal(err)
		}
		if ms, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: name}); err != nil || len(ms) != 1 {
			t.Fatalf("receive %s: %v %v", name, ms, err)
		}
	}
	clk.Advance(6 * time.Second)
	if ms, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "a"}); len(ms) != 1 {
		t.Errorf("a: %d messages back after its 5 s visibility timeout, want 1", len(ms))
	}
	if ms, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "b"}); len(ms) != 0 {
		t.Errorf("b: %d messages back after 6 s of its 30 s visibility timeout, want 0", len(ms))
	}
}
