package mem_test

import (
	"errors"
	"testing"

	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/storagetest"
)

func TestStoreContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return mem.New() },
		func(t *testing.T, s storage.Store) storage.Store { return s }) // "reopen" keeps the same memory
}

// TestFailBreaksUntilReopen: a failed commit leaves the store broken, as
// Pebble's WAL is, until a Reopen after the fault is gone.
func TestFailBreaksUntilReopen(t *testing.T) {
	s := mem.New()
	set := func(k string) error {
		b := s.NewBatch()
		b.Set([]byte(k), []byte("v"))
		d, err := b.Commit()
		if err != nil {
			return err
		}
		return d.Wait()
	}
	full := errors.New("disk full")
	s.Fail(full)
	if err := set("a"); !errors.Is(err, full) {
		t.Fatalf("commit on a full disk: %v", err)
	}
	if err := s.Reopen(); !errors.Is(err, full) {
		t.Fatalf("Reopen on a full disk: %v", err)
	}
	s.Fail(nil)
	if err := set("b"); !errors.Is(err, full) {
		t.Fatalf("commit before Reopen: %v", err)
	}
	if err := s.Reopen(); err != nil {
		t.Fatal(err)
	}
	if err := set("c"); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1 {
		t.Fatalf("%d keys, want only the one committed after Reopen", s.Len())
	}
}
