package storage

import "sync"

// Txn is one read-modify-write of a store, run by Update: its reads see
// the store's current state (not the Txn's own writes), and its writes
// are committed together, durably, when the function given to Update
// returns nil, and dropped when it returns an error.
type Txn interface {
	// Get returns the value of key and whether the key exists.
	Get(key []byte) ([]byte, bool, error)
	// Scan calls fn for every key with the prefix, in key order. The
	// slices are valid only during the call.
	Scan(prefix []byte, fn func(key, value []byte) error) error
	Set(key, value []byte)
	Delete(key []byte)
}

// Updater is implemented by a store whose data several processes share
// (PostgreSQL): its Update runs fn exclusively of every other Update of
// the same lock in every process, against the data as committed, and
// commits fn's writes atomically and durably before the lock is
// released. So a change computed from what fn read can never overwrite a
// change it did not see: every user of the lock writes through Update.
// An Updater also tells the other processes that the lock's data changed
// (see postgres.KV.Watch).
type Updater interface {
	Update(lock string, fn func(tx Txn) error) error
}

// Update runs fn as one read-modify-write of st under the named lock: with
// st's own Update when st is an Updater, else (a store that one process
// owns: Pebble, memory) under a lock of that name in this process, reading
// st and committing fn's writes as one batch, durably. Either way, two
// Updates of one lock never interleave, and a write made through Update
// is never computed from stale reads: the one rule of both kinds of
// store, so that they behave alike.
func Update(st Store, lock string, fn func(tx Txn) error) error {
	if u, ok := st.(Updater); ok {
		return u.Update(lock, fn)
	}
	l := localLock(lock)
	l.Lock()
	defer l.Unlock()
	tx := &localTxn{st: st, b: st.NewBatch()}
	if err := fn(tx); err != nil {
		return err
	}
	return CommitSync(tx.b)
}

var localLocks sync.Map // lock name → *sync.Mutex

func localLock(name string) *sync.Mutex {
	l, _ := localLocks.LoadOrStore(name, new(sync.Mutex))
	return l.(*sync.Mutex)
}

// localTxn is a Txn on a store one process owns.
type localTxn struct {
	st Store
	b  Batch
}

func (t *localTxn) Get(key []byte) ([]byte, bool, error) {
	var v []byte
	found := false
	err := t.st.Scan(key, func(k, val []byte) error {
		if string(k) == string(key) {
			v, found = append([]byte{}, val...), true
		}
		return nil
	})
	return v, found, err
}

func (t *localTxn) Scan(prefix []byte, fn func(key, value []byte) error) error {
	return t.st.Scan(prefix, fn)
}

func (t *localTxn) Set(key, value []byte) { t.b.Set(key, value) }
func (t *localTxn) Delete(key []byte)     { t.b.Delete(key) }

// prefixedTxn is a Txn of a Prefix store.
type prefixedTxn struct {
	tx Txn
	s  *prefixed
}

func (t prefixedTxn) Get(key []byte) ([]byte, bool, error) { return t.tx.Get(t.s.key(key)) }

func (t prefixedTxn) Scan(prefix []byte, fn func(key, value []byte) error) error {
	n := len(t.s.p)
	return t.tx.Scan(t.s.key(prefix), func(k, v []byte) error { return fn(k[n:], v) })
}

func (t prefixedTxn) Set(key, value []byte) { t.tx.Set(t.s.key(key), value) }
func (t prefixedTxn) Delete(key []byte)     { t.tx.Delete(t.s.key(key)) }

// Update runs Update on the underlying store, within the namespace.
func (s *prefixed) Update(lock string, fn func(tx Txn) error) error {
	return Update(s.s, lock, func(tx Txn) error { return fn(prefixedTxn{tx: tx, s: s}) })
}

// Update runs Update on the shared store.
func (h *Shared) Update(lock string, fn func(tx Txn) error) error { return Update(h.s, lock, fn) }

// Locker is implemented by a store whose data several processes share
// (PostgreSQL): Lock waits until no other process holds the lock of that
// name (nor runs an Update of that name), and holds it until unlock is
// called, so that work that is not one transaction (a FIFO topic's
// publish: its outbox write, then its deliveries) runs on one process at
// a time. Within a process the caller serialises its own users of a name:
// a Locker excludes other processes only. A store one process owns needs
// no Locker.
type Locker interface {
	Lock(name string) (unlock func(), err error)
}

// Lock takes the lock of that name across the processes sharing st when
// st is a Locker, and does nothing otherwise.
func Lock(st Store, name string) (unlock func(), err error) {
	if l, ok := st.(Locker); ok {
		return l.Lock(name)
	}
	return func() {}, nil
}

// Lock takes the underlying store's lock (see Locker), if it has one.
func (s *prefixed) Lock(name string) (func(), error) { return Lock(s.s, name) }

// Lock takes the shared store's lock (see Locker), if it has one.
func (h *Shared) Lock(name string) (func(), error) { return Lock(h.s, name) }
