package brokertest

import (
	"time"

	"github.com/tidemq/tidemq"
)

// delayChecks cover delivery delay, queue-wide and per message (reference
// §4 DelaySeconds).
func delayChecks() []check {
	return []check{
		{"QueueDelay", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrDelaySeconds: "10"})
			e.sendBody("q", "x")
			e.wantCounts("q", 0, 0, 1, "just sent to a queue with DelaySeconds 10")
			e.receiveNone("q", "just sent to a queue with DelaySeconds 10")
			e.advance(9 * time.Second)
			e.wantCounts("q", 0, 0, 1, "9 s after the send")
			e.receiveNone("q", "9 s after the send")
			e.advance(2 * time.Second)
			e.wantCounts("q", 1, 0, 0, "11 s after the send")
			e.receiveOne("q")
		}},
		{"PerMessageDelayOnStandard", func(e *env) {
			e.create("q", nil)
			e.send("q", tidemq.SendEntry{Body: "late", DelaySeconds: intp(5)})
			e.sendBody("q", "now")
			e.wantCounts("q", 1, 0, 1, "after sending one delayed and one plain message")
			if m := e.receive("q", 10); len(m) != 1 || m[0].Body != "now" {
				e.t.Fatalf("receive returned %v, want only the undelayed message", bodies(m))
			}
			e.advance(4 * time.Second)
			e.receiveNone("q", "4 s after a send with DelaySeconds 5")
			e.advance(2 * time.Second)
			if m := e.receiveOne("q"); m.Body != "late" {
				e.t.Fatalf("6 s later, receive returned %q, want the delayed message", m.Body)
			}
		}},
		{"PerMessageDelayOverridesTheQueue", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrDelaySeconds: "60"})
			e.send("q", tidemq.SendEntry{Body: "zero", DelaySeconds: intp(0)})
			e.send("q", tidemq.SendEntry{Body: "short", DelaySeconds: intp(2)})
			e.sendBody("q", "queue")
			e.wantCounts("q", 1, 0, 2, "after the sends")
			m := e.receive("q", 10)
			if len(m) != 1 || m[0].Body != "zero" {
				e.t.Fatalf("receive returned %v, want only the DelaySeconds 0 message", bodies(m))
			}
			e.del("q", m[0].ReceiptHandle)
			e.advance(3 * time.Second)
			m = e.receive("q", 10)
			if len(m) != 1 || m[0].Body != "short" {
				e.t.Fatalf("3 s later, receive returned %v, want only the DelaySeconds 2 message", bodies(m))
			}
			e.del("q", m[0].ReceiptHandle)
			e.advance(58 * time.Second)
			if m := e.receive("q", 10); len(m) != 1 || m[0].Body != "queue" {
				e.t.Fatalf("61 s later, receive returned %v, want the message with the queue's delay", bodies(m))
			}
		}},
		{"PerMessageDelayRange", func(e *env) {
			e.create("q", nil)
			for _, d := range []int{-1, 901} {
				_, err := e.trySend("q", tidemq.SendEntry{Body: "x", DelaySeconds: intp(d)})
				e.wantCode(err, tidemq.ErrInvalidParameterValue, "DelaySeconds %d", d)
			}
			e.send("q", tidemq.SendEntry{Body: "x", DelaySeconds: intp(900)})
			e.wantCounts("q", 0, 0, 1, "after a send with DelaySeconds 900")
		}},
		{"FIFORejectsPerMessageDelay", func(e *env) {
			e.create("f.fifo", nil)
			_, err := e.trySend("f.fifo", tidemq.SendEntry{Body: "x", MessageGroupID: "g", MessageDeduplicationID: "d1", DelaySeconds: intp(5)})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "FIFO send with DelaySeconds 5")
			e.send("f.fifo", tidemq.SendEntry{Body: "x", MessageGroupID: "g", MessageDeduplicationID: "d2", DelaySeconds: intp(0)})
			e.wantCounts("f.fifo", 1, 0, 0, "after a FIFO send with DelaySeconds 0")
		}},
		{"FIFOQueueDelayApplies", func(e *env) {
			e.create("f.fifo", map[string]string{tidemq.AttrDelaySeconds: "10"})
			e.send("f.fifo", tidemq.SendEntry{Body: "x", MessageGroupID: "g", MessageDeduplicationID: "d", DelaySeconds: intp(0)})
			e.wantCounts("f.fifo", 0, 0, 1, "FIFO send with DelaySeconds 0 to a queue with DelaySeconds 10")
			e.advance(9 * time.Second)
			e.receiveNone("f.fifo", "9 s after the send")
			e.advance(2 * time.Second)
			e.receiveOne("f.fifo")
		}},
	}
}

