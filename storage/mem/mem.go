// Package mem is a storage.Store kept in memory: for tests and for
// `tidemq serve --in-memory`, the one mode in which acknowledged writes do
// not survive the process.
package mem

import (
	"bytes"
	"sort"
	"strings"
	"sync"

	"github.com/tidemq/tidemq/storage"
)

// Store is an in-memory storage.Store. It is safe for concurrent use.
//
// For tests it can fail as a disk does (see Fail): a commit that fails
// leaves the store broken, failing every later commit until Reopen, as
// Pebble's write-ahead log does.
type Store struct {
	mu   sync.Mutex
	data map[string][]byte
	// fault, while set, fails every commit and every Reopen: the disk is
	// full. broken is the first error a commit returned; it fails later
	// commits until a Reopen clears it.
	fault, broken error
}

var _ storage.Reopener = (*Store)(nil)

// New returns an empty store.
func New() *Store { return &Store{data: make(map[string][]byte)} }

// NewBatch starts a batch.
func (s *Store) NewBatch() storage.Batch { return &batch{s: s} }

// Scan visits keys with the prefix in order.
func (s *Store) Scan(prefix []byte, fn func(key, value []byte) error) error {
	return s.visit(func(k string) bool { return strings.HasPrefix(k, string(prefix)) }, fn)
}

// ScanRange visits the keys in [start, end) in order (storage.Ranger). It
// reads every key of the store: the store is for tests and small data.
func (s *Store) ScanRange(start, end []byte, fn func(key, value []byte) error) error {
	return s.visit(func(k string) bool { return k >= string(start) && k < string(end) }, fn)
}

// visit calls fn, in key order and without the lock, for the keys that
// match, as they were when it was called.
func (s *Store) visit(match func(k string) bool, fn func(key, value []byte) error) error {
	s.mu.Lock()
	var keys []string
	for k := range s.data {
		if match(k) {
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

// Fail makes every later commit fail with err, applying nothing, until
// Fail(nil); the first such commit also breaks the store until Reopen.
// Reopen fails with err while it is set. Tests use it as a full disk.
func (s *Store) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = err
}

// Reopen clears the error a failed commit left, unless the fault that
// caused it is still set. The data stays as it is: it is in memory.
func (s *Store) Reopen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fault != nil {
		return s.fault
	}
	s.broken = nil
	return nil
}

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
	if b.s.broken == nil && b.s.fault != nil {
		b.s.broken = b.s.fault
	}
	if b.s.broken != nil {
		return nil, b.s.broken
	}
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
