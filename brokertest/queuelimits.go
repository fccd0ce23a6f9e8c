package brokertest

import (
	"strconv"
	"strings"
	"sync"

	"github.com/tidemq/tidemq"
)

// The queue limits: AWS's in-flight caps (reference §4: beyond them a
// standard queue's receive gets OverLimit, a FIFO queue's gets no
// messages) and the operator's --max-queue-bytes (a queue whose messages
// add up to the limit refuses sends with RequestThrottled, which SDKs
// retry, while receives and deletes drain it). Every broker keeps them
// alike: a limit that behaves differently on one store is a bug. The
// checks open their broker with small limits (Harness.OpenLimited).

// limited replaces the test's broker with one opened with l, or skips the
// test when the harness cannot open one.
func (e *env) limited(l Limits) {
	e.t.Helper()
	if e.h.OpenLimited == nil {
		e.t.Skip("Harness.OpenLimited is nil: queue limit checks skipped")
	}
	old := e.b
	e.b = nil
	if err := old.Close(); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
	e.b = e.h.OpenLimited(e.t, e.clk, l)
	if e.b == nil {
		e.t.Fatal("Harness.OpenLimited returned nil")
	}
}

// sized is a message of n bytes as SQS counts them (tidemq.MessageSize):
// a body of n-10 bytes and one attribute of 10 ("n", "String", "abc").
func sized(n int, group string) tidemq.SendEntry {
	return tidemq.SendEntry{Body: strings.Repeat("x", n-10), MessageGroupID: group,
		Attributes: map[string]tidemq.MessageAttributeValue{"n": {DataType: "String", StringValue: "abc"}}}
}

