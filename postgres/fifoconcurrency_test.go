package postgres_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/internal/pgtest"
)

// FIFO queues keep their promises under concurrency across nodes: several
// senders per group and receivers on three nodes (each its own pool) all
// at once. A group's messages are received in sequence order and each
// only once the one before it was deleted (a receive never serves a group
// while an earlier message of it is in flight, nor a message twice), each
// sender's messages in the order it sent them, every message exactly
// once, and a deduplication id sent to two groups at once by different
// senders makes one message.
func TestFIFOConcurrentNodesKeepGroupOrder(t *testing.T) {
	const (
		nodes     = 3
		groups    = 4
		senders   = 6 // per group
		perSender = 40
		receivers = 8
		shared    = 30 // deduplication ids sent to two groups each
	)
	ctx := context.Background()
	bs := openNodes(t, nodes)
	if _, err := bs[0].CreateQueue(ctx, tidemq.CreateQueueParams{Name: "c.fifo", Attributes: map[string]string{
		tidemq.AttrFifoQueue: "true", tidemq.AttrVisibilityTimeout: "60"}}); err != nil {
		t.Fatal(err)
	}
	group := func(g int) string { return fmt.Sprintf("g%d", g) }

	var wg sync.WaitGroup
	errs := make(chan error, 100)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	// Senders: sender s of group g sends s's messages in batches of up to
	// 5, each with its own deduplication id, and among them the shared ids
	// it is given.
	for g := 0; g < groups; g++ {
		for s := 0; s < senders; s++ {
			wg.Add(1)
			go func(g, s int) {
				defer wg.Done()
				b := bs[(g+s)%nodes]
				for i := 0; i < perSender; i += 5 {
					var entries []tidemq.SendEntry
					for j := i; j < i+5; j++ {
						body := fmt.Sprintf("%s|%d|%03d", group(g), s, j)
						entries = append(entries, tidemq.SendEntry{ID: fmt.Sprint(j), Body: body, MessageGroupID: group(g), MessageDeduplicationID: body})
					}
					if s == 0 {
						// shared id k goes to groups k%groups and (k+1)%groups
						for k := 0; k < shared; k++ {
							if (k%groups == g || (k+1)%groups == g) && k%(perSender/5) == i/5 {
								entries = append(entries, tidemq.SendEntry{ID: fmt.Sprintf("s%d", k), Body: fmt.Sprintf("shared|%d|%s", k, group(g)),
									MessageGroupID: group(g), MessageDeduplicationID: fmt.Sprintf("shared-%d", k)})
							}
						}
					}
					res, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "c.fifo", Entries: entries, Batch: true})
					if err != nil {
						fail(err)
						return
					}
					for _, r := range res {
						if r.Err != nil {
							fail(r.Err)
							return
						}
					}
				}
			}(g, s)
		}
	}

	// Receivers: each received message is checked against the last one of
	// its group received before (under mu) before it is deleted.
	var mu sync.Mutex
	lastSeq := map[string]string{}  // group -> sequence number of its last message received
	lastOf := map[string]int{}      // group|sender -> its last index received
	seen := map[string]int{}        // body -> times received
	sharedSeen := map[string]bool{} // shared id -> received
	want := groups*senders*perSender + shared
	received := 0
	deadline := time.Now().Add(90 * time.Second)
	for r := 0; r < receivers; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			b := bs[r%nodes]
			for time.Now().Before(deadline) {
				mu.Lock()
				done := received >= want
				mu.Unlock()
				if done {
					return
				}
				ms, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "c.fifo", MaxNumberOfMessages: ptr(10), WaitTimeSeconds: ptr(0)})
				if err != nil {
					fail(err)
					return
				}
				if len(ms) == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				mu.Lock()
				for _, m := range ms {
					g := m.MessageGroupID
					if m.SequenceNumber <= lastSeq[g] {
						fail(fmt.Errorf("group %s: received %s (sequence %s) after sequence %s", g, m.Body, m.SequenceNumber, lastSeq[g]))
					}
					lastSeq[g] = m.SequenceNumber
					seen[m.Body]++
					if seen[m.Body] > 1 {
						fail(fmt.Errorf("%s received %d times", m.Body, seen[m.Body]))
					}
					parts := strings.Split(m.Body, "|")
					if parts[0] == "shared" {
						if sharedSeen[parts[1]] {
							fail(fmt.Errorf("shared id %s sent twice: %s", parts[1], m.Body))
						}
						sharedSeen[parts[1]] = true
					} else {
						j, _ := strconv.Atoi(parts[2])
						k := parts[0] + "|" + parts[1]
						if last, ok := lastOf[k]; (ok && j != last+1) || (!ok && j != 0) {
							fail(fmt.Errorf("sender %s: received %d after %d", k, j, last))
						}
						lastOf[k] = j
					}
					received++
				}
				mu.Unlock()
				var del []tidemq.DeleteEntry
				for i, m := range ms {
					del = append(del, tidemq.DeleteEntry{ID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle})
				}
				res, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "c.fifo", Entries: del})
				if err != nil {
					fail(err)
					return
				}
				for _, e := range res {
					if e != nil {
						fail(e)
						return
					}
				}
			}
		}(r)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if received != want {
		t.Errorf("received %d messages, want %d", received, want)
	}
}

