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
