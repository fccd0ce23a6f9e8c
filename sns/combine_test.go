package sns

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// gatedBroker holds its first held SendToQueues calls until release is
// closed, and counts the calls and the deliveries each carried.
type gatedBroker struct {
	tidemq.Broker
	held    int
	entered chan struct{} // one value per held call that reached the gate
	release chan struct{} // one value lets one held call go on
	calls   atomic.Int64
	mu      sync.Mutex
	sizes   []int
}

func (b *gatedBroker) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	if int(b.calls.Add(1)) <= b.held {
		b.entered <- struct{}{}
		<-b.release
	}
	b.mu.Lock()
	b.sizes = append(b.sizes, len(ps))
	b.mu.Unlock()
	return tidemq.SendToQueues(ctx, b.Broker, ps)
}

// waitingWrites is how many writes wait in s's combiner.
func waitingWrites(s *Service) int {
	s.combiner.mu.Lock()
	defer s.combiner.mu.Unlock()
	return len(s.combiner.waiting)
}

// TestConcurrentFanOutsCombined: while maxCombinedWrites fan-out writes are
// in the broker, further fan-outs wait and then go in one write together,
// each queue getting every publish exactly once. A publish of that group
// that a queue refuses (its queue is gone) does not take the others with
// it: they are written again alone and delivered once; it takes the
// recorded path and reaches its remaining queue.
func TestConcurrentFanOutsCombined(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for _, q := range []string{"a1", "a2", "b1", "b2"} {
		if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q}); err != nil {
			t.Fatal(err)
		}
	}
	gate := &gatedBroker{Broker: eng, held: maxCombinedWrites, entered: make(chan struct{}, maxCombinedWrites), release: make(chan struct{})}
	s, err := Open(Options{Broker: gate, Store: mem.New(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topics := map[string]string{}
	for _, name := range []string{"a", "b"} {
		topic, err := s.CreateTopic(ctx, CreateTopicParams{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		topics[name] = topic.ARN
		for _, q := range []string{name + "1", name + "2"} {
			if _, err := s.Subscribe(ctx, SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + q}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// b2 goes away: a publish to b is refused as one write.
	if err := eng.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "b2"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	publish := func(topic, msg string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Publish(ctx, PublishParams{TopicARN: topics[topic], Message: msg}); err != nil {
				t.Error(err)
			}
		}()
	}
	for i := range maxCombinedWrites {
		publish("a", fmt.Sprint("held-", i))
		<-gate.entered
	}
	const waiting = 5
	for i := range waiting {
		publish("a", fmt.Sprint("combined-", i))
	}
	publish("b", "refused")
	// Until every later publish waits for a turn, then until the first
	// held write's turn has passed to them and they left the queue as
	// one group; then the second held write goes on.
	until := func(what string, cond func() bool) {
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				close(gate.release) // let the held writes go, so that Close returns
				t.Fatalf("never: %s (SendToQueues sizes %v)", what, gate.sizes)
			}
			runtime.Gosched()
		}
	}
	until("the later publishes wait for a turn", func() bool { return waitingWrites(s) == waiting+1 })
	gate.release <- struct{}{}
	until("they leave the queue", func() bool { return waitingWrites(s) == 0 })
	gate.release <- struct{}{}
	wg.Wait()

	// The held writes, the combined one (refused: b2 is gone), then each
	// of its publishes alone.
	if got, want := gate.calls.Load(), int64(maxCombinedWrites+1+waiting+1); got != want {
		t.Fatalf("%d SendToQueues calls, want %d (sizes %v)", got, want, gate.sizes)
	}
	combined := 0
	for _, n := range gate.sizes {
		if n == 2*(waiting+1) {
			combined++
		} else if n != 2 {
			t.Fatalf("a write of %d deliveries (sizes %v)", n, gate.sizes)
		}
	}
	if combined != 1 {
		t.Fatalf("%d writes of the %d waiting publishes' deliveries, want 1 (sizes %v)", combined, waiting+1, gate.sizes)
	}
	ten := 10
	for _, q := range []string{"a1", "a2", "b1"} {
		seen := map[string]int{}
		for {
			msgs, err := eng.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: q, MaxNumberOfMessages: &ten})
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) == 0 {
				break
			}
			for _, m := range msgs {
				seen[notificationMessage(t, m.Body)]++
			}
		}
		want := maxCombinedWrites + waiting
		if q == "b1" {
			want = 1
		}
		if len(seen) != want {
			t.Fatalf("queue %s got %d publishes, want %d: %v", q, len(seen), want, seen)
		}
		for msg, n := range seen {
			if n != 1 {
				t.Fatalf("queue %s got %q %d times", q, msg, n)
			}
		}
	}
}

// notificationMessage returns the Message of the SNS envelope body.
func notificationMessage(t *testing.T, body string) string {
	t.Helper()
	var env struct{ Message string }
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("not an envelope: %s", body)
	}
	return env.Message
}