// counterChecks follow ApproximateNumberOfMessages, ...NotVisible and
// ...Delayed through a message's life: visible + delayed + in flight is
// always what was sent and not deleted.
func counterChecks() []check {
	return []check{
		{"ExactAfterEachStep", func(e *env) {
			e.create("q", nil)
			e.wantCounts("q", 0, 0, 0, "empty queue")
			e.sendBody("q", "a")
			e.sendBody("q", "b")
			e.send("q", tidemq.SendEntry{Body: "c", DelaySeconds: intp(10)})
			e.wantCounts("q", 2, 0, 1, "after two plain sends and one delayed")
			first := e.receiveOne("q", withVisibility(20))
			e.wantCounts("q", 1, 1, 1, "after receiving one")
			e.advance(11 * time.Second)
			e.wantCounts("q", 2, 1, 0, "after the delay ran out")
			e.del("q", first.ReceiptHandle)
			e.wantCounts("q", 2, 0, 0, "after deleting the received one")
			two := e.receive("q", 10, withVisibility(5))
			if len(two) != 2 {
				e.t.Fatalf("received %d messages, want 2", len(two))
			}
			e.wantCounts("q", 0, 2, 0, "after receiving both")
			e.change("q", two[0].ReceiptHandle, 0)
			e.wantCounts("q", 1, 1, 0, "after ChangeMessageVisibility 0 on one")
			e.advance(6 * time.Second)
			e.wantCounts("q", 2, 0, 0, "after the visibility timeout ran out")
			e.sendBody("q", "d")
			e.wantCounts("q", 3, 0, 0, "after one more send")
			for _, m := range e.receive("q", 10) {
				e.del("q", m.ReceiptHandle)
			}
			e.wantCounts("q", 0, 0, 0, "after deleting everything")
		}},
		{"FIFOCountsLockedGroups", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g", "1", "a")
			e.sendFIFO("f.fifo", "g", "2", "b")
			e.receiveOne("f.fifo")
			// b is not in flight and not delayed; SQS counts it as available
			// although its group is locked.
			e.wantCounts("f.fifo", 1, 1, 0, "FIFO queue with one message in flight and one behind it")
		}},
	}
}

// retentionChecks cover MessageRetentionPeriod (reference §4).
func retentionChecks() []check {
	return []check{
		{"MessagesVanishAfterRetention", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrMessageRetentionPeriod: "60"})
			e.sendBody("q", "visible")
			e.sendBody("q", "inflight")
			e.receive("q", 1, withVisibility(600))
			e.advance(30 * time.Second)
			e.sendBody("q", "later")
			e.advance(29 * time.Second) // T+59
			e.wantCounts("q", 2, 1, 0, "59 s after the first sends")
			e.advance(2 * time.Second) // T+61
			e.wantCounts("q", 1, 0, 0, "61 s after the first sends")
			m := e.receive("q", 10, withVisibility(1))
			if len(m) != 1 || m[0].Body != "later" {
				e.t.Fatalf("61 s after the first sends, receive returned %v, want only the later message", bodies(m))
			}
			e.advance(30 * time.Second) // T+91
			e.wantCounts("q", 0, 0, 0, "61 s after the later send")
			e.receiveNone("q", "after every message's retention ran out")
		}},
		{"ShorterRetentionExpiresExistingMessages", func(e *env) {
			// Reference §4: a change may take up to 15 minutes to apply and
			// can expire existing messages.
			e.create("q", nil)
			e.sendBody("q", "old")
			e.advance(100 * time.Second)
			e.set("q", map[string]string{tidemq.AttrMessageRetentionPeriod: "60"})
			e.advance(15 * time.Minute)
			e.wantCounts("q", 0, 0, 0, "15 minutes after shortening the retention below the message's age")
			e.receiveNone("q", "after shortening the retention")
		}},
		{"DelayedMessagesExpireToo", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrMessageRetentionPeriod: "60", tidemq.AttrDelaySeconds: "30"})
			e.sendBody("q", "x")
			e.advance(61 * time.Second)
			e.wantCounts("q", 0, 0, 0, "61 s after sending with a 60 s retention")
			e.receiveNone("q", "after retention")
		}},
	}
}

