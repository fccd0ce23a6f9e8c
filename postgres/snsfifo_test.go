package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
	"github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage"
)

// Two nodes, each with its own pool and KV on one schema (as two
// processes), publish to one FIFO topic at once, in one message group:
// the queue receives the publishes in the order of their sequence
// numbers, and a deduplication id published through both nodes is
// delivered once and answered alike.
func TestFIFOTopicOrderAndDedupAcrossNodesOnPostgres(t *testing.T) {
	ctx := context.Background()
	dsn, _, _ := sharedKV(t)
	broker := open(t, dsn, tidemq.SystemClock{})
	t.Cleanup(func() { broker.Close() })
	if _, err := broker.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		t.Fatal(err)
	}
	info, err := broker.GetQueue(ctx, tidemq.GetQueueParams{Name: "q.fifo"})
	if err != nil {
		t.Fatal(err)
	}
	node := func(name string) *sns.Service {
		pool := pgtest.Pool(t, dsn)
		kv, err := postgres.OpenKV(ctx, postgres.Options{Pool: pool})
		if err != nil {
			t.Fatal(err)
		}
		s, err := sns.Open(sns.Options{Broker: broker, Store: storage.Share(kv), Logger: quiet(), NodeID: name, RecordIDs: postgres.RecordIDs(pool)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a := node("a")
	topic, err := a.CreateTopic(context.Background(), sns.CreateTopicParams{Name: "t.fifo", Attributes: map[string]string{"FifoTopic": "true"}, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Subscribe(context.Background(), sns.SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: info.ARN, Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	b := node("b")

	const each = 15
	var mu sync.Mutex
	seqOf := map[string]string{}        // body -> sequence number
	dupAnswers := map[string][]string{} // dedup id -> the answers' message ids
	var wg sync.WaitGroup
	for _, n := range []struct {
		name string
		s    *sns.Service
	}{{"a", a}, {"b", b}, {"a2", a}, {"b2", b}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				body := fmt.Sprintf("%s-%d", n.name, i)
				dedup := body
				if i%3 == 0 { // published through every publisher: once in the queue
					dedup = fmt.Sprintf("dup-%d", i)
				}
				r, err := n.s.Publish(ctx, sns.PublishParams{TopicARN: topic.ARN, Message: body, MessageGroupID: "g", MessageDeduplicationID: dedup})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seqOf[body] = r.SequenceNumber
				if dedup != body {
					dupAnswers[dedup] = append(dupAnswers[dedup], r.MessageID+"/"+r.SequenceNumber)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for id, answers := range dupAnswers {
		for _, x := range answers[1:] {
			if x != answers[0] {
				t.Errorf("the publishes of %s were answered %v, want one answer", id, answers)
				break
			}
		}
	}
	want := 4*each - 3*len(dupAnswers) // each dup id: 4 publishes, 1 message
	var got []string
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < want && time.Now().Before(deadline) {
		max, wait := 10, 1
		ms, err := broker.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q.fifo", MaxNumberOfMessages: &max, WaitTimeSeconds: &wait})
		if err != nil {
			t.Fatal(err)
		}
		var del []tidemq.DeleteEntry
		for _, m := range ms {
			got = append(got, m.Body)
			del = append(del, tidemq.DeleteEntry{ID: fmt.Sprint(len(del)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(del) > 0 {
			if _, err := broker.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q.fifo", Entries: del, Batch: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != want {
		t.Fatalf("the queue got %d messages, want %d", len(got), want)
	}
	for i := 1; i < len(got); i++ {
		if seqOf[got[i]] <= seqOf[got[i-1]] {
			t.Fatalf("the queue got %s (sequence %s) after %s (sequence %s)", got[i], seqOf[got[i]], got[i-1], seqOf[got[i-1]])
		}
	}
}
