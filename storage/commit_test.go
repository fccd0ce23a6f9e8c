package storage_test

import (
	"testing"

	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

func TestCommitSyncAndHas(t *testing.T) {
	st := mem.New()
	defer st.Close()
	if err := storage.CommitSync(st.NewBatch()); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
	b := st.NewBatch()
	b.Set([]byte("importedX"), []byte("1"))
	if err := storage.CommitSync(b); err != nil {
		t.Fatal(err)
	}
	if ok, err := storage.Has(st, []byte("imported")); err != nil || ok {
		t.Errorf("Has(imported) with only importedX = %v, %v; want false", ok, err)
	}
	b = st.NewBatch()
	b.Set([]byte("imported"), nil)
	if err := storage.CommitSync(b); err != nil {
		t.Fatal(err)
	}
	if ok, err := storage.Has(st, []byte("imported")); err != nil || !ok {
		t.Errorf("Has(imported) = %v, %v; want true", ok, err)
	}
}
