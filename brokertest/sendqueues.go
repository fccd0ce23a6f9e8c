package brokertest

import (
	"errors"

	"github.com/tidemq/tidemq"
)

// sendToQueuesChecks cover tidemq.QueuesSender, for the brokers that offer
// it (others skip): each params sent as SendMessages would send it, all in
// one write, or nothing at all. A broker may refuse FIFO targets with
// tidemq.ErrNotTogether (PostgreSQL does), once everything passed the
// checks, and must then have sent nothing; the FIFO checks are made with
// the brokers that take them.
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
			all := []tidemq.SendMessagesParams{one("a", "x"), one("b", "y"), one("a", "z"), fifo("f.fifo", "w", "d1")}
			res, err := qs.SendToQueues(e.ctx, all)
			fifoToo := !errors.Is(err, tidemq.ErrNotTogether)
			if !fifoToo {
				e.wantCounts("a", 0, 0, 0, "after SendToQueues refused a FIFO target")
				e.wantCounts("b", 0, 0, 0, "after SendToQueues refused a FIFO target")
				e.wantCounts("f.fifo", 0, 0, 0, "after SendToQueues refused a FIFO target")
				res, err = qs.SendToQueues(e.ctx, all[:3])
			}
			e.ok(err, "SendToQueues to a, b, a (and f.fifo)")
			if len(res) != 3 && !(fifoToo && len(res) == 4) {
				e.t.Fatalf("SendToQueues returned %d results for %d sends", len(res), len(all))
			}
			for i, r := range res {
				if len(r) != 1 || r[0].ID != "0" || r[0].Err != nil || r[0].MessageID == "" {
					e.t.Fatalf("send %d: results %+v", i, r)
				}
			}
			if fifoToo && res[3][0].SequenceNumber == "" {
				e.t.Fatal("the FIFO send has no SequenceNumber")
			}
			if got := sortedBodies(e.receive("a", 10)); len(got) != 2 || got[0] != "x" || got[1] != "z" {
				e.t.Fatalf("queue a holds %v, want [x z]", got)
			}
			m := e.receiveOne("b")
			if m.Body != "y" || m.SenderID != client.AccessKey {
				e.t.Fatalf("queue b holds %q from %q, want y from %q", m.Body, m.SenderID, client.AccessKey)
			}
			if !fifoToo {
				return
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
			// Nothing was remembered for deduplication either: a send with
			// the refused send's deduplication id is a new message.
			res, err := e.b.SendMessages(e.ctx, fifo("f.fifo", "v", "d"))
			e.ok(err, "SendMessages after the refusals")
			e.wantCounts("f.fifo", 1, 0, 0, "after a send with the refused send's deduplication id")
			if res[0].MessageID == "" || res[0].Err != nil {
				e.t.Fatalf("the send answered %+v", res[0])
			}
			// Refused as a whole too: a standard queue beside a missing one.
			_, err = qs.SendToQueues(e.ctx, []tidemq.SendMessagesParams{one("a", "first"), one("missing", "x")})
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "SendToQueues to a and a missing queue")
			e.wantCounts("a", 0, 0, 0, "after SendToQueues to a and a missing queue")
		}},
	}
}
