package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/testlog"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// within runs fn and fails the test if it does not return in time: a call
// blocked on a wedged lock would never return.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

func send(t *testing.T, e *Engine, queue string, bodies ...string) error {
	t.Helper()
	var entries []tidemq.SendEntry
	for i, b := range bodies {
		entries = append(entries, tidemq.SendEntry{ID: fmt.Sprint(i), Body: b})
	}
	var err error
	within(t, "SendMessages", func() {
		_, err = e.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: queue, Entries: entries, Batch: true})
	})
	return err
}

// openLogged opens an engine on store, on a fake clock, logging into the
// returned buffer.
func openLogged(t *testing.T, store storage.Store) (*Engine, *clocktest.Clock, *testlog.Buffer) {
	t.Helper()
	clk, logs := clocktest.New(time.Unix(1_700_000_000, 0)), &testlog.Buffer{}
	e, err := Open(Options{Store: store, Clock: clk, SweepInterval: -1, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, clk, logs
}

// panicStore is a store whose batches panic in Set while armed.
type panicStore struct {
	*mem.Store
	armed atomic.Bool
}

func (s *panicStore) NewBatch() storage.Batch { return panicBatch{s.Store.NewBatch(), s} }

type panicBatch struct {
	storage.Batch
	s *panicStore
}

func (b panicBatch) Set(k, v []byte) {
	if b.s.armed.Load() {
		panic("injected panic in Set")
	}
	b.Batch.Set(k, v)
}

// TestPanicUnderLockDoesNotWedge: an operation that panics while it holds
// the engine lock returns InternalFailure; Healthy reports the failure at
// once instead of blocking, later calls are refused instead of blocking,
// and the engine then reloads its state from the store (memory may have
// been half-changed) and works again.
func TestPanicUnderLockDoesNotWedge(t *testing.T) {
	ctx := context.Background()
	store := &panicStore{Store: mem.New()}
	env := openRecovery(t, store)
	e := env.e
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}))
	if err := send(t, e, "q", "before"); err != nil {
		t.Fatal(err)
	}

	store.armed.Store(true)
	var err error
	within(t, "the panicking send", func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("the panic reached the caller: %v", r)
			}
		}()
		_, err = e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "boom"}}})
	})
	if !tidemq.HasCode(err, tidemq.ErrInternalFailure) {
		t.Fatalf("panicking send: %v", err)
	}
	within(t, "Healthy", func() { err = e.Healthy() })
	if err == nil || !strings.Contains(err.Error(), "injected panic") {
		t.Fatalf("Healthy after a panic = %v", err)
	}
	within(t, "GetQueue", func() { _, err = e.GetQueue(ctx, tidemq.GetQueueParams{Name: "q"}) })
	if !tidemq.HasCode(err, tidemq.ErrInternalFailure) {
		t.Fatalf("GetQueue after a panic: %v", err)
	}
	if err := send(t, e, "q", "refused"); !tidemq.HasCode(err, tidemq.ErrInternalFailure) {
		t.Fatalf("send after a panic: %v", err)
	}
	if logs := env.logs.String(); !strings.Contains(logs, "panic in an operation") || !strings.Contains(logs, "panicBatch.Set") {
		t.Errorf("the panic is not logged with its stack:\n%s", logs)
	}

	store.armed.Store(false)
	if err := env.attempt(t, time.Second); err != nil {
		t.Fatalf("recovery: %v", err)
	}
	if err := e.Healthy(); err != nil {
		t.Fatalf("Healthy after recovery: %v", err)
	}
	// "boom" was added to memory before its batch panicked: the reload
	// dropped it, as it never reached the store.
	if got := bodies(t, e, "q"); strings.Join(got, " ") != "before/0" {
		t.Fatalf("after recovery: %v", got)
	}
	if err := send(t, e, "q", "after"); err != nil {
		t.Fatal(err)
	}
	msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: new(10)})
	if err != nil || len(msgs) != 2 {
		t.Fatalf("receive after recovery: %v %v", msgs, err)
	}
}

// TestPanicWithoutLockFailsNothing: a panic outside the lock answers
// InternalFailure and leaves the engine healthy.
func TestPanicWithoutLockFailsNothing(t *testing.T) {
	e, _, _ := openLogged(t, mem.New())
	h := hold{e: e}
	err := func() (err error) {
		defer h.guard(&err)
		panic("outside the lock")
	}()
	if !tidemq.HasCode(err, tidemq.ErrInternalFailure) {
		t.Fatalf("err = %v", err)
	}
	if err := e.Healthy(); err != nil {
		t.Fatalf("Healthy = %v", err)
	}
}
