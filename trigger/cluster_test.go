package trigger_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// followNode is a manager on the shared store st that runs its triggers
// only inside Lead.
func followNode(t *testing.T, v *env, st storage.Store) *trigger.Manager {
	t.Helper()
	m, err := trigger.NewManager(trigger.Options{Broker: v.e, Store: storage.Share(st), Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	return m
}

func invocations(m *trigger.Manager, name string) uint64 {
	for _, s := range m.Stats() {
		if s.Name == name {
			return s.Invocations
		}
	}
	return 0
}

// A trigger created on one node is seen by the other after a reload, runs
// only on the node that leads, and on the other once the first stops
// leading.
func TestClusterTriggerRunsOnTheLeaderOnly(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", nil)
	var calls atomic.Int32
	_, url := newTarget(t, func(trigger.Event, *http.Request) (int, any, func(string) bool) {
		calls.Add(1)
		return 200, nil, nil
	})
	st := mem.New()
	a, b := followNode(t, v, st), followNode(t, v, st)
	if _, err := a.Create(context.Background(), trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: url}, BatchSize: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get("t"); err == nil {
		t.Fatal("b knew the trigger before reloading")
	}
	if err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get("t"); err != nil {
		t.Fatalf("b after a reload: %v", err)
	}
	// Nobody leads: nothing is polled.
	v.send("q", "one")
	time.Sleep(100 * time.Millisecond) // a poll would have happened by now
	if calls.Load() != 0 {
		t.Fatal("a trigger ran on a node that does not lead")
	}
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan struct{})
	go func() { defer close(doneA); a.Lead(ctxA) }()
	eventually(t, "a runs the trigger", func() bool { return calls.Load() == 1 })
	stopA()
	<-doneA
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	go b.Lead(ctxB)
	v.send("q", "two")
	eventually(t, "b runs the trigger", func() bool { return calls.Load() == 2 })
	// The target counts a call as it answers it, the runner once the
	// answer is back (runner.go): wait for b's count before comparing.
	eventually(t, "b counts its invocation", func() bool { return invocations(b, "t") >= 1 })
	if ia, ib := invocations(a, "t"), invocations(b, "t"); ia != 1 || ib != 1 {
		t.Fatalf("invocations: a %d, b %d; want 1 and 1", ia, ib)
	}
	// A change made on the leader's peer reaches the leader at its reload.
	if err := a.Delete("t"); err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get("t"); err == nil {
		t.Fatal("b still has a trigger deleted on a")
	}
	v.send("q", "three")
	time.Sleep(100 * time.Millisecond)
	if calls.Load() != 2 {
		t.Fatal("a deleted trigger still runs on the leader")
	}
}

// A node whose copy of the triggers is stale changes them as the store has
// them: it cannot bring back a trigger another node deleted, create one
// another node created, or drop another node's change of another field.
func TestClusterTriggerChangesAreComputedFromTheStore(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", nil)
	_, url := newTarget(t, func(trigger.Event, *http.Request) (int, any, func(string) bool) { return 200, nil, nil })
	st := mem.New()
	a := followNode(t, v, st)
	ctx := context.Background()
	for _, name := range []string{"deleted", "patched"} {
		if _, err := a.Create(ctx, trigger.Config{Name: name, Queue: "q", Target: trigger.Target{URL: url}, BatchSize: 1}); err != nil {
			t.Fatal(err)
		}
	}
	b := followNode(t, v, st) // loads both; never reloads
	if err := a.Delete("deleted"); err != nil {
		t.Fatal(err)
	}
	var nf *trigger.NotFoundError
	if _, err := b.Update(ctx, "deleted", []byte(`{"BatchSize":2}`)); !errors.As(err, &nf) {
		t.Errorf("Update on B of the trigger deleted on A: %v, want NotFound", err)
	}
	if _, err := b.Get("deleted"); err == nil {
		t.Error("B still lists the trigger it found deleted")
	}
	if _, err := a.Create(ctx, trigger.Config{Name: "new", Queue: "q", Target: trigger.Target{URL: url}, BatchSize: 1}); err != nil {
		t.Fatal(err)
	}
	var ex *trigger.ExistsError
	if _, err := b.Create(ctx, trigger.Config{Name: "new", Queue: "q", Target: trigger.Target{URL: url}, BatchSize: 3}); !errors.As(err, &ex) {
		t.Errorf("Create on B of the name created on A: %v, want ExistsError", err)
	}
	if _, err := a.Update(ctx, "patched", []byte(`{"BatchSize":5}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Update(ctx, "patched", []byte(`{"Timeout":7}`)); err != nil {
		t.Fatal(err)
	}
	cfgs, err := trigger.StoredTriggers(st)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*trigger.Config{}
	for _, c := range cfgs {
		names[c.Name] = c
	}
	if _, ok := names["deleted"]; ok {
		t.Error("the deleted trigger is back in the store")
	}
	if c := names["patched"]; c == nil || c.BatchSize != 5 || c.Timeout != 7 {
		t.Errorf("after A set BatchSize 5 and B Timeout 7 the store has %+v", c)
	}
	if c := names["new"]; c == nil || c.BatchSize != 1 {
		t.Errorf("the trigger created on A is now %+v", c)
	}
}

// With NodeID, a trigger's counters and recent invocations in its Status
// are the cluster's: what A ran shows on B, and after B took over, both
// show the sum.
func TestClusterTriggerCountersShared(t *testing.T) {
	v := newEnv(t, false)
	v.queue("q", nil)
	var calls atomic.Int32
	_, url := newTarget(t, func(trigger.Event, *http.Request) (int, any, func(string) bool) {
		calls.Add(1)
		return 200, nil, nil
	})
	st := mem.New()
	node := func(id string) *trigger.Manager {
		m, err := trigger.NewManager(trigger.Options{Broker: v.e, Store: storage.Share(st), Follow: true, NodeID: id})
		if err != nil {
			t.Fatal(err)
		}
		m.Start()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			m.Close(ctx)
		})
		return m
	}
	a := node("a")
	if _, err := a.Create(context.Background(), trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: url}, BatchSize: 1}); err != nil {
		t.Fatal(err)
	}
	b := node("b")
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan struct{})
	go func() { defer close(doneA); a.Lead(ctxA) }()
	v.send("q", "one")
	v.send("q", "two")
	eventually(t, "a runs the trigger twice", func() bool { return invocations(a, "t") == 2 })
	stopA()
	<-doneA
	if err := trigger.WriteShares(a); err != nil {
		t.Fatal(err)
	}
	got, err := b.Get("t")
	if err != nil {
		t.Fatal(err)
	}
	if got.Stats.Invocations != 2 || got.Stats.MessagesDeleted != 2 || len(got.RecentInvocations) != 2 {
		t.Fatalf("B shows %d invocations, %d deleted, %d recent; want A's 2, 2, 2", got.Stats.Invocations, got.Stats.MessagesDeleted, len(got.RecentInvocations))
	}
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	go b.Lead(ctxB)
	v.send("q", "three")
	eventually(t, "b runs the trigger", func() bool { return invocations(b, "t") == 1 })
	if err := trigger.WriteShares(b); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*trigger.Manager{"a": a, "b": b} {
		s, err := m.Get("t")
		if err != nil {
			t.Fatal(err)
		}
		if s.Stats.Invocations != 3 || len(s.RecentInvocations) != 3 {
			t.Errorf("%s shows %d invocations and %d recent, want 3 and 3", name, s.Stats.Invocations, len(s.RecentInvocations))
		}
		if list := m.List(); len(list) != 1 || list[0].Stats.Invocations != 3 {
			t.Errorf("%s lists %+v, want 3 invocations", name, list)
		}
	}
	if ia := invocations(a, "t"); ia != 2 {
		t.Errorf("A's own counter (for /metrics) is %d, want 2", ia)
	}
	if err := a.Delete("t"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create(context.Background(), trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: url}, BatchSize: 1, Enabled: new(bool)}); err != nil {
		t.Fatal(err)
	}
	if s, err := b.Get("t"); err == nil && s.Stats.Invocations > 1 {
		t.Errorf("the trigger created again shows the old one's %d invocations from A", s.Stats.Invocations)
	}
}
