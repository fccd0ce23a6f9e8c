package brokertest

import (
	"github.com/tidemq/tidemq"
)

// sendToQueuesChecks cover tidemq.QueuesSender, for the brokers that offer
// it (others skip): each params sent as SendMessages would send it, all in
// one write, or nothing at all.
func sendToQueuesChecks() []check {
	one := func(q, body string) tidemq.SendMessagesParams {
		return tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{{ID: "0", Body: body}}, Client: client}
	}
	fifo := func(q, body, dedup string) tidemq.SendMessagesParams {
		p := one(q, body)
		p.Entries[0].MessageGroupID, p.Entries[0].MessageDeduplicationID = "g", dedup
		return p
	}
	sender := func(e *env) tidemq.QueuesSender {
		qs, ok := e.b.(tidemq.QueuesSender)
		if !ok {
			e.t.Skip("the broker cannot send to several queues in one write")
		}
		return qs
	}
	return []check{
		{"SendsAsSendMessage", func(e *env) {
			qs := sender(e)
			e.create("a", nil)
			e.create("b", nil)
			e.create("f.fifo", map[string]string{tidemq.AttrFifoQueue: "true"})
			res, err := qs.SendToQueues(e.ctx, []tidemq.SendMessagesParams{one("a", "x"), one("b", "y"), one("a", "z"), fifo("f.fifo", "w", "d1")})
			e.ok(err, "SendToQueues to a, b, a and f.fifo")
			if len(res) != 4 {
				e.t.Fatalf("SendToQueues returned %d results for 4 sends", len(res))
			}
			for i, r := range res {
				if len(r) != 1 || r[0].ID != "0" || r[0].Err != nil || r[0].MessageID == "" {
					e.t.Fatalf("send %d: results %+v", i, r)
				}
			}
			if res[3][0].SequenceNumber == "" {
				e.t.Fatal("the FIFO send has no SequenceNumber")
			}
			if got := sortedBodies(e.receive("a", 10)); len(got) != 2 || got[0] != "x" || got[1] != "z" {
				e.t.Fatalf("queue a holds %v, want [x z]", got)
			}
			m := e.receiveOne("b")
			if m.Body != "y" || m.SenderID != client.AccessKey {
				e.t.Fatalf("queue b holds %q from %q, want y from %q", m.Body, m.SenderID, client.AccessKey)
			}
			// FIFO deduplication applies as to SendMessage: the original's
			// MessageId and SequenceNumber, nothing new in the queue.
			again, err := qs.SendToQueues(e.ctx, []tidemq.SendMessagesParams{fifo("f.fifo", "w", "d1")})
			e.ok(err, "SendToQueues of a duplicate")
			if again[0][0].MessageID != res[3][0].MessageID || again[0][0].SequenceNumber != res[3][0].SequenceNumber {
				e.t.Fatalf("the duplicate answered %+v, want the original's %+v", again[0][0], res[3][0])
			}
			e.wantCounts("f.fifo", 1, 0, 0, "after the duplicate")
		}},
		{"AllOrNothing", func(e *env) {
			qs := sender(e)
			e.create("a", nil)
			e.create("f.fifo", map[string]string{tidemq.AttrFifoQueue: "true"})
			refused := []struct {
				what string
				p    tidemq.SendMessagesParams
				code *tidemq.ErrorCode
			}{
				{"a missing queue", one("missing", "x"), tidemq.ErrQueueDoesNotExist},
				{"an entry the queue refuses", one("a", "bad\x00"), tidemq.ErrInvalidMessageContents},
				{"a FIFO entry without a group", one("f.fifo", "x"), tidemq.ErrMissingParameter},
			}
			for _, r := range refused {
				_, err := qs.SendToQueues(e.ctx, []tidemq.SendMessagesParams{one("a", "first"), fifo("f.fifo", "v", "d"), r.p})
				e.wantCode(err, r.code, "SendToQueues with %s", r.what)
				e.wantCounts("a", 0, 0, 0, "after SendToQueues with "+r.what)
				e.wantCounts("f.fifo", 0, 0, 0, "after SendToQueues with "+r.what)
			}
			// Nothing was remembered for deduplication either.
			res, err := qs.SendToQueues(e.ctx, []tidemq.SendMessagesParams{fifo("f.fifo", "v", "d")})
			e.ok(err, "SendToQueues after the refusals")
			e.wantCounts("f.fifo", 1, 0, 0, "after a send with the refused send's deduplication id")
			if res[0][0].MessageID == "" {
				e.t.Fatal("no MessageId")
			}
		}},
	}
}
