package pebble_test

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"

	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

// fullDisk fails every write to the file system while it is on, as a full
// disk does.
type fullDisk struct{ on atomic.Bool }

func (d *fullDisk) MaybeError(op errorfs.Op, path string) error {
	if d.on.Load() && op.OpKind() == errorfs.OpKindWrite {
		return fmt.Errorf("%s %s: %w", "injected", path, syscall.ENOSPC)
	}
	return nil
}

func set(t *testing.T, s storage.Store, key string, value []byte) error {
	t.Helper()
	b := s.NewBatch()
	b.Set([]byte(key), value)
	d, err := b.Commit()
	if err != nil {
		return err
	}
	return d.Wait()
}

func keys(t *testing.T, s storage.Store) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	if err := s.Scan([]byte("k"), func(k, v []byte) error { got[string(k)] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestReopenAfterWALFailure: after the WAL fails, commits are refused (and
// none panics, however many follow while the failure is being noticed);
// Reopen fails while the disk does, then succeeds, with every synced batch
// there, and the store takes writes again. A plain Open afterwards (the
// next start) reads it all.
func TestReopenAfterWALFailure(t *testing.T) {
	dir := t.TempDir()
	disk := &fullDisk{}
	s, err := pebble.Open(dir, pebble.Options{FS: errorfs.Wrap(vfs.Default, disk)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := set(t, s, fmt.Sprintf("k%02d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	disk.on.Store(true)
	// Commits that do not wait for each other cross the WAL's 32 KiB
	// blocks while the failure is found: Pebble's log writer would panic
	// on the first one after it saw the error.
	value := bytes.Repeat([]byte{'x'}, 1024)
	var waits []storage.Durable
	refused := false
	for i := 0; i < 1000 && !refused; i++ {
		b := s.NewBatch()
		b.Set(fmt.Appendf(nil, "x%04d", i), value)
		d, err := b.Commit()
		if err != nil {
			refused = true
			break
		}
		waits = append(waits, d)
		if i%50 == 49 { // let the log writer's flush run
			_ = waits[len(waits)-1].Wait()
			waits = waits[:len(waits)-1]
		}
	}
	for _, d := range waits {
		_ = d.Wait()
	}
	if err := set(t, s, "k99", []byte("v")); err == nil {
		t.Fatal("a commit succeeded after the WAL failed")
	}
	for range 2 {
		if err := s.Reopen(); err == nil {
			t.Fatal("Reopen succeeded on a full disk")
		}
	}
	disk.on.Store(false)
	if err := s.Reopen(); err != nil {
		t.Fatal(err)
	}
	got := keys(t, s)
	for i := range 10 {
		if !got[fmt.Sprintf("k%02d", i)] {
			t.Errorf("synced key k%02d lost after Reopen", i)
		}
	}
	if err := set(t, s, "k10", []byte("v")); err != nil {
		t.Fatalf("commit after Reopen: %v", err)
	}
	if st := s.Stats(); st.Fsyncs == 0 || st.SyncedCommits < 11 {
		t.Errorf("stats after Reopen: %+v", st)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = pebble.Open(dir, pebble.Options{})
	if err != nil {
		t.Fatalf("open after recovery: %v", err)
	}
	defer s.Close()
	got = keys(t, s)
	for i := range 11 {
		if !got[fmt.Sprintf("k%02d", i)] {
			t.Errorf("key k%02d lost at the next open", i)
		}
	}
}