// purgeChecks cover PurgeQueue (reference §4 and §5).
func purgeChecks() []check {
	return []check{
		{"RemovesVisibleDelayedAndInFlight", func(e *env) {
			e.create("q", nil)
			e.create("other", nil)
			e.sendBody("q", "visible")
			e.sendBody("q", "inflight")
			e.send("q", tidemq.SendEntry{Body: "delayed", DelaySeconds: intp(30)})
			e.sendBody("other", "untouched")
			m := e.receiveOne("q", withVisibility(10))
			e.wantCounts("q", 1, 1, 1, "before the purge")
			e.ok(e.b.PurgeQueue(e.ctx, tidemq.PurgeQueueParams{Queue: "q"}), "PurgeQueue")
			e.wantCounts("q", 0, 0, 0, "after the purge")
			e.advance(61 * time.Second)
			e.wantCounts("q", 0, 0, 0, "61 s after the purge")
			e.receiveNone("q", "61 s after the purge")
			if err := e.tryDelete("q", m.ReceiptHandle); err != nil && !tidemq.HasCode(err, tidemq.ErrReceiptHandleIsInvalid) {
				e.t.Fatalf("deleting a purged message: %s", describe(err))
			}
			e.wantCounts("other", 1, 0, 0, "the other queue")
			// The queue itself is still there and works.
			e.sendBody("q", "after")
			e.receiveOne("q")
		}},
		{"PurgeClearsTheDeduplicationWindow", func(e *env) {
			e.create("f.fifo", nil)
			e.create("cbd.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "true"})
			first := e.sendFIFO("f.fifo", "g", "dedup-1", "before")
			e.sendFIFO("cbd.fifo", "g", "", "same body")
			e.ok(e.b.PurgeQueue(e.ctx, tidemq.PurgeQueueParams{Queue: "f.fifo"}), "PurgeQueue")
			e.ok(e.b.PurgeQueue(e.ctx, tidemq.PurgeQueueParams{Queue: "cbd.fifo"}), "PurgeQueue")
			e.advance(time.Second) // well inside the 5-minute window
			again := e.sendFIFO("f.fifo", "g", "dedup-1", "after")
			if again.MessageID == first.MessageID {
				e.t.Fatal("a send with the dedup id of a purged message was deduplicated: a purge must clear the deduplication window")
			}
			if m := e.receiveOne("f.fifo"); m.Body != "after" {
				e.t.Fatalf("after the purge, received %q, want after", m.Body)
			}
			e.sendFIFO("cbd.fifo", "g", "", "same body")
			e.wantCounts("cbd.fifo", 1, 0, 0, "a content-deduplicated body sent again after the purge")
			// The window opens again with the new send.
			dup := e.sendFIFO("f.fifo", "g", "dedup-1", "duplicate")
			if dup.MessageID != again.MessageID {
				e.t.Fatal("a duplicate of the message sent after the purge was not deduplicated")
			}
		}},
		{"OnePurgePer60Seconds", func(e *env) {
			e.create("q", nil)
			e.create("other", nil)
			e.ok(e.b.PurgeQueue(e.ctx, tidemq.PurgeQueueParams{Queue: "q"}), "first PurgeQueue")
			e.wantCode(e.b.PurgeQueue(e.ctx, tidemq.PurgeQueueParams{Queue: "q"}), tidemq.ErrPurgeQueueInProgress, "second PurgeQueue at once")
			e.ok(e.b.PurgeQueue(e.ctx, tidemq.PurgeQueueParams{Queue: "other"}), "PurgeQueue of another queue")
			e.advance(59 * time.Second)
			e.wantCode(e.b.PurgeQueue(e.ctx, tidemq.PurgeQueueParams{Queue: "q"}), tidemq.ErrPurgeQueueInProgress, "PurgeQueue 59 s after the first")
			e.advance(2 * time.Second)
			e.ok(e.b.PurgeQueue(e.ctx, tidemq.PurgeQueueParams{Queue: "q"}), "PurgeQueue 61 s after the first")
		}},
	}
}
