package storage_test

import (
	"strings"
	"testing"

	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/storagetest"
)

// A prefixed store meets the contract of a store.
func TestPrefixContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return storage.Prefix(mem.New(), "ns/") },
		func(t *testing.T, s storage.Store) storage.Store { return s })
}

// A prefixed store sees and writes its namespace only, under its prefix.
func TestPrefixKeepsToItsNamespace(t *testing.T) {
	under := mem.New()
	commit := func(b storage.Batch) {
		t.Helper()
		d, err := b.Commit()
		if err == nil {
			err = d.Wait()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	b := under.NewBatch()
	for _, k := range []string{"m/1", "n", "nt", "ns", "ns/a", "ns/b", "nt/a", "s/1"} {
		b.Set([]byte(k), []byte("outer"))
	}
	commit(b)
	ns := storage.Prefix(under, "ns/")
	b = ns.NewBatch()
	b.Set([]byte("c"), []byte("inner"))
	b.Delete([]byte("a"))
	commit(b)
	var seen []string
	if err := ns.Scan(nil, func(k, v []byte) error { seen = append(seen, string(k)+"="+string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(seen, " "), "b=outer c=inner"; got != want {
		t.Fatalf("the namespace holds %q, want %q", got, want)
	}
	b = ns.NewBatch()
	b.DeleteRange([]byte("b"), nil) // to the end of the namespace
	commit(b)
	var all []string
	if err := under.Scan(nil, func(k, _ []byte) error { all = append(all, string(k)); return nil }); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(all, " "), "m/1 n ns nt nt/a s/1"; got != want {
		t.Fatalf("the store holds %q, want %q", got, want)
	}
}
