// Package storagetest is the contract every storage.Store must meet, as a
// test suite that storage/mem and storage/pebble (and any later store) run.
package storagetest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/tidemq/tidemq/storage"
)

// Run checks a store. open returns an empty store; reopen, if not nil,
// closes s and opens the same data again.
func Run(t *testing.T, open func(t *testing.T) storage.Store, reopen func(t *testing.T, s storage.Store) storage.Store) {
	t.Run("batch writes and scans in key order", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		b := s.NewBatch()
		if !b.Empty() {
			t.Fatal("new batch not empty")
		}
		for _, k := range []string{"m/3", "m/1", "q/a", "m/2", "n"} {
			b.Set([]byte(k), []byte("v"+k))
		}
		commit(t, b)
		got := scan(t, s, "m/")
		if want := "m/1=vm/1 m/2=vm/2 m/3=vm/3"; got != want {
			t.Fatalf("scan m/ = %q, want %q", got, want)
		}
	})
	t.Run("values written in place read back as set", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		b := s.NewBatch()
		storage.SetValue(b, []byte("v/1"), filled("abc"))
		b.Set([]byte("v/2"), []byte("x"))
		storage.SetValue(b, []byte("v/3"), filled(""))
		storage.SetValue(storage.Prefix(s, "w/").NewBatch(), []byte("never"), filled("uncommitted"))
		under := storage.Prefix(s, "v/").NewBatch()
		storage.SetValue(under, []byte("4"), filled("under a prefix"))
		commit(t, b)
		commit(t, under)
		if got, want := scan(t, s, ""), "v/1=abc v/2=x v/3= v/4=under a prefix"; got != want {
			t.Fatalf("scan = %q, want %q", got, want)
		}
	})
	t.Run("deletes, single deletes and range deletes", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		b := s.NewBatch()
		for i := 0; i < 10; i++ {
			b.Set([]byte(fmt.Sprintf("k/%d", i)), []byte{byte(i)})
		}
		commit(t, b)
		b = s.NewBatch()
		b.Delete([]byte("k/0"))
		b.SingleDelete([]byte("k/1"))
		b.DeleteRange([]byte("k/3"), []byte("k/6"))
		commit(t, b)
		if got, want := scan(t, s, "k/"), "k/2=\x02 k/6=\x06 k/7=\x07 k/8=\x08 k/9=\t"; got != want {
			t.Fatalf("after deletes: %q, want %q", got, want)
		}
	})
	t.Run("range scans visit [start, end) in order and stop on error", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		b := s.NewBatch()
		for _, k := range []string{"r/1", "r/2", "r/3", "r/4", "r0", "q/9"} {
			b.Set([]byte(k), []byte("v"))
		}
		commit(t, b)
		under := storage.Prefix(s, "r")
		for name, st := range map[string]storage.Store{"store": s, "prefixed": under} {
			start, end := "r/2", "r/4"
			if st == under {
				start, end = "/2", "/4"
			}
			var got []string
			stop := fmt.Errorf("stop")
			err := storage.ScanRange(st, []byte(start), []byte(end), func(k, _ []byte) error {
				got = append(got, string(k))
				return nil
			})
			if err != nil || fmt.Sprint(got) != fmt.Sprintf("[%s %s3]", start, start[:len(start)-1]) {
				t.Fatalf("%s: range [%s, %s) = %v, %v", name, start, end, got, err)
			}
			n := 0
			err = storage.ScanRange(st, []byte(start[:len(start)-1]), []byte(end), func(k, _ []byte) error {
				n++
				return stop
			})
			if err != stop || n != 1 {
				t.Fatalf("%s: a scan whose fn fails goes on (%d keys) or loses the error (%v)", name, n, err)
			}
		}
	})
	t.Run("ReadEach reads the keys present, in order", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		b := s.NewBatch()
		for _, k := range []string{"e/1", "e/3", "e/30", "e/5", "e/7"} {
			b.Set([]byte(k), []byte("v"+k[2:]))
		}
		commit(t, b)
		under := storage.Prefix(s, "e")
		for name, st := range map[string]storage.Store{"store": s, "prefixed": under} {
			p := "e/"
			if st == under {
				p = "/"
			}
			var keys [][]byte
			for _, k := range []string{"0", "1", "2", "3", "5", "6"} { // 3 but not 30
				keys = append(keys, []byte(p+k))
			}
			var got []string
			err := storage.ReadEach(st, keys, func(i int, v []byte) error {
				got = append(got, fmt.Sprintf("%d=%s", i, v))
				return nil
			})
			if err != nil || fmt.Sprint(got) != "[1=v1 3=v3 4=v5]" {
				t.Fatalf("%s: ReadEach = %v, %v", name, got, err)
			}
		}
	})
	t.Run("later batches win in commit order", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		b1, b2 := s.NewBatch(), s.NewBatch()
		b1.Set([]byte("x"), []byte("first"))
		b2.Set([]byte("x"), []byte("second"))
		d1, err := b1.Commit()
		if err != nil {
			t.Fatal(err)
		}
		d2, err := b2.Commit()
		if err != nil {
			t.Fatal(err)
		}
		if err := d2.Wait(); err != nil {
			t.Fatal(err)
		}
		if err := d1.Wait(); err != nil {
			t.Fatal(err)
		}
		if got := scan(t, s, "x"); got != "x=second" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("concurrent commits all land", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					b := s.NewBatch()
					b.Set([]byte(fmt.Sprintf("c/%d/%03d", w, i)), []byte("v"))
					d, err := b.Commit()
					if err == nil {
						err = d.Wait()
					}
					if err != nil {
						t.Error(err)
						return
					}
				}
			}(w)
		}
		wg.Wait()
		n := 0
		if err := s.Scan([]byte("c/"), func(k, v []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n != 400 {
			t.Fatalf("%d keys, want 400", n)
		}
	})
	t.Run("Update is a read-modify-write that never loses a change", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		const workers, each = 4, 20
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					errs <- storage.Update(s, "counter", func(tx storage.Txn) error {
						v, _, err := tx.Get([]byte("c/n"))
						if err != nil {
							return err
						}
						n := 0
						if len(v) > 0 {
							fmt.Sscan(string(v), &n)
						}
						tx.Set([]byte("c/n"), []byte(fmt.Sprint(n+1)))
						tx.Set([]byte(fmt.Sprintf("c/log/%04d", n)), nil)
						return nil
					})
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got, want := scan(t, s, "c/n"), fmt.Sprintf("c/n=%d", workers*each); got != want {
			t.Fatalf("after %d concurrent increments: %q, want %q", workers*each, got, want)
		}
		n := 0
		err := storage.Update(s, "counter", func(tx storage.Txn) error {
			return tx.Scan([]byte("c/log/"), func(k, v []byte) error { n++; return nil })
		})
		if err != nil || n != workers*each {
			t.Fatalf("Scan in Update saw %d log keys (%v), want %d", n, err, workers*each)
		}
	})
	t.Run("a failed Update writes nothing", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		boom := fmt.Errorf("refused")
		err := storage.Update(s, "l", func(tx storage.Txn) error {
			tx.Set([]byte("x"), []byte("1"))
			return boom
		})
		if err != boom {
			t.Fatalf("Update returned %v, want fn's error", err)
		}
		if got := scan(t, s, "x"); got != "" {
			t.Fatalf("a failed Update wrote %q", got)
		}
		err = storage.Update(s, "l", func(tx storage.Txn) error {
			if _, ok, err := tx.Get([]byte("x")); ok || err != nil {
				return fmt.Errorf("Get of a missing key: %v %v", ok, err)
			}
			tx.Set([]byte("x"), []byte{})
			tx.Delete([]byte("y"))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = storage.Update(s, "l", func(tx storage.Txn) error {
			if v, ok, err := tx.Get([]byte("x")); !ok || len(v) != 0 || err != nil {
				return fmt.Errorf("Get of an empty value: %q %v %v", v, ok, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("scan stops on error", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		b := s.NewBatch()
		b.Set([]byte("e/1"), nil)
		b.Set([]byte("e/2"), nil)
		commit(t, b)
		stop := fmt.Errorf("stop")
		calls := 0
		err := s.Scan([]byte("e/"), func(k, v []byte) error { calls++; return stop })
		if err != stop || calls != 1 {
			t.Fatalf("err %v after %d calls", err, calls)
		}
	})
	t.Run("a Reopener keeps its data and takes writes", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		r, ok := s.(storage.Reopener)
		if !ok {
			t.Skip("the store does not reopen in place")
		}
		b := s.NewBatch()
		b.Set([]byte("r/1"), []byte("v"))
		commit(t, b)
		for range 2 {
			if err := r.Reopen(); err != nil {
				t.Fatal(err)
			}
		}
		b = s.NewBatch()
		b.Set([]byte("r/2"), []byte("v"))
		commit(t, b)
		if got := scan(t, s, "r/"); got != "r/1=v r/2=v" {
			t.Fatalf("after Reopen: %q", got)
		}
	})
	if reopen == nil {
		return
	}
	t.Run("data survives reopen", func(t *testing.T) {
		s := open(t)
		b := s.NewBatch()
		b.Set([]byte("p/1"), []byte("kept"))
		b.Set([]byte("p/2"), []byte("deleted"))
		commit(t, b)
		b = s.NewBatch()
		b.SingleDelete([]byte("p/2"))
		commit(t, b)
		s = reopen(t, s)
		defer s.Close()
		if got := scan(t, s, "p/"); got != "p/1=kept" {
			t.Fatalf("after reopen: %q", got)
		}
	})
}

func commit(t *testing.T, b storage.Batch) {
	t.Helper()
	d, err := b.Commit()
	if err == nil {
		err = d.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func scan(t *testing.T, s storage.Store, prefix string) string {
	t.Helper()
	var parts [][]byte
	err := s.Scan([]byte(prefix), func(k, v []byte) error {
		parts = append(parts, append(append(append([]byte(nil), k...), '='), v...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.Join(parts, []byte(" ")))
}

// filled is a storage.Value of fixed bytes.
type filled string

func (f filled) Len() int      { return len(f) }
func (f filled) Fill(p []byte) { copy(p, f) }
