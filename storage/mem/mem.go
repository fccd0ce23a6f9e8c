// Package mem is a storage.Store kept in memory: for tests and for
// `tidemq serve --in-memory`, the one mode in which acknowledged writes do
// not survive the process.
package mem

import (
	"bytes"
	"sort"
	"sync"

	"github.com/tidemq/tidemq/storage"
)

// Store is an in-memory storage.Store. It is safe for concurrent use.
type Store struct {
	mu   sync.Mutex
	data map[string][]byte
}

// New returns an empty store.
func New() *Store { return &Store{data: make(map[string][]byte)} }

// NewBatch starts a batch.
func (s *Store) NewBatch() storage.Batch { return &batch{s: s} }

// Scan visits keys with the prefix in order.
func (s *Store) Scan(prefix []byte, fn func(key, value []byte) error) error {
	s.mu.Lock()
	keys := make([]string, 0)
	for k := range s.data {
		if bytes.HasPrefix([]byte(k), prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	vals := make([][]byte, len(keys))
	for i, k := range keys {
		vals[i] = s.data[k]
	}
	s.mu.Unlock()
	for i, k := range keys {
		if err := fn([]byte(k), vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// Len reports how many keys the store holds (for tests).
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.data)
}

// Close does nothing.
func (s *Store) Close() error { return nil }

type op struct {
	kind       byte // 's' set, 'd' delete, 'r' range delete
	key, value []byte
}

type batch struct {
	s   *Store
	ops []op
}

func (b *batch) Set(k, v []byte) {
	b.ops = append(b.ops, op{'s', bytes.Clone(k), bytes.Clone(v)})
}
func (b *batch) Delete(k []byte)       { b.ops = append(b.ops, op{'d', bytes.Clone(k), nil}) }
func (b *batch) SingleDelete(k []byte) { b.Delete(k) }
func (b *batch) DeleteRange(start, end []byte) {
	b.ops = append(b.ops, op{'r', bytes.Clone(start), bytes.Clone(end)})
}
func (b *batch) Empty() bool { return len(b.ops) == 0 }

func (b *batch) Commit() (storage.Durable, error) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	for _, o := range b.ops {
		switch o.kind {
		case 's':
			b.s.data[string(o.key)] = o.value
		case 'd':
			delete(b.s.data, string(o.key))
		case 'r':
			for k := range b.s.data {
				if k >= string(o.key) && k < string(o.value) {
					delete(b.s.data, k)
				}
			}
		}
	}
	b.ops = nil
	return storage.Done{}, nil
}
