package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

// fullDisk fails every write to the file system while it is on, with
// ENOSPC, as a full disk does. (The engine itself never imports Pebble;
// this test puts a Pebble store on a faulty file system.)
type fullDisk struct{ on atomic.Bool }

func (d *fullDisk) MaybeError(op errorfs.Op, path string) error {
	if d.on.Load() && op.OpKind() == errorfs.OpKindWrite {
		return fmt.Errorf("write %s: %w", path, syscall.ENOSPC)
	}
	return nil
}

// TestRecoversFromFullDiskOnPebble: the disk under a Pebble store fills
// up. The write-ahead log fails (and keeps failing until the database is
// reopened); the engine refuses work, retries, and once the disk has room
// reopens the store and works again, with every acknowledged write there,
// also for the next start of the process.
func TestRecoversFromFullDiskOnPebble(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	disk := &fullDisk{}
	store, err := pebble.Open(dir, pebble.Options{FS: errorfs.Wrap(vfs.Default, disk)})
	if err != nil {
		t.Fatal(err)
	}
	// Shared, as tidemq serve hands it to the engine: the handle must let
	// the engine reopen the store.
	env := openRecovery(t, storage.Share(store))
	e := env.e
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}))
	for i := range 4 {
		if err := send(t, e, "q", fmt.Sprint("a", i), fmt.Sprint("b", i), fmt.Sprint("c", i)); err != nil {
			t.Fatal(err)
		}
	}
	vt := 300
	got, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: new(3), VisibilityTimeout: &vt})
	if err != nil || len(got) != 3 {
		t.Fatal(got, err)
	}
	errs, err := e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ReceiptHandle: got[0].ReceiptHandle}}})
	if err != nil || errs[0] != nil {
		t.Fatal(errs, err)
	}
	before := bodies(t, e, "q")

	disk.on.Store(true)
	if err := send(t, e, "q", "lost"); !tidemq.HasCode(err, tidemq.ErrInternalFailure) {
		t.Fatalf("send on a full disk: %v", err)
	}
	if err := e.Healthy(); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("Healthy = %v", err)
	}
	if err := env.attempt(t, time.Second); err == nil {
		t.Fatal("recovered while the disk is full")
	}
	if err := env.attempt(t, 2*time.Second); err == nil {
		t.Fatal("recovered while the disk is full")
	}
	disk.on.Store(false)
	if err := env.attempt(t, 4*time.Second); err != nil {
		t.Fatalf("recovery: %v", err)
	}
	if err := e.Healthy(); err != nil {
		t.Fatalf("Healthy after recovery: %v", err)
	}
	if after := bodies(t, e, "q"); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("after recovery: %v, before the failure: %v", after, before)
	}
	if err := send(t, e, "q", "new"); err != nil {
		t.Fatalf("send after recovery: %v", err)
	}
	want := bodies(t, e, "q")

	// The next start reads the same.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	store, err = pebble.Open(dir, pebble.Options{})
	if err != nil {
		t.Fatalf("open after recovery: %v", err)
	}
	e2, err := Open(Options{Store: store, Clock: env.clk, SweepInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if got := bodies(t, e2, "q"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("next start: %v, want %v", got, want)
	}
}

// TestRecoversWhenAnotherUserBrokeTheStore: the topic service and the
// triggers share the engine's store. When a write of theirs is the one
// that finds the disk full, the engine, idle meanwhile, must still notice
// (at its next sweep), refuse work, report it in Healthy, and reopen the
// store for every user once the disk has room. Before, /health stayed ok
// and the other user's writes failed until the engine happened to write.
func TestRecoversWhenAnotherUserBrokeTheStore(t *testing.T) {
	ctx := context.Background()
	disk := &fullDisk{}
	store, err := pebble.Open(t.TempDir(), pebble.Options{FS: errorfs.Wrap(vfs.Default, disk)})
	if err != nil {
		t.Fatal(err)
	}
	shared := storage.Share(store)
	other := shared.Share() // the topic service's handle, say
	env := openRecovery(t, shared)
	e := env.e
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}))

	write := func(key string) error {
		b := other.NewBatch()
		b.Set([]byte("sns/"+key), []byte("v"))
		return storage.CommitSync(b)
	}
	disk.on.Store(true)
	if err := write("a"); err == nil {
		t.Fatal("a write on a full disk succeeded")
	}
	if err := e.Healthy(); err != nil {
		t.Fatalf("Healthy before a sweep = %v; the test expects the engine not to have written", err)
	}
	e.Sweep()
	if err := e.Healthy(); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("Healthy after the sweep = %v, want the other user's write error", err)
	}
	if err := send(t, e, "q", "refused"); !tidemq.HasCode(err, tidemq.ErrInternalFailure) {
		t.Fatalf("send while the store is broken: %v", err)
	}
	disk.on.Store(false)
	if err := env.attempt(t, time.Second); err != nil {
		t.Fatalf("recovery: %v", err)
	}
	if err := e.Healthy(); err != nil {
		t.Fatalf("Healthy after recovery: %v", err)
	}
	if err := write("b"); err != nil {
		t.Fatalf("the other user's write after recovery: %v", err)
	}
	if err := send(t, e, "q", "ok"); err != nil {
		t.Fatalf("send after recovery: %v", err)
	}
	other.Close()
}
