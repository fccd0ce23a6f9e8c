package brokertest

import (
	"context"
	"errors"
	"time"

	"github.com/tidemq/tidemq"
)

// longPollChecks cover receives that wait (reference §1 WaitTimeSeconds,
// §4 ReceiveMessageWaitTimeSeconds, §5 short polling). Each starts the
// receive in a goroutine, waits for it to reach its timed wait on the fake
// clock, and then acts.
func longPollChecks() []check {
	return []check{
		{"ReturnsWhenAMessageIsSent", func(e *env) {
			e.create("q", nil)
			p := e.startPoll(e.ctx, "q", 10, withWait(20))
			e.sendBody("q", "wake up")
			m, err := p.result()
			e.ok(err, "long poll")
			if len(m) != 1 || m[0].Body != "wake up" || m[0].ApproximateReceiveCount != 1 {
				e.t.Fatalf("long poll returned %v, want the message sent while it waited", bodies(m))
			}
			e.wantCounts("q", 0, 1, 0, "after the long poll took the message")
		}},
		{"ReturnsWhenVisibilityExpires", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			e.receiveOne("q", withVisibility(10))
			p := e.startPoll(e.ctx, "q", 10, withWait(20))
			e.advance(11 * time.Second)
			m, err := p.result()
			e.ok(err, "long poll")
			if len(m) != 1 || m[0].ApproximateReceiveCount != 2 {
				e.t.Fatalf("long poll returned %d messages, want the message whose visibility ran out, with count 2", len(m))
			}
		}},
		{"ReturnsWhenADelayedMessageBecomesDue", func(e *env) {
			e.create("q", nil)
			e.send("q", tidemq.SendEntry{Body: "later", DelaySeconds: intp(5)})
			p := e.startPoll(e.ctx, "q", 10, withWait(20))
			e.advance(6 * time.Second)
			m, err := p.result()
			e.ok(err, "long poll")
			if len(m) != 1 || m[0].Body != "later" {
				e.t.Fatalf("long poll returned %v, want the delayed message", bodies(m))
			}
		}},
		{"EmptyAfterWaitTimeSeconds", func(e *env) {
			e.create("q", nil)
			p := e.startPoll(e.ctx, "q", 10, withWait(20))
			e.advance(19 * time.Second)
			p.wantPending("19 s into a 20 s long poll")
			e.advance(time.Second)
			m, err := p.result()
			e.ok(err, "empty long poll")
			if len(m) != 0 {
				e.t.Fatalf("empty long poll returned %d messages", len(m))
			}
		}},
		{"UnsetWaitTimeUsesTheQueueSetting", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrReceiveMessageWaitTimeSeconds: "5"})
			p := e.startPoll(e.ctx, "q", 10, withQueueWait())
			e.advance(4 * time.Second)
			p.wantPending("4 s into a long poll on a queue with ReceiveMessageWaitTimeSeconds 5")
			e.advance(time.Second)
			m, err := p.result()
			e.ok(err, "long poll with the queue's wait time")
			if len(m) != 0 {
				e.t.Fatalf("empty long poll returned %d messages", len(m))
			}
			// The queue's setting also wakes on a send.
			p = e.startPoll(e.ctx, "q", 10, withQueueWait())
			e.sendBody("q", "x")
			if m, err := p.result(); err != nil || len(m) != 1 {
				e.t.Fatalf("long poll with the queue's wait time: %d messages, %s", len(m), describe(err))
			}
		}},
		{"ExplicitZeroDoesNotWait", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrReceiveMessageWaitTimeSeconds: "20"})
			// tryReceive fails the test if the call waits on the fake clock.
			m, err := e.tryReceive("q", 10, withWait(0))
			e.ok(err, "short poll on a queue with ReceiveMessageWaitTimeSeconds 20")
			if len(m) != 0 {
				e.t.Fatalf("short poll on an empty queue returned %d messages", len(m))
			}
		}},
		{"ContextCancellationEndsTheWait", func(e *env) {
			e.create("q", nil)
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			p := e.startPoll(ctx, "q", 10, withWait(20))
			cancel()
			m, err := p.result()
			if len(m) != 0 {
				e.t.Fatalf("cancelled long poll returned %d messages", len(m))
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				e.t.Fatalf("cancelled long poll returned %s, want no error or context.Canceled", describe(err))
			}
			// The cancelled wait must not swallow a later message.
			e.sendBody("q", "after")
			if got := e.receiveOne("q"); got.Body != "after" || got.ApproximateReceiveCount != 1 {
				e.t.Fatalf("after the cancelled poll, receive returned %q with count %d", got.Body, got.ApproximateReceiveCount)
			}
		}},
		{"EachWaiterGetsDifferentMessages", func(e *env) {
			e.create("q", nil)
			p1 := e.startPoll(e.ctx, "q", 10, withWait(20))
			p2 := e.startPoll(e.ctx, "q", 10, withWait(20))
			e.sendBody("q", "one")
			first, rest := firstOf(e, p1, p2)
			m, err := first.msgs, first.err
			e.ok(err, "first long poll")
			if len(m) != 1 || m[0].Body != "one" {
				e.t.Fatalf("first long poll to return got %v, want [one]", bodies(m))
			}
			rest.wantPending("after one message woke one of two waiters")
			e.sendBody("q", "two")
			m, err = rest.result()
			e.ok(err, "second long poll")
			if len(m) != 1 || m[0].Body != "two" {
				e.t.Fatalf("second long poll returned %v, want [two]", bodies(m))
			}
		}},
		{"FIFOWaitReturnsWhenTheGroupUnlocks", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g", "1", "m1")
			e.sendFIFO("f.fifo", "g", "2", "m2")
			m1 := e.receiveOne("f.fifo")
			p := e.startPoll(e.ctx, "f.fifo", 10, withWait(20))
			e.del("f.fifo", m1.ReceiptHandle)
			m, err := p.result()
			e.ok(err, "long poll on a FIFO queue")
			if len(m) != 1 || m[0].Body != "m2" {
				e.t.Fatalf("long poll returned %v after m1 was deleted, want [m2]", bodies(m))
			}
		}},
		{"FIFOWaitReturnsWhenTheGroupIsReleased", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g", "1", "m1")
			m1 := e.receiveOne("f.fifo")
			p := e.startPoll(e.ctx, "f.fifo", 10, withWait(20))
			e.change("f.fifo", m1.ReceiptHandle, 0)
			m, err := p.result()
			e.ok(err, "long poll on a FIFO queue")
			if len(m) != 1 || m[0].Body != "m1" || m[0].ApproximateReceiveCount != 2 {
				e.t.Fatalf("long poll returned %v after m1 was released, want [m1] with count 2", bodies(m))
			}
		}},
	}
}

// firstOf waits for whichever of two polls returns first, and returns its
// result and the other poll.
func firstOf(e *env, a, b *poll) (recvResult, *poll) {
	e.t.Helper()
	select {
	case r := <-a.ch:
		return r, b
	case r := <-b.ch:
		return r, a
	case <-time.After(guard):
		e.t.Fatalf("neither long poll returned within %v of real time", guard)
		return recvResult{}, nil
	}
}
