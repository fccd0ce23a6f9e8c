package sns

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
)

// slowBroker takes a while over each SendMessages, so that concurrent
// deliveries meet in a lane; it records each call's entries and sender.
type slowBroker struct {
	tidemq.Broker
	mu      sync.Mutex
	calls   []tidemq.SendMessagesParams
	refuse  string // a body the queue refuses (an entry's error)
	inStore int    // calls running now
	maxIn   map[string]int
}

func (b *slowBroker) SendMessages(_ context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	b.mu.Lock()
	b.calls = append(b.calls, p)
	b.inStore++
	if b.maxIn == nil {
		b.maxIn = map[string]int{}
	}
	b.maxIn[p.Queue] = max(b.maxIn[p.Queue], b.inStore)
	b.mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	b.mu.Lock()
	b.inStore--
	b.mu.Unlock()
	res := make([]tidemq.SendResult, len(p.Entries))
	for i, e := range p.Entries {
		res[i] = tidemq.SendResult{ID: e.ID, MessageID: fmt.Sprint(i)}
		if e.Body == b.refuse {
			res[i].Err = tidemq.Errorf(tidemq.ErrInvalidParameterValue, "refused")
		}
	}
	return res, nil
}

// TestLanesBatchConcurrentDeliveries: deliveries made at once to one queue
// go in batches of at most ten, every one exactly once with its own
// result; each batch is one sender's; a caller's deliveries keep their
// order in the queue; an entry the queue refuses fails alone.
func TestLanesBatchConcurrentDeliveries(t *testing.T) {
	b := &slowBroker{refuse: "k0-3"}
	s, err := Open(Options{Broker: b, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const callers, each = 24, 20
	var wg sync.WaitGroup
	errs := make([][]error, callers)
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := tidemq.ClientInfo{AccessKey: fmt.Sprintf("k%d", c%2)}
			for i := range each {
				errs[c] = append(errs[c], s.sendEntry("q", tidemq.SendEntry{Body: fmt.Sprintf("k%d-%d", c, i)}, client))
			}
		}()
	}
	wg.Wait()
	for c := range callers {
		for i, err := range errs[c] {
			if want := c == 0 && i == 3; (err != nil) != want {
				t.Errorf("caller %d delivery %d: %v", c, i, err)
			}
		}
	}
	seen := map[string]int{}
	last := map[int]int{}
	batched := 0
	for _, p := range b.calls {
		if len(p.Entries) > tidemq.MaxBatchEntries {
			t.Errorf("a batch of %d entries", len(p.Entries))
		}
		if len(p.Entries) > 1 {
			batched++
			if !p.Batch {
				t.Errorf("a call of %d entries not sent as a batch", len(p.Entries))
			}
		}
		for _, e := range p.Entries {
			seen[e.Body]++
			var c, i int
			fmt.Sscanf(e.Body, "k%d-%d", &c, &i)
			if want := fmt.Sprintf("k%d", c%2); p.Client.AccessKey != want {
				t.Errorf("%s sent in a batch of sender %s", e.Body, p.Client.AccessKey)
			}
			if prev, ok := last[c]; ok && i <= prev {
				t.Errorf("caller %d: delivery %d after %d", c, i, prev)
			}
			last[c] = i
		}
	}
	if len(seen) != callers*each {
		t.Errorf("%d distinct deliveries, want %d", len(seen), callers*each)
	}
	for body, n := range seen {
		if n != 1 {
			t.Errorf("%s sent %d times", body, n)
		}
	}
	if batched == 0 {
		t.Errorf("no batch among %d calls", len(b.calls))
	}
	if m := b.maxIn["q"]; m > 2*maxLaneBatches {
		t.Errorf("%d calls in the store at once for one queue (two senders, %d each at most)", m, maxLaneBatches)
	}
	// The last leader of a lane may be a goroutine that hands the lane on
	// and outlives the callers by a moment: every lane must be gone soon.
	for deadline := time.Now().Add(5 * time.Second); ; runtime.Gosched() {
		s.lanes.mu.Lock()
		n := len(s.lanes.m)
		if n != 0 && time.Now().After(deadline) {
			for k, l := range s.lanes.m {
				t.Errorf("lane %v left behind: %d leaders, %d waiting", k, l.leaders, len(l.waiting))
			}
		}
		s.lanes.mu.Unlock()
		if n == 0 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("%d deliveries in %d calls", callers*each, len(b.calls))
}
