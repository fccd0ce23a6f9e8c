package storage

import "context"

// Prefix returns the keys of s that begin with prefix as a store of their
// own: its keys are those of s without the prefix, and it neither sees nor
// touches any other key of s. It is how a user of the one store keeps to
// its namespace (see the package comment). Close closes s.
func Prefix(s Store, prefix string) Store {
	return &prefixed{s: s, p: []byte(prefix)}
}

type prefixed struct {
	s Store
	p []byte
}

// key returns p+k in a slice of its own.
func (s *prefixed) key(k []byte) []byte {
	return append(s.p[:len(s.p):len(s.p)], k...)
}

func (s *prefixed) NewBatch() Batch { return &prefixedBatch{Batch: s.s.NewBatch(), s: s} }

func (s *prefixed) Scan(prefix []byte, fn func(key, value []byte) error) error {
	n := len(s.p)
	return s.s.Scan(s.key(prefix), func(k, v []byte) error { return fn(k[n:], v) })
}

func (s *prefixed) ScanRange(start, end []byte, fn func(key, value []byte) error) error {
	n := len(s.p)
	return ScanRange(s.s, s.key(start), s.key(end), func(k, v []byte) error { return fn(k[n:], v) })
}

func (s *prefixed) ReadEach(keys [][]byte, fn func(i int, value []byte) error) error {
	full := make([][]byte, len(keys))
	for i, k := range keys {
		full[i] = s.key(k)
	}
	return ReadEach(s.s, full, fn)
}

func (s *prefixed) Close() error { return s.s.Close() }

type prefixedBatch struct {
	Batch
	s *prefixed
}

// CommitContext commits under ctx when the underlying batch can
// (ContextCommitter): a leader's fence must reach the store through the
// namespace, or a stale leader's write would commit unchecked.
func (b *prefixedBatch) CommitContext(ctx context.Context) (Durable, error) {
	if cc, ok := b.Batch.(ContextCommitter); ok {
		return cc.CommitContext(ctx)
	}
	return b.Batch.Commit()
}

func (b *prefixedBatch) Set(k, v []byte)            { b.Batch.Set(b.s.key(k), v) }
func (b *prefixedBatch) SetValue(k []byte, v Value) { SetValue(b.Batch, b.s.key(k), v) }
func (b *prefixedBatch) Delete(k []byte)            { b.Batch.Delete(b.s.key(k)) }
func (b *prefixedBatch) SingleDelete(k []byte)      { b.Batch.SingleDelete(b.s.key(k)) }

// DeleteRange deletes [start, end) of the namespace; a nil end means its
// end.
func (b *prefixedBatch) DeleteRange(start, end []byte) {
	e := PrefixEnd(b.s.p)
	if end != nil {
		e = b.s.key(end)
	}
	b.Batch.DeleteRange(b.s.key(start), e)
}

// PrefixEnd returns the smallest key greater than every key with the
// prefix, or nil if there is none (the prefix is empty or all 0xff).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}
