// Package pebble is the default storage.Store: a Pebble database whose
// synced batches are group-committed, so concurrent requests share fsyncs.
// After a failed write it can be reopened without restarting the process
// (reopen.go).
package pebble

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/tidemq/tidemq/storage"
)

// Store is a storage.Store on Pebble. It can reopen its database after a
// failed write (see reopen.go).
type Store struct {
	dir string
	o   Options
	// db is the open database: replaced by Reopen (through retire), nil
	// after a Reopen that failed to open it again, until one succeeds.
	db atomic.Pointer[pebble.DB]
	// commitMu orders Commit, Reopen and Close (see reopen.go).
	commitMu sync.Mutex
	// closeMu keeps the database open during a Checkpoint: Checkpoint
	// holds it for reading, Reopen and Close for writing, after
	// commitMu (checkpoint.go).
	closeMu sync.RWMutex
	// broken is the first error the write-ahead log returned; from then on
	// Commit refuses rather than call into a commit pipeline that Pebble
	// gives up on (see reopen.go). Reopen clears it.
	broken  atomic.Pointer[error]
	commits atomic.Uint64 // synced batches committed (see Stats)
	// statsMu orders Stats with retire, so that the metrics of a database
	// are never read while it closes; closedStats are the fsync counters
	// of the databases closed so far.
	statsMu     sync.Mutex
	closedStats Stats
	// idle stops the idle-flush loop (idleflush.go); Close waits for it.
	idle idleLoop
}

// Options tune the store.
type Options struct {
	Logger *slog.Logger
	// FS is the file system the store is kept on. Default: the operating
	// system's. Tests wrap it to inject faults (pebble/vfs/errorfs).
	FS vfs.FS
	// TruncateCorruptWAL opens a store whose last write-ahead log has a
	// bad record followed by valid ones, dropping those (logged as an
	// error); without it Open refuses with a *CorruptWALError (see
	// walcheck.go).
	TruncateCorruptWAL bool
	// IdleFlush is how long the store must go without a commit before
	// it writes out what its memtables hold (idleflush.go). 0: 10 s;
	// negative: never.
	IdleFlush time.Duration
}

// walFillAhead is how far ahead of the WAL writer the file is written
// (see walFillFS): an fsync that must commit new metadata comes once
// per this many bytes, about 2,500 single 256-byte sends.
const walFillAhead = 1 << 20

// Open opens (or creates) the database in dir.
func Open(dir string, o Options) (*Store, error) {
	s := &Store{dir: dir, o: o}
	fs := o.FS
	if fs == nil {
		fs = vfs.Default
	}
	// The WAL is checked under the directory's lock, so that a store that
	// another process has open is reported as such, and its live WAL is
	// not read as if it were damaged.
	if _, err := fs.Stat(dir); err == nil {
		lock, err := pebble.LockDirectory(dir, fs)
		if err != nil {
			return nil, lockError(dir, err)
		}
		err = checkWAL(fs, dir, o.TruncateCorruptWAL, o.Logger)
		lock.Close()
		if err != nil {
			return nil, err
		}
	}
	db, err := pebble.Open(dir, s.options())
	if err != nil {
		return nil, lockError(dir, err)
	}
	s.db.Store(db)
	s.startIdleFlush()
	return s, nil
}

// ErrInUse is the error of Open when another process has the store open.
var ErrInUse = errors.New("the directory is in use by another process (is a tidemq server running on it?)")

// lockError is the error of opening the store in dir: ErrInUse when its
// lock is held by another process.
func lockError(dir string, err error) error {
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) || strings.Contains(err.Error(), "lock held by current process") {
		return fmt.Errorf("open pebble store in %s: %w", dir, ErrInUse)
	}
	return fmt.Errorf("open pebble store in %s: %w", dir, err)
}

// options are the Pebble options of s, new for each open (Pebble keeps
// state in some of them).
func (s *Store) options() *pebble.Options {
	fs := s.o.FS
	if fs == nil {
		fs = vfs.Default
	}
	opts := &pebble.Options{
		Logger:       quietLogger{s.o.Logger},
		MemTableSize: 64 << 20,
		FS:           walWatchFS{FS: walFillFS{FS: fs, ahead: walFillAhead, dir: s.dir}, failed: s.walFailed, dir: s.dir},
		EventListener: &pebble.EventListener{DiskSlow: func(info pebble.DiskSlowInfo) {
			if s.o.Logger != nil {
				s.o.Logger.Warn("storage: slow disk", "op", info.OpType.String(), "file", info.Path, "for", info.Duration)
			}
		}},
	}
	// With its own FS set, Pebble leaves the disk-stall detector to the
	// caller: keep it (it reports operations still running after 5 s).
	opts.WithFSDefaults()
	return opts
}

