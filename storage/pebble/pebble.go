// Package pebble is the default storage.Store: a Pebble database whose
// synced batches are group-committed, so concurrent requests share fsyncs.
package pebble

import (
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/tidemq/tidemq/storage"
)

// Store is a storage.Store on Pebble.
type Store struct {
	db      *pebble.DB
	commits atomic.Uint64 // synced batches committed (see Stats)
}

// Options tune the store.
type Options struct {
	Logger *slog.Logger
}

// walFillAhead is how far ahead of the WAL writer the file is written
// (see walFillFS): an fsync that must commit new metadata comes once
// per this many bytes, about 2,500 single 256-byte sends.
const walFillAhead = 1 << 20

// Open opens (or creates) the database in dir.
func Open(dir string, o Options) (*Store, error) {
	opts := &pebble.Options{
		Logger:       quietLogger{o.Logger},
		MemTableSize: 64 << 20,
		FS:           walFillFS{FS: vfs.Default, ahead: walFillAhead},
		EventListener: &pebble.EventListener{DiskSlow: func(info pebble.DiskSlowInfo) {
			if o.Logger != nil {
				o.Logger.Warn("storage: slow disk", "op", info.OpType.String(), "file", info.Path, "for", info.Duration)
			}
		}},
	}
	// With its own FS set, Pebble leaves the disk-stall detector to the
	// caller: keep it (it reports operations still running after 5 s).
	opts.WithFSDefaults()
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open pebble store in %s: %w", dir, err)
	}
	return &Store{db: db}, nil
}

// NewBatch starts a batch.
func (s *Store) NewBatch() storage.Batch {
	return &batch{db: s.db, b: s.db.NewBatch(), commits: &s.commits}
}

// Scan visits the keys with the prefix in order.
func (s *Store) Scan(prefix []byte, fn func(key, value []byte) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

// Close flushes and closes the database.
func (s *Store) Close() error { return s.db.Close() }

// prefixEnd returns the smallest key greater than every key with the prefix.
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil // the prefix is all 0xff: no upper bound
}

type batch struct {
	db      *pebble.DB
	b       *pebble.Batch
	commits *atomic.Uint64
}

func (b *batch) Set(k, v []byte)               { _ = b.b.Set(k, v, nil) }
func (b *batch) Delete(k []byte)               { _ = b.b.Delete(k, nil) }
func (b *batch) SingleDelete(k []byte)         { _ = b.b.SingleDelete(k, nil) }
func (b *batch) DeleteRange(start, end []byte) { _ = b.b.DeleteRange(start, end, nil) }
func (b *batch) Empty() bool                   { return b.b.Empty() }

// Commit applies the batch to the memtable and the WAL in call order, then
// lets the caller wait for the group-committed fsync.
func (b *batch) Commit() (storage.Durable, error) {
	if err := b.db.ApplyNoSyncWait(b.b, pebble.Sync); err != nil {
		b.b.Close()
		return nil, err
	}
	b.commits.Add(1)
	return durable{b.b}, nil
}

type durable struct{ b *pebble.Batch }

func (d durable) Wait() error {
	err := d.b.SyncWait()
	d.b.Close()
	return err
}

// quietLogger sends Pebble's informational chatter to debug level.
type quietLogger struct{ l *slog.Logger }

func (q quietLogger) Infof(format string, args ...any) {
	if q.l != nil {
		q.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
	}
}

func (q quietLogger) Errorf(format string, args ...any) {
	if q.l != nil {
		q.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
	}
}

func (q quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}
