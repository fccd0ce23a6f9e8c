package storage

import "sync"

// Shared is one handle on a store that several owners share, each closing
// its own handle when it is done: the store is closed with the last
// handle, so it outlives every owner whatever order they close in.
// `tidemq serve` shares its store between the engine, the topic service
// and the triggers, each of which closes the store it is given.
type Shared struct {
	s     Store
	refs  *sharedRefs
	close sync.Once
}

type sharedRefs struct {
	mu sync.Mutex
	n  int // open handles
}

// Share returns the first handle on s; from then on, s is closed by the
// last handle's Close.
func Share(s Store) *Shared { return &Shared{s: s, refs: &sharedRefs{n: 1}} }

// Share returns another handle on the store. h must still be open.
func (h *Shared) Share() *Shared {
	h.refs.mu.Lock()
	defer h.refs.mu.Unlock()
	if h.refs.n == 0 {
		panic("storage: Share of a store already closed")
	}
	h.refs.n++
	return &Shared{s: h.s, refs: h.refs}
}

// NewBatch starts a batch on the store.
func (h *Shared) NewBatch() Batch { return h.s.NewBatch() }

// ScanRange scans a range of the store (see Ranger).
func (h *Shared) ScanRange(start, end []byte, fn func(key, value []byte) error) error {
	return ScanRange(h.s, start, end, fn)
}

// ReadEach reads keys of the store (see Seeker).
func (h *Shared) ReadEach(keys [][]byte, fn func(i int, value []byte) error) error {
	return ReadEach(h.s, keys, fn)
}

// Scan scans the store.
func (h *Shared) Scan(prefix []byte, fn func(key, value []byte) error) error {
	return h.s.Scan(prefix, fn)
}

// Reopen reopens the shared store when it can be (Reopener): the engine
// recovers from a failed write through its handle. The other owners keep
// their handles; a batch they made before the Reopen is refused at Commit.
func (h *Shared) Reopen() error {
	if r, ok := h.s.(Reopener); ok {
		return r.Reopen()
	}
	return nil
}

var _ Reopener = (*Shared)(nil)

// Broken forwards to the shared store (Breakable): nil when it is not one.
func (h *Shared) Broken() error { return BrokenErr(h.s) }

var _ Breakable = (*Shared)(nil)

// Close releases the handle (a second Close does nothing). The last
// handle's Close closes the store and returns its error.
func (h *Shared) Close() error {
	last := false
	h.close.Do(func() {
		h.refs.mu.Lock()
		h.refs.n--
		last = h.refs.n == 0
		h.refs.mu.Unlock()
	})
	if last {
		return h.s.Close()
	}
	return nil
}
