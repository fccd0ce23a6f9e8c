package mem_test

import (
	"testing"

	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/storagetest"
)

func TestStoreContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return mem.New() },
		func(t *testing.T, s storage.Store) storage.Store { return s }) // "reopen" keeps the same memory
}