func queueLimitChecks() []check {
	return []check{
		{"InflightStandardCap", func(e *env) {
			// At its cap a standard queue's receive is refused with
			// OverLimit, naming the cap; a delete makes room again.
			e.limited(Limits{Inflight: tidemq.InflightLimits{Standard: 3}})
			e.create("q", nil)
			for i := 0; i < 5; i++ {
				e.sendBody("q", "m"+strconv.Itoa(i))
			}
			var held []*tidemq.Message
			for i := 0; i < 3; i++ {
				held = append(held, e.receiveOne("q"))
			}
			e.wantCounts("q", 2, 3, 0, "at the cap")
			_, err := e.tryReceive("q", 1)
			e.wantMessage(err, tidemq.ErrOverLimit, "Too many messages are in flight in queue q: the limit is 3.", "a receive at the cap")
			e.wantCounts("q", 2, 3, 0, "after the refused receive")
			e.del("q", held[0].ReceiptHandle)
			e.receiveOne("q")
			_, err = e.tryReceive("q", 1)
			e.wantCode(err, tidemq.ErrOverLimit, "a receive at the cap again")
			// Messages whose visibility timeout ran out are not in flight.
			e.advance(31e9)
			if got := e.receive("q", 10); len(got) != 4 {
				e.t.Fatalf("after the visibility timeouts: %d messages, want 4", len(got))
			}
		}},
		{"InflightFIFOCap", func(e *env) {
			// At its cap a FIFO queue's receive gets no messages and no
			// error; near it, no more than the room left.
			e.limited(Limits{Inflight: tidemq.InflightLimits{FIFO: 3}})
			e.create("f.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "true"})
			for i := 0; i < 5; i++ {
				e.sendFIFO("f.fifo", "g"+strconv.Itoa(i), "", "m"+strconv.Itoa(i))
			}
			got := e.receive("f.fifo", 10)
			if len(got) != 3 {
				e.t.Fatalf("a receive of 10 under a cap of 3: %d messages", len(got))
			}
			e.receiveNone("f.fifo", "at the cap")
			e.wantCounts("f.fifo", 2, 3, 0, "at the cap")
			e.del("f.fifo", got[0].ReceiptHandle)
			if more := e.receive("f.fifo", 10); len(more) != 1 {
				e.t.Fatalf("after one delete at the cap: %d messages, want 1", len(more))
			}
			e.receiveNone("f.fifo", "at the cap again")
			e.advance(31e9)
			if more := e.receive("f.fifo", 10); len(more) != 3 {
				e.t.Fatalf("after the visibility timeouts: %d messages, want 3", len(more))
			}
		}},
		{"InflightFIFOCapConcurrent", func(e *env) {
			// Receives that arrive together share the room under the cap:
			// however they are gathered or interleaved, together they never
			// take more than it, and what they leave is taken by the next.
			// Half of them carry a ReceiveRequestAttemptId, which a store
			// may serve another way.
			const limit, receivers = 5, 8
			e.limited(Limits{Inflight: tidemq.InflightLimits{FIFO: limit}})
			e.create("f.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "true"})
			for i := 0; i < 40; i++ {
				e.sendFIFO("f.fifo", "g"+strconv.Itoa(i), "", "m"+strconv.Itoa(i))
			}
			var (
				wg    sync.WaitGroup
				mu    sync.Mutex
				taken int
			)
			start := make(chan struct{})
			for i := 0; i < receivers; i++ {
				var opts []recvOpt
				if i%2 == 1 {
					opts = append(opts, withAttempt("a"+strconv.Itoa(i)))
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					msgs, err := e.b.ReceiveMessages(e.ctx, params("f.fifo", 10, opts...))
					if err != nil {
						e.t.Errorf("ReceiveMessages: %s", describe(err))
						return
					}
					mu.Lock()
					taken += len(msgs)
					mu.Unlock()
				}()
			}
			close(start)
			wg.Wait()
			if taken > limit {
				e.t.Fatalf("%d receives of 10 at once under a cap of %d took %d messages", receivers, limit, taken)
			}
			if rest := e.receive("f.fifo", 10); taken+len(rest) != limit {
				e.t.Fatalf("together %d, then %d more: want %d in flight", taken, len(rest), limit)
			}
			e.receiveNone("f.fifo", "at the cap")
			e.wantCounts("f.fifo", 40-limit, limit, 0, "at the cap")
		}},
		{"MaxQueueBytes", func(e *env) {
			// A queue at --max-queue-bytes refuses sends, single and batch,
			// with RequestThrottled (retryable) and changes nothing; the
			// send that reaches the limit is accepted whole; receives and
			// deletes go on, and sends are accepted again once drained.
			e.limited(Limits{MaxQueueBytes: 250})
			for _, q := range []string{"q", "f.fifo"} {
				if strings.HasSuffix(q, ".fifo") {
					e.create(q, map[string]string{tidemq.AttrContentBasedDeduplication: "true"})
				} else {
					e.create(q, nil)
				}
				for i := 0; i < 3; i++ { // 0, 100, 200 bytes before: under 250
					entry := sized(100, "")
					if q == "f.fifo" {
						entry = sized(100, "g")
						entry.Body = strconv.Itoa(i) + entry.Body[1:]
					}
					e.send(q, entry)
				}
				if s := e.snapshot(q); s.Bytes != 300 || s.MaxBytes != 250 {
					e.t.Fatalf("%s: Snapshot's Bytes %d, MaxBytes %d; want 300 and 250", q, s.Bytes, s.MaxBytes)
				}
				entry := sized(100, "")
				if q == "f.fifo" {
					entry = sized(100, "g")
					entry.Body = "z" + entry.Body[1:]
				}
				_, err := e.trySend(q, entry)
				e.wantMessage(err, tidemq.ErrRequestThrottled, "Queue "+q+" holds 300 bytes of messages, at the server's limit of 250 (--max-queue-bytes): sends are refused until consumers drain it; retry later.", "%s: a send to a full queue", q)
				entry.ID = "a"
				_, err = e.trySendBatch(q, entry)
				e.wantCode(err, tidemq.ErrRequestThrottled, "%s: a batch send to a full queue", q)
				e.wantCounts(q, 3, 0, 0, q+": after the refused sends")
				m := e.receiveOne(q)
				e.wantCounts(q, 2, 1, 0, q+": a receive from a full queue")
				e.del(q, m.ReceiptHandle)
				if s := e.snapshot(q); s.Bytes != 200 {
					e.t.Fatalf("%s: Snapshot's Bytes %d after a delete, want 200", q, s.Bytes)
				}
				e.send(q, entry)
				e.wantCounts(q, 3, 0, 0, q+": the send once drained")
			}
		}},
		{"MaxQueueBytesWholeBatch", func(e *env) {
			// The check is per request: a batch to a queue under the
			// limit is accepted whole, even past it (by one request, at
			// most 1 MiB); the next is refused whole.
			e.limited(Limits{MaxQueueBytes: 250})
			e.create("q", nil)
			entries := make([]tidemq.SendEntry, 10)
			for i := range entries {
				entries[i] = sized(100, "")
				entries[i].ID = strconv.Itoa(i)
			}
			res, err := e.trySendBatch("q", entries...)
			e.ok(err, "a batch to an empty queue")
			for i, r := range res {
				e.ok(r.Err, "entry %d of a batch to an empty queue", i)
			}
			_, err = e.trySendBatch("q", entries...)
			e.wantCode(err, tidemq.ErrRequestThrottled, "a batch to a full queue")
			e.wantCounts("q", 10, 0, 0, "after the refused batch")
		}},
		{"MaxQueueBytesConcurrentSendsInOrder", func(e *env) {
			// Sends that arrive together are counted in order, each
			// against the bytes of those before it: of 20 concurrent
			// sends of 100 bytes under a limit of 250, exactly 3 are
			// accepted (PostgreSQL writes them in one group statement).
			e.limited(Limits{MaxQueueBytes: 250})
			e.create("q", nil)
			var wg sync.WaitGroup
			var mu sync.Mutex
			accepted, refused := 0, 0
			b, ctx := e.b, e.ctx
			for i := 0; i < 20; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					entry := sized(100, "")
					entry.ID = "0"
					_, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{entry}, Client: client})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						accepted++
					case tidemq.HasCode(err, tidemq.ErrRequestThrottled):
						refused++
					default:
						e.t.Errorf("send %d: %s", i, describe(err))
					}
				}()
			}
			wg.Wait()
			if accepted != 3 || refused != 17 {
				e.t.Fatalf("20 concurrent sends of 100 bytes under a limit of 250: %d accepted, %d refused; want 3 and 17", accepted, refused)
			}
			e.wantCounts("q", 3, 0, 0, "after the concurrent sends")
		}},
		{"MaxQueueBytesSendToQueues", func(e *env) {
			// A send to several queues (an SNS fan-out) is all or
			// nothing: one full queue refuses it whole.
			e.limited(Limits{MaxQueueBytes: 250})
			e.create("ok", nil)
			e.create("full", nil)
			for i := 0; i < 3; i++ {
				e.send("full", sized(100, ""))
			}
			entry := sized(100, "")
			entry.ID = "0"
			ps := []tidemq.SendMessagesParams{{Queue: "ok", Entries: []tidemq.SendEntry{entry}}, {Queue: "full", Entries: []tidemq.SendEntry{entry}}}
			_, err := tidemq.SendToQueues(e.ctx, e.b, ps)
			if err == tidemq.ErrNoQueuesSender {
				e.t.Skip("the broker has no SendToQueues")
			}
			e.wantCode(err, tidemq.ErrRequestThrottled, "SendToQueues with a full queue")
			e.wantCounts("ok", 0, 0, 0, "the other queue of the refused SendToQueues")
			e.wantCounts("full", 3, 0, 0, "the full queue of the refused SendToQueues")
			_, err = tidemq.SendToQueues(e.ctx, e.b, ps[:1])
			e.ok(err, "SendToQueues to the queue under its limit")
			e.wantCounts("ok", 1, 0, 0, "after SendToQueues")
		}},
		{"MaxQueueBytesInvalidEntries", func(e *env) {
			// The entries' own checks come first: a request to a full
			// queue none of whose entries is valid adds nothing, so it
			// gets its entries' errors; one valid entry makes it a send,
			// refused whole. The same for a send to several queues.
			e.limited(Limits{MaxQueueBytes: 250})
			e.create("q", nil)
			e.create("full", nil)
			for i := 0; i < 3; i++ {
				e.send("full", sized(100, ""))
			}
			bad := tidemq.SendEntry{ID: "bad", Body: "a\x00b"}
			good := sized(100, "")
			good.ID = "good"
			res, err := e.trySendBatch("full", bad)
			e.ok(err, "a batch of invalid entries to a full queue")
			if len(res) != 1 {
				e.t.Fatalf("a batch of one invalid entry: %d results", len(res))
			}
			e.wantCode(res[0].Err, tidemq.ErrInvalidMessageContents, "the invalid entry of a batch to a full queue")
			_, err = e.trySendBatch("full", bad, good)
			e.wantCode(err, tidemq.ErrRequestThrottled, "a batch with one valid entry to a full queue")
			ps := []tidemq.SendMessagesParams{{Queue: "q", Entries: []tidemq.SendEntry{good}}, {Queue: "full", Entries: []tidemq.SendEntry{bad}}}
			_, err = tidemq.SendToQueues(e.ctx, e.b, ps)
			if err != tidemq.ErrNoQueuesSender {
				e.wantCode(err, tidemq.ErrInvalidMessageContents, "SendToQueues with an invalid entry for a full queue")
			}
			e.wantCounts("q", 0, 0, 0, "after the refused sends")
			e.wantCounts("full", 3, 0, 0, "after the refused sends")
		}},
		{"MaxQueueBytesDeadLetterNotRefused", func(e *env) {
			// A dead-letter move is not a send: it goes into a full
			// dead-letter queue (nothing acknowledged is dropped).
			e.limited(Limits{MaxQueueBytes: 250})
			e.create("dlq", nil)
			e.create("q", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			for i := 0; i < 3; i++ {
				e.send("dlq", sized(100, ""))
			}
			e.send("q", sized(100, ""))
			e.receiveOne("q", withVisibility(1))
			e.advance(2e9)
			e.receiveNone("q", "the message over maxReceiveCount")
			e.wantCounts("dlq", 4, 0, 0, "the full dead-letter queue after the move")
			if s := e.snapshot("dlq"); s.Bytes != 400 {
				e.t.Fatalf("dlq: Snapshot's Bytes %d, want 400", s.Bytes)
			}
		}},
	}
}
