package brokertest

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemq/tidemq"
)

// concurrencyChecks run producers and consumers at the same time (run the
// suite with -race). The clock stands still, so no visibility timeout runs
// out: every message must be received exactly once, and none lost.
func concurrencyChecks() []check {
	return []check{
		{"StandardExactlyOnceWithinVisibility", func(e *env) {
			const producers, consumers, perProducer = 4, 4, 100
			const total = producers * perProducer
			e.create("q", nil)
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				seen     = map[string]int{}
				received atomic.Int64
				stop     = make(chan struct{})
			)
			b, ctx := e.b, e.ctx
			for p := 0; p < producers; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < perProducer; {
						var entries []tidemq.SendEntry
						n := 1 + i%10 // batches of 1 to 10
						for j := 0; j < n && i < perProducer; j++ {
							entries = append(entries, tidemq.SendEntry{ID: fmt.Sprintf("e%d", j), Body: fmt.Sprintf("p%d-%d", p, i)})
							i++
						}
						res, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: entries, Batch: len(entries) > 1, Client: client})
						if err != nil {
							e.t.Errorf("producer %d: SendMessages: %s", p, describe(err))
							return
						}
						for _, r := range res {
							if r.Err != nil {
								e.t.Errorf("producer %d: entry %s: %s", p, r.ID, describe(r.Err))
								return
							}
						}
					}
				}()
			}
			for c := 0; c < consumers; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for received.Load() < total {
						select {
						case <-stop:
							return
						default:
						}
						msgs, err := b.ReceiveMessages(ctx, params("q", 10))
						if err != nil {
							e.t.Errorf("consumer %d: ReceiveMessages: %s", c, describe(err))
							return
						}
						if len(msgs) == 0 {
							runtime.Gosched()
							continue
						}
						var entries []tidemq.DeleteEntry
						mu.Lock()
						for i, m := range msgs {
							seen[m.Body]++
							entries = append(entries, tidemq.DeleteEntry{ID: strconv.Itoa(i), ReceiptHandle: m.ReceiptHandle})
						}
						mu.Unlock()
						received.Add(int64(len(msgs)))
						res, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: entries})
						if err != nil {
							e.t.Errorf("consumer %d: DeleteMessages: %s", c, describe(err))
							return
						}
						for i, r := range res {
							if r != nil {
								e.t.Errorf("consumer %d: delete entry %d: %s", c, i, describe(r))
							}
						}
					}
				}()
			}
			waitGroup(e, &wg, stop, func() string {
				return fmt.Sprintf("received %d of %d messages", received.Load(), total)
			})
			if e.t.Failed() {
				return
			}
			var dups []string
			for body, n := range seen {
				if n > 1 {
					dups = append(dups, fmt.Sprintf("%s×%d", body, n))
				}
			}
			if len(dups) > 0 || len(seen) != total {
				e.t.Fatalf("%d distinct messages received of %d sent; duplicates: %v", len(seen), total, dups)
			}
			e.wantCounts("q", 0, 0, 0, "after the concurrent run")
		}},
		{"FIFOGroupsStayInOrderUnderConcurrentConsumers", func(e *env) {
			const groups, perGroup, consumers = 4, 40, 4
			const total = groups * perGroup
			e.create("f.fifo", nil)
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				order    = map[string][]int{}
				received atomic.Int64
				stop     = make(chan struct{})
			)
			b, ctx := e.b, e.ctx
			for g := 0; g < groups; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					group := fmt.Sprintf("g%d", g)
					for i := 0; i < perGroup; i++ {
						body := fmt.Sprintf("%s:%d", group, i)
						res, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Client: client,
							Entries: []tidemq.SendEntry{{ID: "0", Body: body, MessageGroupID: group, MessageDeduplicationID: body}}})
						if err == nil && len(res) == 1 {
							err = res[0].Err
						}
						if err != nil {
							e.t.Errorf("producer %s: %s", group, describe(err))
							return
						}
					}
				}()
			}
			for c := 0; c < consumers; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for received.Load() < total {
						select {
						case <-stop:
							return
						default:
						}
						msgs, err := b.ReceiveMessages(ctx, params("f.fifo", 1+c%10))
						if err != nil {
							e.t.Errorf("consumer %d: ReceiveMessages: %s", c, describe(err))
							return
						}
						if len(msgs) == 0 {
							runtime.Gosched()
							continue
						}
						// Record before deleting: the group stays locked until
						// the deletes, so the record order is delivery order.
						mu.Lock()
						for _, m := range msgs {
							group, n, _ := strings.Cut(m.Body, ":")
							i, _ := strconv.Atoi(n)
							order[group] = append(order[group], i)
						}
						mu.Unlock()
						received.Add(int64(len(msgs)))
						for _, m := range msgs {
							res, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "f.fifo",
								Entries: []tidemq.DeleteEntry{{ID: "0", ReceiptHandle: m.ReceiptHandle}}})
							if err == nil && len(res) == 1 {
								err = res[0]
							}
							if err != nil {
								e.t.Errorf("consumer %d: DeleteMessage: %s", c, describe(err))
								return
							}
						}
					}
				}()
			}
			waitGroup(e, &wg, stop, func() string {
				return fmt.Sprintf("received %d of %d messages", received.Load(), total)
			})
			if e.t.Failed() {
				return
			}
			for g := 0; g < groups; g++ {
				group := fmt.Sprintf("g%d", g)
				got := order[group]
				ok := len(got) == perGroup
				for i := 0; ok && i < perGroup; i++ {
					ok = got[i] == i
				}
				if !ok {
					e.t.Errorf("group %s delivered in the order %v, want 0..%d once each", group, got, perGroup-1)
				}
			}
			e.wantCounts("f.fifo", 0, 0, 0, "after the concurrent run")
		}},
		{"FIFOMovesIntoAGroupKeepItsOrderUnderConcurrentSends", func(e *env) {
			// Messages moved into a FIFO queue's group (MoveMessages,
			// as a redrive moves them) and sent to it at the same time:
			// the group's sequence numbers follow the order its
			// messages become receivable, so a consumer that deletes
			// each batch before the next receive sees them increase,
			// each producer's in its order. (A move that took its
			// sequence number without the group's lock let a send's
			// later number be served before it.)
			const perSource = 40
			e.create("from.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "true"})
			e.create("into.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "true"})
			for i := 0; i < perSource; i++ {
				e.send("from.fifo", tidemq.SendEntry{Body: fmt.Sprintf("m:%d", i), MessageGroupID: "g"})
			}
			var (
				wg        sync.WaitGroup
				delivered []string
				received  atomic.Int64
				stop      = make(chan struct{})
			)
			b, ctx := e.b, e.ctx
			wg.Add(3)
			go func() {
				defer wg.Done()
				for moved := 0; moved < perSource; {
					select {
					case <-stop:
						return
					default:
					}
					res, err := b.MoveMessages(ctx, tidemq.MoveMessagesParams{Source: "from.fifo", Destination: "into.fifo", Max: 1})
					if err != nil {
						e.t.Errorf("MoveMessages: %s", describe(err))
						return
					}
					moved += res.Moved
					runtime.Gosched()
				}
			}()
			go func() {
				defer wg.Done()
				for i := 0; i < perSource; i++ {
					res, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "into.fifo", Client: client,
						Entries: []tidemq.SendEntry{{ID: "0", Body: fmt.Sprintf("s:%d", i), MessageGroupID: "g"}}})
					if err == nil && len(res) == 1 {
						err = res[0].Err
					}
					if err != nil {
						e.t.Errorf("SendMessages: %s", describe(err))
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				last := ""
				for received.Load() < 2*perSource {
					select {
					case <-stop:
						return
					default:
					}
					msgs, err := b.ReceiveMessages(ctx, params("into.fifo", 10))
					if err != nil {
						e.t.Errorf("ReceiveMessages: %s", describe(err))
						return
					}
					var entries []tidemq.DeleteEntry
					for i, m := range msgs {
						if m.SequenceNumber <= last {
							e.t.Errorf("into.fifo's group g delivered %s (SequenceNumber %s) after SequenceNumber %s", m.Body, m.SequenceNumber, last)
						}
						last = m.SequenceNumber
						delivered = append(delivered, m.Body)
						entries = append(entries, tidemq.DeleteEntry{ID: strconv.Itoa(i), ReceiptHandle: m.ReceiptHandle})
					}
					received.Add(int64(len(msgs)))
					if len(entries) == 0 {
						runtime.Gosched()
						continue
					}
					res, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "into.fifo", Entries: entries})
					for _, r := range res {
						if err == nil {
							err = r
						}
					}
					if err != nil {
						e.t.Errorf("DeleteMessageBatch: %s", describe(err))
						return
					}
				}
			}()
			waitGroup(e, &wg, stop, func() string {
				return fmt.Sprintf("received %d of %d messages", received.Load(), 2*perSource)
			})
			if e.t.Failed() {
				return
			}
			next := map[string]int{}
			for _, body := range delivered {
				src, n, _ := strings.Cut(body, ":")
				if i, _ := strconv.Atoi(n); i != next[src] {
					e.t.Errorf("into.fifo delivered %s where %s:%d was next: %v", body, src, next[src], delivered)
					break
				}
				next[src]++
			}
			e.wantCounts("into.fifo", 0, 0, 0, "after the concurrent run")
		}},
	}
}

