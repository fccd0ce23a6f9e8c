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
	"github.com/tidemq/tidemq/postgres"
)

// twoNodes opens two brokers on one fresh schema, on the system clock.
func twoNodes(t *testing.T) [2]*postgres.Broker {
	t.Helper()
	dsn, _ := pgtest.Schema(t)
	var nodes [2]*postgres.Broker
	for i := range nodes {
		nodes[i] = open(t, dsn, tidemq.SystemClock{})
		b := nodes[i]
		t.Cleanup(func() { b.Close() })
	}
	return nodes
}

// Consumers on two nodes share one standard queue that producers on both
// fill: every message is received exactly once (SKIP LOCKED across nodes).
func TestNodesShareAStandardQueueExactlyOnce(t *testing.T) {
	nodes := twoNodes(t)
	ctx := context.Background()
	if _, err := nodes[0].CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{tidemq.AttrVisibilityTimeout: "300"}}); err != nil {
		t.Fatal(err)
	}
	const producers, perProducer = 4, 150
	const total = producers * perProducer
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perProducer; i += 10 {
				var entries []tidemq.SendEntry
				for j := 0; j < 10; j++ {
					entries = append(entries, tidemq.SendEntry{ID: strconv.Itoa(j), Body: fmt.Sprintf("p%d-%d", p, i+j)})
				}
				if _, err := nodes[p%2].SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: entries, Batch: true}); err != nil {
					t.Errorf("send: %v", err)
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	seen := map[string]int{}
	deadline := time.Now().Add(60 * time.Second)
	for c := 0; c < 6; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := nodes[c%2]
			for time.Now().Before(deadline) {
				mu.Lock()
				done := len(seen) >= total
				mu.Unlock()
				if done {
					return
				}
				msgs, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: ptr(10), WaitTimeSeconds: ptr(1)})
				if err != nil {
					t.Errorf("receive: %v", err)
					return
				}
				var entries []tidemq.DeleteEntry
				mu.Lock()
				for i, m := range msgs {
					seen[m.Body]++
					entries = append(entries, tidemq.DeleteEntry{ID: strconv.Itoa(i), ReceiptHandle: m.ReceiptHandle})
				}
				mu.Unlock()
				if len(entries) > 0 {
					// Deleted through the other node: handles are shared.
					if _, err := nodes[(c+1)%2].DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: entries, Batch: true}); err != nil {
						t.Errorf("delete: %v", err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != total {
		t.Fatalf("received %d distinct messages, want %d", len(seen), total)
	}
	for body, n := range seen {
		if n != 1 {
			t.Errorf("%s received %d times", body, n)
		}
	}
}

// Consumers on two nodes share a FIFO queue: each group's messages come in
// order, one batch of a group at a time, each exactly once.
func TestNodesShareAFIFOQueueInOrder(t *testing.T) {
	nodes := twoNodes(t)
	ctx := context.Background()
	if _, err := nodes[0].CreateQueue(ctx, tidemq.CreateQueueParams{Name: "f.fifo", Attributes: map[string]string{
		tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true", tidemq.AttrVisibilityTimeout: "300"}}); err != nil {
		t.Fatal(err)
	}
	const groups, perGroup = 5, 40
	for i := 0; i < perGroup; i++ {
		for g := 0; g < groups; g++ {
			_, err := nodes[(i+g)%2].SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Entries: []tidemq.SendEntry{{ID: "0",
				Body: fmt.Sprintf("g%d-%03d", g, i), MessageGroupID: fmt.Sprintf("g%d", g)}}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	next := map[string]int{} // group → the next index expected
	got := 0
	var wg sync.WaitGroup
	deadline := time.Now().Add(60 * time.Second)
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := nodes[c%2]
			for time.Now().Before(deadline) {
				mu.Lock()
				done := got >= groups*perGroup
				mu.Unlock()
				if done {
					return
				}
				msgs, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "f.fifo", MaxNumberOfMessages: ptr(3), WaitTimeSeconds: ptr(1)})
				if err != nil {
					t.Errorf("receive: %v", err)
					return
				}
				var entries []tidemq.DeleteEntry
				mu.Lock()
				for i, m := range msgs {
					g, idx, _ := strings.Cut(m.Body, "-")
					n, _ := strconv.Atoi(idx)
					if n != next[g] {
						t.Errorf("group %s: received %s, want index %d", g, m.Body, next[g])
					}
					next[g] = n + 1
					got++
					entries = append(entries, tidemq.DeleteEntry{ID: strconv.Itoa(i), ReceiptHandle: m.ReceiptHandle})
				}
				mu.Unlock()
				if len(entries) > 0 {
					res, err := nodes[(c+1)%2].DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "f.fifo", Entries: entries, Batch: true})
					if err != nil {
						t.Errorf("delete: %v", err)
						return
					}
					for _, e := range res {
						if e != nil {
							t.Errorf("delete entry: %v", e)
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if got != groups*perGroup {
		t.Fatalf("received %d messages, want %d", got, groups*perGroup)
	}
}

func ptr[T any](v T) *T { return &v }
