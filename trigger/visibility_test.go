package trigger_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/trigger"
)

func (v *env) setVisibility(queue, seconds string) {
	v.t.Helper()
	if err := v.e.SetQueueAttributes(context.Background(), tidemq.SetQueueAttributesParams{Queue: queue,
		Attributes: map[string]string{tidemq.AttrVisibilityTimeout: seconds}}); err != nil {
		v.t.Fatal(err)
	}
}

func (v *env) status(name string) *trigger.Status {
	v.t.Helper()
	s, err := v.m.Get(name)
	if err != nil {
		v.t.Fatal(err)
	}
	return s
}

// A queue's visibility timeout lowered below the function timeout under a
// running trigger: no message is delivered twice (one received before the
// trigger noticed keeps the visibility it was checked for), the trigger
// pauses and says why, and it resumes once the timeout is raised again.
func TestVisibilityLoweredUnderRunningTrigger(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", map[string]string{"VisibilityTimeout": "120"})
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	var mu sync.Mutex
	deliveries := map[string]int{}
	delivered := func(body string) int {
		mu.Lock()
		defer mu.Unlock()
		return deliveries[body]
	}
	_, url := newTarget(t, func(ev trigger.Event, r *http.Request) (int, any, func(string) bool) {
		mu.Lock()
		for _, rec := range ev.Records {
			deliveries[rec.Body]++
		}
		mu.Unlock()
		select { // hold the batch, as a slow function would
		case <-release:
		case <-r.Context().Done():
		}
		return 200, nil, nil
	})
	t.Cleanup(free) // before the target's server closes
	// Three pollers: while one holds m1, two are free to receive it again.
	v.create(trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: url}, Timeout: 30, BatchSize: 1,
		ScalingConfig: &trigger.ScalingConfig{MaximumConcurrency: 3}})
	if s := v.status("t"); s.State != trigger.StateEnabled {
		t.Fatalf("state %s", s.State)
	}

	v.setVisibility("q", "5")
	v.send("q", "m1")
	// Past the lowered visibility timeout and the pollers' 20 s long polls.
	// Before the fix m1, received for 5 s, came back and went to a second
	// invocation while the first still held it.
	for range 3 {
		v.clk.Advance(21 * time.Second)
		deadline := time.Now().Add(300 * time.Millisecond)
		for time.Now().Before(deadline) {
			if n := delivered("m1"); n > 1 {
				t.Fatalf("m1 was delivered %d times: processed twice while its first invocation still ran", n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	eventually(t, "the pause", func() bool { return v.status("t").State == trigger.StatePaused })
	s := v.status("t")
	if !strings.Contains(s.StateReason, "visibility timeout (5s) is not above the function timeout (30s)") ||
		s.LastError != s.StateReason || s.Stats.Pauses != 1 {
		t.Fatalf("paused trigger: reason %q, last error %q, pauses %d", s.StateReason, s.LastError, s.Stats.Pauses)
	}
	// Paused, it receives nothing.
	v.send("q", "m2")
	time.Sleep(300 * time.Millisecond)
	for _, m := range v.peek("q") {
		if m.Body == "m2" && m.ApproximateReceiveCount != 0 {
			t.Fatalf("a paused trigger received m2")
		}
	}

	free()
	v.setVisibility("q", "120")
	eventually(t, "the resume and both messages done", func() bool {
		return v.status("t").State == trigger.StateEnabled && v.stats("t").MessagesDeleted == 2
	})
	if delivered("m1") != 1 || delivered("m2") != 1 {
		t.Fatalf("deliveries %v, want one each", deliveries)
	}
	if s := v.status("t"); s.Stats.Pauses != 1 || s.StateReason != "" {
		t.Fatalf("after the resume: %+v", s)
	}
}

// Enabling is refused while the queue's visibility timeout is too short;
// disabling is not (a disabled trigger receives nothing), and says why it
// could not be enabled.
func TestDisableWithVisibilityTooShort(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", map[string]string{"VisibilityTimeout": "120"})
	v.create(trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: "http://127.0.0.1:1/"}, Timeout: 30})
	v.setVisibility("q", "10")
	s, err := v.m.SetEnabled(context.Background(), "t", false)
	if err != nil {
		t.Fatalf("disable: %v", err)
	}
	if s.State != trigger.StateDisabled || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "enabling the trigger is refused") {
		t.Fatalf("disabled: %+v", s)
	}
	_, err = v.m.SetEnabled(context.Background(), "t", true)
	var inv *trigger.InvalidConfigError
	if err == nil || !strings.Contains(err.Error(), "must be below the queue's visibility timeout (10s)") || !errors.As(err, &inv) {
		t.Fatalf("enable: %v", err)
	}
}

// countingBroker counts GetQueueAttributes calls.
type countingBroker struct {
	tidemq.Broker
	attrs atomic.Int64
}

func (b *countingBroker) GetQueueAttributes(ctx context.Context, p tidemq.GetQueueAttributesParams) (map[string]string, error) {
	b.attrs.Add(1)
	return b.Broker.GetQueueAttributes(ctx, p)
}

// The pollers of a paused trigger share one read of the queue's
// visibility timeout a second, however many they are.
func TestPausedTriggerReadsTheQueueOnceASecond(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", map[string]string{"VisibilityTimeout": "120"})
	b := &countingBroker{Broker: v.e}
	m, err := trigger.NewManager(trigger.Options{Broker: b, WaitTimeSeconds: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	m.Start()
	if _, err := m.Create(context.Background(), trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: "http://127.0.0.1:1/"},
		Timeout: 30, ScalingConfig: &trigger.ScalingConfig{MaximumConcurrency: 50}}); err != nil {
		t.Fatal(err)
	}
	v.setVisibility("q", "10")
	eventually(t, "the pause", func() bool { s, _ := m.Get("t"); return s.State == trigger.StatePaused })
	time.Sleep(1200 * time.Millisecond) // every poller is asleep in the pause
	before := b.attrs.Load()
	time.Sleep(2 * time.Second)
	if n := b.attrs.Load() - before; n > 8 {
		t.Fatalf("%d reads of the queue's attributes in 2 s by 50 paused pollers", n)
	}
}
