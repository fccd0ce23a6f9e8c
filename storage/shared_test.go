package storage_test

import (
	"testing"

	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// closeCounter counts the Closes of a store.
type closeCounter struct {
	storage.Store
	closes int
}

func (c *closeCounter) Close() error { c.closes++; return nil }

// The store closes with the last handle, in whatever order the handles
// close, and a handle closed twice counts once.
func TestSharedClosesWithTheLastHandle(t *testing.T) {
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 1, 0, 2}} {
		under := &closeCounter{Store: mem.New()}
		first := storage.Share(under)
		handles := []*storage.Shared{first, first.Share(), first.Share()}
		for i, h := range order {
			if under.closes != 0 {
				t.Fatalf("order %v: the store closed before handle %d of the order closed", order, i)
			}
			if err := handles[h].Close(); err != nil {
				t.Fatal(err)
			}
		}
		if under.closes != 1 {
			t.Fatalf("order %v: the store closed %d times, want 1", order, under.closes)
		}
	}
}