// NewBatch starts a batch. While the store is closed (after a failed
// Reopen, until one succeeds) the batch takes writes and refuses Commit, so
// that a user sharing the store gets an error, not a panic.
func (s *Store) NewBatch() storage.Batch {
	db := s.db.Load()
	if db == nil {
		return &batch{s: s}
	}
	return &batch{s: s, db: db, b: db.NewBatch()}
}

// Scan visits the keys with the prefix in order.
func (s *Store) Scan(prefix []byte, fn func(key, value []byte) error) error {
	return s.ScanRange(prefix, storage.PrefixEnd(prefix), fn)
}

// ScanRange visits the keys in [start, end) in order (storage.Ranger).
func (s *Store) ScanRange(start, end []byte, fn func(key, value []byte) error) error {
	db := s.db.Load()
	if db == nil {
		return errClosed
	}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
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

// ReadEach reads each of keys, in ascending order, with one iterator
// (storage.Seeker): every seek moves forward from the last.
func (s *Store) ReadEach(keys [][]byte, fn func(i int, value []byte) error) error {
	if len(keys) == 0 {
		return nil
	}
	db := s.db.Load()
	if db == nil {
		return errClosed
	}
	last := keys[len(keys)-1]
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: keys[0], UpperBound: append(last[:len(last):len(last)], 0)})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if it.SeekGE(k) && bytes.Equal(it.Key(), k) {
			if err := fn(i, it.Value()); err != nil {
				it.Close()
				return err
			}
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

// Close flushes and closes the database.
func (s *Store) Close() error {
	s.idle.stop()
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.closeMu.Lock() // waits for a running Checkpoint
	defer s.closeMu.Unlock()
	db := s.retire(nil)
	if db == nil {
		return nil // a Reopen failed to open it again
	}
	return db.Close()
}

type batch struct {
	s  *Store
	db *pebble.DB // the database b belongs to
	b  *pebble.Batch
}

// A batch made while the store was closed has no b: it drops its writes,
// is never Empty (so that its caller commits) and fails at Commit.
func (b *batch) Set(k, v []byte) {
	if b.b != nil {
		_ = b.b.Set(k, v, nil)
	}
}

// SetValue writes v straight into the batch's memory (storage.Filler).
func (b *batch) SetValue(k []byte, v storage.Value) {
	if b.b == nil {
		return
	}
	op := b.b.SetDeferred(len(k), v.Len())
	copy(op.Key, k)
	v.Fill(op.Value)
	_ = op.Finish()
}

var _ storage.Filler = (*batch)(nil)

func (b *batch) Delete(k []byte) {
	if b.b != nil {
		_ = b.b.Delete(k, nil)
	}
}
func (b *batch) SingleDelete(k []byte) {
	if b.b != nil {
		_ = b.b.SingleDelete(k, nil)
	}
}
func (b *batch) DeleteRange(start, end []byte) {
	if b.b != nil {
		_ = b.b.DeleteRange(start, end, nil)
	}
}
func (b *batch) Empty() bool { return b.b != nil && b.b.Empty() }

// Commit applies the batch to the memtable and the WAL in call order, then
// lets the caller wait for the group-committed fsync. After a WAL failure
// it refuses (see reopen.go).
func (b *batch) Commit() (_ storage.Durable, err error) {
	s := b.s
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := s.failure(); err != nil {
		return nil, err
	}
	if b.b == nil {
		return nil, errClosed
	}
	if b.db != s.db.Load() {
		return nil, errors.New("storage: a batch made before the store was reopened")
	}
	defer func() {
		// Pebble panics (or calls Fatalf, which panics in quietLogger) on
		// a commit error it cannot recover from: report it, and let the
		// store be reopened.
		if r := recover(); r != nil {
			err = fmt.Errorf("pebble commit: %v", r)
			s.walFailed(err)
		}
	}()
	if err := b.db.ApplyNoSyncWait(b.b, pebble.Sync); err != nil {
		b.b.Close()
		return nil, err
	}
	s.commits.Add(1)
	return durable{s, b.b}, nil
}

type durable struct {
	s *Store
	b *pebble.Batch
}

func (d durable) Wait() error {
	err := d.b.SyncWait()
	d.b.Close()
	if err != nil {
		d.s.walFailed(err)
	}
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
