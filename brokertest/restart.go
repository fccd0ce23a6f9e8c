package brokertest

import (
	"fmt"
	"time"

	"github.com/tidemq/tidemq"
)

// restartChecks close the broker and open its data again (Harness.Reopen)
// and check that nothing a client could observe has changed: "receives are
// state" and "durable before acknowledged" (ARCHITECTURE.md, invariants).
// They are skipped when the harness cannot reopen.
func restartChecks() []check {
	return []check{
		{"RegionalQueuesSurvive", func(e *env) {
			away := tidemq.RegionalQueueName("eu-west-1", Region, "orders")
			e.create("orders", nil)
			e.create(away, map[string]string{tidemq.AttrVisibilityTimeout: "45"})
			e.sendBody(away, "west")
			e.restart()
			e.wantCounts(away, 1, 0, 0, "eu-west-1's orders after a restart")
			e.wantCounts("orders", 0, 0, 0, "the home region's orders after a restart")
			a := e.attrs(away, tidemq.AttrQueueArn, tidemq.AttrVisibilityTimeout)
			if a[tidemq.AttrQueueArn] != tidemq.QueueARN("eu-west-1", AccountID, "orders") || a[tidemq.AttrVisibilityTimeout] != "45" {
				e.t.Fatalf("eu-west-1's orders after a restart: %v", a)
			}
		}},
		{"AccountQueuesSurvive", func(e *env) {
			const partner = "111122223333"
			theirs := tidemq.AccountQueueName(partner, AccountID, "orders")
			e.create("orders", nil)
			e.create(tidemq.AccountQueueName(partner, AccountID, "dlq"), nil)
			e.create(theirs, map[string]string{tidemq.AttrVisibilityTimeout: "45",
				tidemq.AttrRedrivePolicy: fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":2}`, tidemq.QueueARN(Region, partner, "dlq"))})
			e.sendBody(theirs, "partner")
			e.restart()
			e.wantCounts(theirs, 1, 0, 0, "the partner's orders after a restart")
			e.wantCounts("orders", 0, 0, 0, "the home account's orders after a restart")
			a := e.attrs(theirs, tidemq.AttrQueueArn, tidemq.AttrVisibilityTimeout)
			if a[tidemq.AttrQueueArn] != tidemq.QueueARN(Region, partner, "orders") || a[tidemq.AttrVisibilityTimeout] != "45" {
				e.t.Fatalf("the partner's orders after a restart: %v", a)
			}
			res, err := e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{Prefix: partner + ":"})
			e.ok(err, "ListQueues after a restart")
			if got := append([]string(nil), res.Names...); len(got) != 2 {
				e.t.Fatalf("the partner's queues after a restart: %v", got)
			}
			// Its dead-letter queue still takes its moves.
			for i := 0; i < 2; i++ {
				e.receiveOne(theirs, withVisibility(0))
			}
			e.receiveNone(theirs, "after two receives of maxReceiveCount 2")
			e.wantCounts(tidemq.AccountQueueName(partner, AccountID, "dlq"), 1, 0, 0, "the partner's DLQ after the move")
		}},
		{"QueuesAttributesTagsAndPermissionsSurvive", func(e *env) {
			e.create("dlq", map[string]string{tidemq.AttrMessageRetentionPeriod: "1209600"})
			_, err := e.b.CreateQueue(e.ctx, tidemq.CreateQueueParams{Name: "q",
				Attributes: map[string]string{tidemq.AttrVisibilityTimeout: "45", tidemq.AttrRedrivePolicy: e.redrive("dlq", 4)},
				Tags:       map[string]string{"team": "a"}})
			e.ok(err, "CreateQueue(q)")
			e.create("f.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "true", tidemq.AttrDeduplicationScope: "messageGroup"})
			e.create("gone", nil)
			e.ok(e.b.DeleteQueue(e.ctx, tidemq.DeleteQueueParams{Queue: "gone"}), "DeleteQueue(gone)")
			e.ok(e.b.AddPermission(e.ctx, tidemq.AddPermissionParams{Queue: "q", Label: "perm", AccountIDs: []string{"111122223333"},
				Actions: []string{"SendMessage"}}), "AddPermission")
			e.advance(10 * time.Second)
			e.set("q", map[string]string{tidemq.AttrDelaySeconds: "3"})
			e.ok(e.b.TagQueue(e.ctx, tidemq.TagQueueParams{Queue: "q", Tags: map[string]string{"env": "prod"}}), "TagQueue")
			before := map[string]map[string]string{}
			for _, q := range []string{"dlq", "q", "f.fifo"} {
				before[q] = e.attrs(q)
			}
			e.restart()
			for q, want := range before {
				got := e.attrs(q)
				if len(got) != len(want) {
					e.t.Errorf("after restart %s has attributes %v, before %v", q, got, want)
				}
				for k, v := range want {
					if got[k] != v {
						e.t.Errorf("after restart %s: %s = %q, before %q", q, k, got[k], v)
					}
				}
			}
			info, err := e.b.GetQueue(e.ctx, tidemq.GetQueueParams{Name: "f.fifo"})
			e.ok(err, "GetQueue(f.fifo) after restart")
			if !info.FIFO {
				e.t.Error("f.fifo is not FIFO after restart")
			}
			_, err = e.b.GetQueue(e.ctx, tidemq.GetQueueParams{Name: "gone"})
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "GetQueue of a deleted queue after restart")
			wantTags(e, "q", map[string]string{"team": "a", "env": "prod"}, "after restart")
			wantSids(e, "q", []string{"perm"})
			res, err := e.b.ListDeadLetterSourceQueues(e.ctx, tidemq.ListDeadLetterSourceQueuesParams{Queue: "dlq"})
			e.ok(err, "ListDeadLetterSourceQueues after restart")
			if !equalStrings(res.Names, []string{"q"}) {
				e.t.Errorf("ListDeadLetterSourceQueues(dlq) after restart = %v", res.Names)
			}
		}},
		{"MessagesAndReceiveStateSurvive", func(e *env) {
			e.create("q", nil)
			attrs := map[string]tidemq.MessageAttributeValue{"k": {DataType: "Binary", BinaryValue: []byte{0, 9}}}
			sentAt := e.now()
			visible := e.send("q", tidemq.SendEntry{Body: "visible", Attributes: attrs})
			e.receiveOne("q", withVisibility(5)) // "visible", receive count 1
			e.advance(6 * time.Second)
			firstAt := sentAt
			inflight := e.sendBody("q", "inflight")
			e.send("q", tidemq.SendEntry{Body: "delayed", DelaySeconds: intp(100)})
			// Receive both visible ones; keep "inflight" in flight for 60 s and
			// let "visible" go back at once.
			got := e.receive("q", 10, withVisibility(60))
			if len(got) != 2 {
				e.t.Fatalf("received %v, want [visible inflight]", bodies(got))
			}
			for _, m := range got {
				if m.MessageID == visible.MessageID {
					e.change("q", m.ReceiptHandle, 0)
				}
			}
			e.wantCounts("q", 1, 1, 1, "before restart")
			e.restart()
			e.wantCounts("q", 1, 1, 1, "after restart")
			m := e.receiveOne("q", withVisibility(100))
			if m.MessageID != visible.MessageID || m.ApproximateReceiveCount != 3 {
				e.t.Fatalf("after restart received %q with count %d, want visible with count 3", m.Body, m.ApproximateReceiveCount)
			}
			if m.FirstReceiveTimestamp.UnixMilli() != firstAt.UnixMilli() || m.SentTimestamp.UnixMilli() != sentAt.UnixMilli() {
				e.t.Fatalf("after restart FirstReceiveTimestamp %v and SentTimestamp %v, want %v and %v", m.FirstReceiveTimestamp,
					m.SentTimestamp, firstAt, sentAt)
			}
			wantAttributes(e, m.Attributes, attrs, "after restart")
			e.del("q", m.ReceiptHandle)
			// "inflight" was received at T+6 for 60 s.
			e.advance(59 * time.Second) // T+65
			e.receiveNone("q", "after restart, before the in-flight message's deadline")
			e.advance(2 * time.Second) // T+67
			m = e.receiveOne("q")
			if m.MessageID != inflight.MessageID || m.ApproximateReceiveCount != 2 {
				e.t.Fatalf("received %q with count %d, want inflight with count 2", m.Body, m.ApproximateReceiveCount)
			}
			e.del("q", m.ReceiptHandle)
			e.advance(40 * time.Second) // T+107: the delayed one (due T+106) is visible
			if m := e.receiveOne("q"); m.Body != "delayed" || m.ApproximateReceiveCount != 1 {
				e.t.Fatalf("received %q with count %d, want delayed with count 1", m.Body, m.ApproximateReceiveCount)
			}
		}},
		{"DeletesSurvive", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "a")
			e.sendBody("q", "b")
			for _, m := range e.receive("q", 10, withVisibility(1)) {
				if m.Body == "a" {
					e.del("q", m.ReceiptHandle)
				}
			}
			e.restart()
			e.advance(2 * time.Second)
			if got := bodies(e.receive("q", 10)); !equalStrings(got, []string{"b"}) {
				e.t.Fatalf("after restart the queue holds %v, want [b]", got)
			}
		}},
		{"FIFOSequenceNumbersAndDedupSurvive", func(e *env) {
			e.create("f.fifo", nil)
			first := e.sendFIFO("f.fifo", "g", "d1", "one")
			last := e.sendFIFO("f.fifo", "g", "d2", "two")
			for _, m := range e.receive("f.fifo", 10) {
				e.del("f.fifo", m.ReceiptHandle)
			}
			e.wantCounts("f.fifo", 0, 0, 0, "after deleting everything")
			e.restart()
			dup := e.sendFIFO("f.fifo", "g", "d1", "one again")
			if dup.MessageID != first.MessageID {
				e.t.Fatalf("after restart a duplicate within 5 minutes got MessageId %q, want the original %q", dup.MessageID, first.MessageID)
			}
			e.wantCounts("f.fifo", 0, 0, 0, "after a duplicate send following restart")
			next := e.sendFIFO("f.fifo", "g", "d3", "three")
			e.wantIncreasing([]string{first.SequenceNumber, last.SequenceNumber, next.SequenceNumber}, "across a restart")
			e.restart()
			after := e.sendFIFO("f.fifo", "h", "d4", "four")
			e.wantIncreasing([]string{next.SequenceNumber, after.SequenceNumber}, "across a second restart")
			e.advance(tidemq.DedupWindow + 5*time.Second)
			fresh := e.sendFIFO("f.fifo", "g", "d1", "one, later")
			if fresh.MessageID == first.MessageID {
				e.t.Fatal("after restart and the 5-minute window, the dedup id still deduplicates")
			}
		}},
		{"FIFOGroupLockSurvives", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g", "1", "m1")
			e.sendFIFO("f.fifo", "g", "2", "m2")
			e.receiveOne("f.fifo", withVisibility(30))
			e.restart()
			e.receiveNone("f.fifo", "after restart with m1 in flight")
			e.advance(31 * time.Second)
			m := e.receive("f.fifo", 10)
			if !equalStrings(bodies(m), []string{"m1", "m2"}) || m[0].ApproximateReceiveCount != 2 {
				e.t.Fatalf("after m1's deadline received %v, want [m1 (count 2) m2]", bodies(m))
			}
		}},
		{"DeadLettersSurvive", func(e *env) {
			e.create("dlq", nil)
			src := e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.sendBody("src", "x")
			e.receiveOne("src", withVisibility(10))
			e.restart()
			e.advance(11 * time.Second)
			e.receiveNone("src", "after restart, past maxReceiveCount")
			e.restart()
			d := e.receiveOne("dlq")
			if d.ApproximateReceiveCount != 2 || d.DeadLetterQueueSourceARN != src.ARN || !hasHistory(d, tidemq.HistoryDeadLetter) {
				e.t.Fatalf("dead letter after restart: count %d, source %q, history %v", d.ApproximateReceiveCount,
					d.DeadLetterQueueSourceARN, historyKinds(d))
			}
		}},
		{"PurgeSurvives", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			e.ok(e.b.PurgeQueue(e.ctx, tidemq.PurgeQueueParams{Queue: "q"}), "PurgeQueue")
			e.restart()
			e.wantCounts("q", 0, 0, 0, "after purge and restart")
			e.receiveNone("q", "after purge and restart")
		}},
	}
}
