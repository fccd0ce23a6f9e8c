package postgres_test

import (
	"context"
	"testing"

	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/storagetest"
)

// KV meets the contract of every storage.Store.
func TestKVStore(t *testing.T) {
	dsns := map[storage.Store]string{}
	openKV := func(t *testing.T, dsn string) storage.Store {
		kv, err := postgres.OpenKV(context.Background(), postgres.Options{DSN: dsn})
		if err != nil {
			t.Fatal(err)
		}
		dsns[kv] = dsn
		return kv
	}
	storagetest.Run(t, func(t *testing.T) storage.Store {
		dsn, _ := pgtest.Schema(t)
		return openKV(t, dsn)
	}, func(t *testing.T, s storage.Store) storage.Store {
		s.Close()
		return openKV(t, dsns[s])
	})
}

// A scan longer than a page reads every key once, in order, and prefixes
// ending in 0xff bytes end where they should.
func TestKVScanPagesAndEdges(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	kv, err := postgres.OpenKV(context.Background(), postgres.Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	b := kv.NewBatch()
	for i := 0; i < 2500; i++ {
		b.Set([]byte{'p', byte(i >> 8), byte(i)}, []byte{1})
	}
	b.Set([]byte{0xff, 0xff, 1}, []byte("edge"))
	b.Set([]byte{'q'}, []byte("after"))
	if err := storage.CommitSync(b); err != nil {
		t.Fatal(err)
	}
	var last []byte
	n := 0
	if err := kv.Scan([]byte("p"), func(k, _ []byte) error {
		if last != nil && string(k) <= string(last) {
			t.Fatalf("key %x after %x", k, last)
		}
		last = append(last[:0], k...)
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2500 {
		t.Fatalf("scan of p read %d keys, want 2500", n)
	}
	var edge []string
	if err := kv.Scan([]byte{0xff, 0xff}, func(k, v []byte) error { edge = append(edge, string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(edge) != 1 || edge[0] != "edge" {
		t.Fatalf("scan of ff ff = %q", edge)
	}
}
