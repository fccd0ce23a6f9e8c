package pebble_test

import (
	"testing"

	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
	"github.com/tidemq/tidemq/storage/storagetest"
)

func TestStoreContract(t *testing.T) {
	dirs := map[storage.Store]string{}
	open := func(t *testing.T, dir string) storage.Store {
		s, err := pebble.Open(dir, pebble.Options{})
		if err != nil {
			t.Fatal(err)
		}
		dirs[s] = dir
		return s
	}
	storagetest.Run(t,
		func(t *testing.T) storage.Store { return open(t, t.TempDir()) },
		func(t *testing.T, s storage.Store) storage.Store {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, dirs[s])
		})
}
