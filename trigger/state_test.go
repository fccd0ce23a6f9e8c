package trigger_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/pebble"
	"github.com/tidemq/tidemq/trigger"
)

// openShared opens the Pebble store in dir as `tidemq serve` does: one
// store, the engine on one share of it and the triggers on another. The
// store is closed with the last of the two.
func openShared(t *testing.T, dir string) (*engine.Engine, *trigger.Manager) {
	t.Helper()
	st, err := pebble.Open(dir, pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	shared := storage.Share(st)
	quiet := slog.New(slog.DiscardHandler)
	e, err := engine.Open(engine.Options{Store: shared, SweepInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	m, err := trigger.NewManager(trigger.Options{Broker: e, Store: shared.Share(), WaitTimeSeconds: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return e, m
}

// Created, updated and deleted triggers are found as they were left when
// the store is opened again: the triggers are in the engine's store,
// under trigger.Namespace, secrets included.
func TestTriggersSurviveAReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, m := openShared(t, dir)
	for _, q := range []string{"q", "q2"} {
		if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q, Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
			t.Fatal(err)
		}
	}
	off := false
	for _, c := range []trigger.Config{
		{Name: "kept", Queue: "q", Enabled: &off, Timeout: 1, Target: trigger.Target{URL: "http://bob:pw-1@h/", Headers: map[string]string{"Authorization": "Bearer tok-1", "X-Old": "x"}}},
		{Name: "gone", Queue: "q2", Enabled: &off, Target: trigger.Target{URL: "http://h/gone"}},
		{Name: "plain", Queue: "q2", Enabled: &off, BatchSize: 4, Target: trigger.Target{URL: "http://h/plain"}},
	} {
		if _, err := m.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Update(ctx, "kept", []byte(`{"BatchSize":7,"Target":{"URL":"http://********@h/","Headers":{"Authorization":"********","X-New":"tok-2"}}}`)); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete("gone"); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// Every key of the triggers is in their namespace, beside the engine's.
	st, err := pebble.Open(dir, pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var trg, other int
	err = st.Scan(nil, func(k, _ []byte) error {
		if bytes.HasPrefix(k, []byte(trigger.Namespace)) {
			trg++
		} else {
			other++
		}
		return nil
	})
	if err != nil || trg != 2 || other == 0 {
		t.Errorf("the store holds %d trigger keys (want 2) and %d others (want some): %v", trg, other, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	e, m = openShared(t, dir)
	defer e.Close()
	defer m.Close(ctx)
	l := m.List()
	if len(l) != 2 || l[0].Name != "kept" || l[1].Name != "plain" {
		t.Fatalf("after the reopen: %+v", l)
	}
	if l[0].BatchSize != 7 || l[0].State != "Disabled" || l[1].BatchSize != 4 {
		t.Errorf("settings after the reopen: %+v, %+v", l[0].Config, l[1].Config)
	}
	if l[0].Target.Headers["Authorization"] != trigger.Redacted || l[0].Target.URL != "http://********@h/" {
		t.Errorf("the status shows %+v", l[0].Target)
	}
	// The secrets are kept as they were given, and the manager runs with
	// them: the digest of what it loaded is that of what was given.
	want := trigger.Config{Name: "kept", Target: trigger.Target{URL: "http://bob:pw-1@h/", Headers: map[string]string{"Authorization": "Bearer tok-1", "X-New": "tok-2"}}}
	if l[0].SecretsDigest != trigger.SecretsDigest(&want) {
		t.Errorf("the secrets changed across the reopen")
	}
	// A trigger of the new manager can be changed and deleted as before.
	if _, err := m.SetEnabled(ctx, "plain", true); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete("kept"); err != nil {
		t.Fatal(err)
	}
}

// The values kept are the triggers' Configs, secrets included, each under
// its name.
func TestStoredTriggers(t *testing.T) {
	v := newAdminEnv(t)
	v.call("POST", "/tidemq/triggers", `{"Name":"t","Queue":"q","Timeout":1,"Enabled":false,"Target":{"URL":"http://u:p@h/","Headers":{"A":"s"}}}`, 201)
	cs, err := trigger.StoredTriggers(v.st)
	if err != nil || len(cs) != 1 {
		t.Fatalf("stored: %+v %v", cs, err)
	}
	if c := cs[0]; c.Name != "t" || c.Queue != "q" || c.Timeout != 1 || c.IsEnabled() || c.Target.URL != "http://u:p@h/" || !maps.Equal(c.Target.Headers, map[string]string{"A": "s"}) {
		t.Errorf("stored: %+v", c)
	}
	var keys []string
	_ = v.st.Scan(nil, func(k, _ []byte) error {
		if strings.HasPrefix(string(k), trigger.Namespace) {
			keys = append(keys, string(k))
		}
		return nil
	})
	if len(keys) != 1 || keys[0] != trigger.Namespace+"t/t" {
		t.Errorf("keys %q", keys)
	}
}

// A change the store fails to keep (a full disk) is refused and changes
// nothing: the manager runs and answers what the store holds.
func TestFailedWriteChangesNothing(t *testing.T) {
	ctx := context.Background()
	v := newAdminEnv(t)
	v.call("POST", "/tidemq/triggers", `{"Name":"t","Queue":"q","Timeout":1,"Enabled":false,"Target":{"URL":"http://h/"}}`, 201)
	full := errors.New("no space left on device")
	v.st.Fail(full)
	if _, err := v.m.Create(ctx, trigger.Config{Name: "new", Queue: "q", Timeout: 1, Target: trigger.Target{URL: "http://h/"}}); !errors.Is(err, full) {
		t.Errorf("create: %v", err)
	}
	if _, err := v.m.Get("new"); err == nil {
		t.Errorf("a refused create made the trigger")
	}
	if _, err := v.m.Update(ctx, "t", []byte(`{"BatchSize":3}`)); !errors.Is(err, full) {
		t.Errorf("update: %v", err)
	}
	if err := v.m.Delete("t"); !errors.Is(err, full) {
		t.Errorf("delete: %v", err)
	}
	if s, err := v.m.Get("t"); err != nil || s.BatchSize != 0 {
		t.Errorf("after the refused update and delete: %+v %v", s, err)
	}
	v.st.Fail(nil)
	if err := v.st.Reopen(); err != nil {
		t.Fatal(err)
	}
	if _, err := v.m.Update(ctx, "t", []byte(`{"BatchSize":3}`)); err != nil {
		t.Errorf("update once the disk has room: %v", err)
	}
	if cs, _ := trigger.StoredTriggers(v.st); len(cs) != 1 || cs[0].BatchSize != 3 {
		t.Errorf("stored: %+v", cs)
	}
}

// closeCounter counts the Close calls of a store.
type closeCounter struct {
	storage.Store
	n atomic.Int32
}

func (c *closeCounter) Close() error { c.n.Add(1); return c.Store.Close() }

// The manager closes the store it is given, once, at Close or when
// NewManager fails; after Close it refuses every change.
func TestManagerClosesItsStore(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
		t.Fatal(err)
	}
	st := &closeCounter{Store: mem.New()}
	m, err := trigger.NewManager(trigger.Options{Broker: e, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, trigger.Config{Name: "t", Queue: "q", Timeout: 1, Enabled: new(false), Target: trigger.Target{URL: "http://h/"}}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := m.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := st.n.Load(); n != 1 {
		t.Errorf("the store was closed %d times, want once", n)
	}
	if _, err := m.Update(ctx, "t", []byte(`{"BatchSize":3}`)); err == nil {
		t.Errorf("an update after Close was accepted")
	}
	if err := m.Delete("t"); err == nil {
		t.Errorf("a delete after Close was accepted")
	}
	if cs, _ := trigger.StoredTriggers(st); len(cs) != 1 || cs[0].BatchSize != 0 {
		t.Errorf("stored after Close: %+v", cs)
	}

	// A store holding what is not a trigger fails NewManager, which closes it.
	bad := &closeCounter{Store: mem.New()}
	b := bad.NewBatch()
	b.Set([]byte(trigger.Namespace+"t/x"), []byte("{not json"))
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := trigger.NewManager(trigger.Options{Broker: e, Store: bad}); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("NewManager on a bad store: %v", err)
	}
	if n := bad.n.Load(); n != 1 {
		t.Errorf("a failed NewManager closed its store %d times, want once", n)
	}
}
