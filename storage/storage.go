// Package storage defines what the engine needs from a durable store: an
// ordered key-value space written in atomic batches and read back in full at
// start-up. The engine owns the key layout and the encoding; a store only
// keeps bytes. Implementations: storage/pebble (the default, on disk) and
// storage/mem (tests and --in-memory).
//
// `tidemq serve` keeps all its state in one store. Each of its users owns
// a namespace of top-level keys, and its layout is written where it is
// kept:
//
//	n  k  q/  c/  m/  s/  d/  t/  p/  the engine: queues, messages, move tasks (engine/keys.go)
//	sns/                            the topic service: topics, subscriptions, signing key, outbox (sns/keys.go)
//	trg/                            the triggers: their settings, targets' secrets included (trigger/keys.go)
//
// A new user takes a prefix that neither begins nor is the beginning of
// any of these, adds it here, and works through Prefix so that it cannot
// stray. Share lets the users each close the store they are given. Update
// and Lock (update.go) are how users keep data that several processes
// share (a PostgreSQL store) consistent: a read-modify-write under a named
// lock, and a lock held across other work.
package storage

import "context"

// Store is an ordered key-value store written in atomic batches.
type Store interface {
	// NewBatch starts an empty batch.
	NewBatch() Batch
	// Scan calls fn for every key with the given prefix, in key order. The
	// slices are valid only during the call.
	Scan(prefix []byte, fn func(key, value []byte) error) error
	// Close flushes and releases the store.
	Close() error
}

// Batch is a set of writes applied atomically: after a crash either all of
// them are there or none is.
type Batch interface {
	Set(key, value []byte)
	Delete(key []byte)
	// SingleDelete deletes a key that was Set exactly once since it was last
	// deleted (messages are written once and deleted once). It lets the
	// store drop the key and its tombstone together.
	SingleDelete(key []byte)
	// DeleteRange deletes every key in [start, end).
	DeleteRange(start, end []byte)
	// Empty reports whether the batch holds no writes.
	Empty() bool
	// Commit applies the batch. Batches become visible in the order Commit
	// is called, so a caller that commits under its own lock gets its lock
	// order on disk. Commit does not wait for durability: the returned
	// Durable does. Waits of concurrent commits share one fsync.
	Commit() (Durable, error)
}

// Value is a record that writes itself: Len bytes, written by Fill into
// a slice of exactly that length. A store that has a Filler writes it in
// place, into the batch's own memory.
type Value interface {
	Len() int
	Fill(p []byte)
}

// Filler is implemented by a batch that can take a value written in place
// (SetValue) rather than encoded elsewhere and copied in: the engine
// writes each message record this way (engine/codec.go), one copy of its
// body fewer on the way into the store.
type Filler interface {
	// SetValue sets key to the Len bytes v.Fill writes.
	SetValue(key []byte, v Value)
}

// SetValue sets key to v in b: in place where b is a Filler, else through
// a buffer of its own and Set.
func SetValue(b Batch, key []byte, v Value) {
	if f, ok := b.(Filler); ok {
		f.SetValue(key, v)
		return
	}
	p := make([]byte, v.Len())
	v.Fill(p)
	b.Set(key, p)
}

// Ranger is implemented by a store that can visit one range of keys without
// reading the keys before it: the engine pages a queue's backlog in from
// the store with it, a page at a time (engine/page.go).
type Ranger interface {
	// ScanRange calls fn for every key in [start, end), in key order, and
	// stops at the first error fn returns (which it returns). The slices
	// are valid only during the call, and fn must not use the store.
	ScanRange(start, end []byte, fn func(key, value []byte) error) error
}

// ScanRange visits the keys of s in [start, end) in order: through
// Ranger when s is one, else by scanning the keys that share start's and
// end's common prefix (which reads every key under it).
func ScanRange(s Store, start, end []byte, fn func(key, value []byte) error) error {
	if r, ok := s.(Ranger); ok {
		return r.ScanRange(start, end, fn)
	}
	n := 0
	for n < len(start) && n < len(end) && start[n] == end[n] {
		n++
	}
	return s.Scan(start[:n], func(k, v []byte) error {
		if string(k) < string(start) || string(k) >= string(end) {
			return nil
		}
		return fn(k, v)
	})
}