// One deduplication id sent at the same instant to four groups of a queue
// (DeduplicationScope queue) through three nodes makes one message, and
// every send is answered with its id.
func TestFIFOConcurrentDedupAcrossGroups(t *testing.T) {
	const (
		nodes  = 3
		racers = 4
		rounds = 40
	)
	ctx := context.Background()
	bs := openNodes(t, nodes)
	if _, err := bs[0].CreateQueue(ctx, tidemq.CreateQueueParams{Name: "d.fifo", Attributes: map[string]string{tidemq.AttrFifoQueue: "true"}}); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < rounds; k++ {
		start := make(chan struct{})
		ids := make([]string, racers)
		var wg sync.WaitGroup
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				res, err := bs[i%nodes].SendMessages(ctx, tidemq.SendMessagesParams{Queue: "d.fifo", Entries: []tidemq.SendEntry{{
					Body: fmt.Sprintf("%d-%d", k, i), MessageGroupID: fmt.Sprintf("g%d", i), MessageDeduplicationID: fmt.Sprintf("d-%d", k)}}})
				if err != nil || res[0].Err != nil {
					t.Errorf("send: %v %v", err, res)
					return
				}
				ids[i] = res[0].MessageID
			}(i)
		}
		close(start)
		wg.Wait()
		for i := range ids {
			if ids[i] != ids[0] {
				t.Fatalf("round %d: one deduplication id answered with message ids %v", k, ids)
			}
		}
	}
	got := 0
	for {
		ms, err := bs[0].ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "d.fifo", MaxNumberOfMessages: ptr(10), WaitTimeSeconds: ptr(0)})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			break
		}
		got += len(ms)
		var del []tidemq.DeleteEntry
		for i, m := range ms {
			del = append(del, tidemq.DeleteEntry{ID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle})
		}
		if _, err := bs[0].DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "d.fifo", Entries: del}); err != nil {
			t.Fatal(err)
		}
	}
	if got != rounds {
		t.Errorf("%d messages for %d deduplication ids", got, rounds)
	}
}

// openNodes opens n brokers (nodes, each its own pool) on one fresh
// schema, on the system clock.
func openNodes(t *testing.T, n int) []tidemq.Broker {
	dsn, _ := pgtest.Schema(t)
	var bs []tidemq.Broker
	for i := 0; i < n; i++ {
		b := open(t, dsn, tidemq.SystemClock{})
		t.Cleanup(func() { b.Close() })
		bs = append(bs, b)
	}
	return bs
}
