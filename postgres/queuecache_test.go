package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/postgres"
)

// A node that has a queue's row in its cache (queuecache.go) learns of
// another node's changes to it: new settings, the queue deleted, and the
// queue created again under its name (a new id).
func TestQueueChangesReachTheOtherNodesCache(t *testing.T) {
	ctx, a, b := cachingNodes(t)
	if _, err := a.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	send := func(body string) error { return sendOne(ctx, b, body) }
	if err := send("cached"); err != nil { // b reads the row and keeps it
		t.Fatal(err)
	}

	// A smaller maximum size set on a reaches b's checks.
	if err := a.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "q",
		Attributes: map[string]string{tidemq.AttrMaximumMessageSize: "1024"}}); err != nil {
		t.Fatal(err)
	}
	within(t, "a 2 KiB send after the limit fell to 1 KiB", func() error {
		err := send(strings.Repeat("x", 2048))
		if err == nil {
			return errAccepted
		}
		if tidemq.AsError(err).Code != tidemq.ErrInvalidParameterValue {
			t.Fatalf("send over the limit: %v", err)
		}
		return nil
	})

	// Deleted on a: b's sends are refused.
	if err := a.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "q"}); err != nil {
		t.Fatal(err)
	}
	within(t, "a send to the deleted queue", func() error {
		err := send("after delete")
		if err == nil {
			return errAccepted
		}
		if !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
			t.Fatalf("send to a deleted queue: %v", err)
		}
		return nil
	})

	// Created again on a: b sends into the new queue at once, cache or
	// not (a send with a stale id fails on the foreign key and looks
	// again).
	if _, err := a.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	if err := send("into the new queue"); err != nil {
		t.Fatalf("send to the queue created again: %v", err)
	}
	ten := 10
	got, err := a.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: &ten})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Body != "into the new queue" {
		t.Fatalf("the new queue holds %d messages (%v), want the one sent after it was created", len(got), got)
	}
}

// On the node that made a change, the change applies to the next request
// at once: its cache entry is dropped when the change commits.
func TestQueueChangeAppliesAtOnceOnItsNode(t *testing.T) {
	nodes := twoNodes(t)
	ctx := context.Background()
	a := nodes[0]
	if _, err := a.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "q",
		Attributes: map[string]string{tidemq.AttrMaximumMessageSize: "1024"}}); err != nil {
		t.Fatal(err)
	}
	err := sendOne(ctx, a, strings.Repeat("x", 2048))
	if tidemq.AsError(err).Code != tidemq.ErrInvalidParameterValue {
		t.Fatalf("a 2 KiB send right after the limit fell to 1 KiB on the same node: %v, want InvalidParameterValue", err)
	}
	if err := a.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "q"}); err != nil {
		t.Fatal(err)
	}
	err = sendOne(ctx, a, "x")
	if !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
		t.Fatalf("a send right after DeleteQueue on the same node: %v, want QueueDoesNotExist", err)
	}
}

// sendOne sends body to queue q on node, and returns the request's error
// or the message's.
// cachingNodes are two nodes whose cache entries never run out in the
// test's time: changes must come by announcement.
func cachingNodes(t *testing.T) (context.Context, *postgres.Broker, *postgres.Broker) {
	t.Helper()
	t.Cleanup(postgres.SetQueueCacheTTL(time.Hour))
	nodes := twoNodes(t)
	return context.Background(), nodes[0], nodes[1]
}

func sendOne(ctx context.Context, node *postgres.Broker, body string) error {
	res, err := node.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: body}}})
	if err != nil {
		return err
	}
	return res[0].Err
}

// within fails t unless check passes within five seconds (eventually).
func within(t *testing.T, what string, check func() error) {
	t.Helper()
	if err := eventually(5*time.Second, check); err != nil {
		t.Fatalf("%s: still %v after 5 s", what, err)
	}
}

type acceptedError struct{}

func (acceptedError) Error() string { return "accepted" }

var errAccepted error = acceptedError{}

// A long poll on one node ends with QueueDoesNotExist soon after another
// node deletes its queue, whatever order the deletion's two announcements
// (the wake and the change) arrive in.
func TestLongPollEndsWhenAnotherNodeDeletesTheQueue(t *testing.T) {
	t.Cleanup(postgres.SetQueueCacheTTL(time.Hour))
	nodes := twoNodes(t)
	ctx := context.Background()
	a, b := nodes[0], nodes[1]
	if _, err := a.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 5; round++ {
		if round > 0 {
			if _, err := a.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := sendOne(ctx, b, "cached"); err != nil { // b keeps the row
			t.Fatal(err)
		}
		ten, wait := 10, 20
		if _, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: &ten}); err != nil {
			t.Fatal(err) // takes the message: the poll below waits on an empty queue
		}
		done := make(chan error, 1)
		go func() {
			_, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: &ten, WaitTimeSeconds: &wait})
			done <- err
		}()
		time.Sleep(200 * time.Millisecond) // the poll is waiting
		start := time.Now()
		if err := a.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "q"}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
				t.Fatalf("round %d: the poll ended with %v, want QueueDoesNotExist", round, err)
			}
			t.Logf("round %d: the poll ended %v after the delete", round, time.Since(start).Round(time.Millisecond))
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the poll still waits 10 s after its queue was deleted on the other node", round)
		}
	}
}