// Seeker is implemented by a store that reads many single keys, given in
// ascending order, with one iterator: the engine reads a FIFO group's page
// of messages, scattered among other groups' records, with it
// (engine/fifopage.go).
type Seeker interface {
	// ReadEach calls fn(i, value) for each keys[i] present in the store,
	// in order, and stops at the first error fn returns (which it
	// returns). keys must be in ascending order. The value is valid only
	// during the call, and fn must not use the store.
	ReadEach(keys [][]byte, fn func(i int, value []byte) error) error
}

// ReadEach reads each of keys (in ascending order) that s holds: through
// Seeker when s is one, else one ScanRange a key.
func ReadEach(s Store, keys [][]byte, fn func(i int, value []byte) error) error {
	if r, ok := s.(Seeker); ok {
		return r.ReadEach(keys, fn)
	}
	for i, k := range keys {
		err := ScanRange(s, k, append(k[:len(k):len(k)], 0), func(_, v []byte) error { return fn(i, v) })
		if err != nil {
			return err
		}
	}
	return nil
}

// Reopener is implemented by a store that can recover from a failed write
// without the process restarting. A store may keep a write error for good
// (Pebble's write-ahead log fails every commit after its first failed write
// or sync), so recovering takes closing the store and opening it again.
//
// Reopen closes the store and opens the same data again. After it returns
// nil the store holds every batch whose Durable reported success, and
// perhaps some of those whose outcome was an error (written before the
// failure was known): the caller must read its state again rather than
// trust what it had in memory. While the cause persists (the disk is still
// full) Reopen returns an error, and it may be called again later. Batches
// made before a Reopen must not be committed after it; the caller must not
// use the store concurrently with Reopen.
type Reopener interface {
	Reopen() error
}

// Breakable is implemented by a store that keeps a write error for good
// until it is reopened (see Reopener). Broken returns that error, or nil
// while the store can commit. Several users share one store (see Share):
// when one of them breaks it, the one that can recover it (the engine)
// learns of it here, without waiting to fail a write of its own.
type Breakable interface {
	Broken() error
}

// BrokenErr returns s's kept write error when it is Breakable, else nil.
func BrokenErr(s Store) error {
	if b, ok := s.(Breakable); ok {
		return b.Broken()
	}
	return nil
}

// Checkpointer is implemented by a store that can write a consistent copy
// of itself into a new directory while it goes on serving: the online
// backup. The copy holds every batch whose Durable reported success before
// Checkpoint was called, and is a store that opens like the original.
// dest must not exist; its parent must.
type Checkpointer interface {
	Checkpoint(dest string) error
}

// Durable waits until a committed batch is on stable storage.
type Durable interface {
	Wait() error
}

// Done is a Durable that is already durable (or never will be, for a store
// kept in memory on purpose).
type Done struct{ Err error }

// Wait returns the stored error.
func (d Done) Wait() error { return d.Err }

// CommitSync commits b, if it holds anything, and waits until it is
// durable: for writes that are acknowledged one at a time, off any hot path.
func CommitSync(b Batch) error {
	if b.Empty() {
		return nil
	}
	d, err := b.Commit()
	if err != nil {
		return err
	}
	return d.Wait()
}

// ContextCommitter is a Batch that can commit under a context: a store
// shared by several nodes refuses the commit when the context carries a
// stale fence (tidemq.WithFence).
type ContextCommitter interface {
	CommitContext(ctx context.Context) (Durable, error)
}

// CommitSyncContext is CommitSync under ctx, for a batch that takes one
// (ContextCommitter); other batches commit as CommitSync does.
func CommitSyncContext(ctx context.Context, b Batch) error {
	cc, ok := b.(ContextCommitter)
	if !ok || b.Empty() {
		return CommitSync(b)
	}
	d, err := cc.CommitContext(ctx)
	if err != nil {
		return err
	}
	return d.Wait()
}

// Has reports whether st holds key.
func Has(st Store, key []byte) (bool, error) {
	found := false
	err := st.Scan(key, func(k, _ []byte) error {
		found = found || string(k) == string(key)
		return nil
	})
	return found, err
}