// waitGroup waits for wg in real time, bounded by a generous multiple of
// the guard; on timeout it stops the workers and fails with progress.
func waitGroup(e *env, wg *sync.WaitGroup, stop chan struct{}, progress func() string) {
	e.t.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(3 * guard):
		close(stop)
		e.t.Fatalf("concurrent run did not finish within %v of real time: %s (a message was lost or a call hangs)", 3*guard, progress())
	}
}

// limitChecks cover limits that take long to reach; they run only when
// asked for (see SlowEnv).
func limitChecks() []check {
	return []check{
		{"QueueNamePrefixAtMost80", func(e *env) {
			e.create("q", nil)
			res, err := e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{Prefix: strings.Repeat("q", 80)})
			e.ok(err, "ListQueues with an 80-character prefix")
			if len(res.Names) != 0 {
				e.t.Fatalf("an 80-character prefix listed %v", res.Names)
			}
			_, err = e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{Prefix: strings.Repeat("q", 81)})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "ListQueues with an 81-character prefix")
		}},
		{"HugeReceiptHandleNotEchoed", func(e *env) {
			// A 5 MB receipt handle is refused without being echoed back
			// whole (it came back as a 5 MB error).
			e.create("q", nil)
			huge := strings.Repeat("A", 5<<20)
			err := e.tryDelete("q", huge)
			e.wantCode(err, tidemq.ErrReceiptHandleIsInvalid, "delete with a 5 MB handle")
			if err != nil && len(err.Error()) > 2*tidemq.MaxEcho {
				e.t.Fatalf("the error for a 5 MB handle is %d bytes long", len(err.Error()))
			}
		}},
		{"InFlightLimitStandard", func(e *env) {
			slow(e.t)
			e.create("q", nil)
			entries := make([]tidemq.SendEntry, tidemq.MaxBatchEntries)
			for i := range entries {
				entries[i] = tidemq.SendEntry{ID: strconv.Itoa(i), Body: "x"}
			}
			for sent := 0; sent < tidemq.MaxInflightStandard; sent += len(entries) {
				res, err := e.trySendBatch("q", entries...)
				e.ok(err, "SendMessageBatch")
				for _, r := range res {
					e.ok(r.Err, "batch entry")
				}
			}
			e.sendBody("q", "one too many")
			for got := 0; got < tidemq.MaxInflightStandard; {
				m := e.receive("q", 10, withVisibility(tidemq.MaxVisibilityTimeout))
				if len(m) == 0 {
					e.t.Fatalf("receive returned nothing after %d of %d messages", got, tidemq.MaxInflightStandard)
				}
				got += len(m)
			}
			e.wantCounts("q", 1, tidemq.MaxInflightStandard, 0, "at the in-flight limit")
			_, err := e.tryReceive("q", 1)
			e.wantCode(err, tidemq.ErrOverLimit, "ReceiveMessage beyond 120,000 messages in flight")
		}},
	}
}
