package pebble_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

// A checkpoint taken while writers commit holds every batch that was
// durable before it started, opens as a store, and leaves the store
// serving; batches committed meanwhile are all durable in the store.
func TestCheckpointWhileCommitting(t *testing.T) {
	dir := t.TempDir()
	s, err := pebble.Open(filepath.Join(dir, "store"), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var (
		durable sync.Map // key → value, once its Durable reported success
		stop    atomic.Bool
		wg      sync.WaitGroup
		errs    = make(chan error, 4)
		writes  atomic.Int64 // batches made durable
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k, v := fmt.Sprintf("m/%d/%08d", w, i), fmt.Sprintf("body %d %d", w, i)
				b := s.NewBatch()
				b.Set([]byte(k), []byte(v))
				d, err := b.Commit()
				if err == nil {
					err = d.Wait()
				}
				if err != nil {
					errs <- err
					return
				}
				durable.Store(k, v)
				writes.Add(1)
			}
		}()
	}
	for writes.Load() < 400 {
		runtime.Gosched()
	}
	before := map[string]string{}
	durable.Range(func(k, v any) bool { before[k.(string)] = v.(string); return true })
	dest := filepath.Join(dir, "backup")
	if err := s.Checkpoint(dest); err != nil {
		t.Fatal(err)
	}
	after := writes.Load()
	for writes.Load() < after+200 { // the store goes on serving
		runtime.Gosched()
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	cp, err := pebble.Open(dest, pebble.Options{})
	if err != nil {
		t.Fatalf("open the checkpoint: %v", err)
	}
	defer cp.Close()
	got := map[string]string{}
	if err := cp.Scan([]byte("m/"), func(k, v []byte) error { got[string(k)] = string(v); return nil }); err != nil {
		t.Fatal(err)
	}
	for k, v := range before {
		if got[k] != v {
			t.Fatalf("%s was durable before the checkpoint but the copy has %q", k, got[k])
		}
	}
	for k, v := range got {
		if w, ok := durable.Load(k); !ok || w.(string) != v {
			t.Fatalf("the copy has %s=%q, never written so", k, v)
		}
	}
	t.Logf("%d batches durable before the checkpoint, %d in it, %d written in all", len(before), len(got), writes.Load())
	// The store still commits.
	b := s.NewBatch()
	b.Set([]byte("m/after"), []byte("x"))
	if err := storage.CommitSync(b); err != nil {
		t.Fatal(err)
	}
}

// A checkpoint never goes into an existing directory, and leaves it as it
// was; a missing parent is refused.
func TestCheckpointDestination(t *testing.T) {
	dir := t.TempDir()
	s, err := pebble.Open(filepath.Join(dir, "store"), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	existing := filepath.Join(dir, "existing")
	if err := os.Mkdir(existing, 0o700); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(existing, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(existing); err == nil {
		t.Error("checkpoint into an existing directory")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the existing directory was touched: %v", err)
	}
	if err := s.Checkpoint(filepath.Join(dir, "no", "such", "parent")); err == nil {
		t.Error("checkpoint under a missing parent")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(filepath.Join(dir, "closed")); err == nil {
		t.Error("checkpoint of a closed store")
	} else if _, statErr := os.Stat(filepath.Join(dir, "closed")); !errors.Is(statErr, fs.ErrNotExist) {
		t.Errorf("a failed checkpoint left its directory: %v", statErr)
	}
}

// A checkpoint is as private as the store: its directory is 0700 even
// where the umask would make it world-readable (Pebble creates it 0755 and
// copies the WAL 0644), so that a backup into /var/backups or /tmp does not
// hand every message to the machine's other users. While it is written,
// nothing is at the destination: a half-written copy is never there to be
// mistaken for a backup (or read).
func TestCheckpointPrivate(t *testing.T) {
	dir := t.TempDir()
	s, err := pebble.Open(filepath.Join(dir, "store"), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := s.NewBatch()
	b.Set([]byte("k"), []byte("secret body"))
	d, err := b.Commit()
	if err == nil {
		err = d.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(shared, "backup")
	if err := s.Checkpoint(dest); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("checkpoint directory mode %v: others can read the copy", perm)
	}
	entries, err := os.ReadDir(shared)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "backup" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the destination's parent holds %v, want only the backup", names)
	}
	c, err := pebble.Open(dest, pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
}

// A destination whose name is as long as a file system allows (255 bytes)
// is written too: the staging directory beside it has a shorter name.
func TestCheckpointLongName(t *testing.T) {
	dir := t.TempDir()
	s, err := pebble.Open(filepath.Join(dir, "store"), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dest := filepath.Join(dir, strings.Repeat("b", 255))
	if err := s.Checkpoint(dest); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dest, "CURRENT")); err != nil {
		t.Fatal(err)
	}
}
