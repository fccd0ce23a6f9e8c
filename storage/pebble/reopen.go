package pebble

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/tidemq/tidemq/storage"
)

// Recovering from a failed write.
//
// When a write or an fsync of the write-ahead log fails (the disk is full),
// Pebble's log writer keeps the error for good: every batch waiting for
// that fsync gets it, and a later commit that finds it panics inside
// Pebble's commit pipeline with the pipeline's mutex held, after which the
// database cannot even be closed. So the store must stop committing at the
// first WAL error, and recovering takes closing the database and opening it
// again (Reopen), which replays the WAL: every batch whose fsync succeeded
// is there, and perhaps some whose outcome was the error.
//
// Invariant: no commit reaches Pebble after its WAL failed. The WAL's files
// are wrapped (walWatchFS) so that a failed write or sync records the error
// in Store.broken before Pebble's log writer sees it; Pebble fails commits
// only after its log writer has seen it, in a commit that follows the one
// that found it; and Commit checks Store.broken under commitMu, which orders
// it after every earlier commit. Reopen, under commitMu too, clears it.

var errClosed = errors.New("storage: the pebble store is closed")

// Reopen closes the database and opens it again, clearing the WAL's error.
// While the disk still fails, opening fails and Reopen returns the error;
// it can be called again. The caller must not use the store meanwhile.
func (s *Store) Reopen() (err error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.closeMu.Lock() // waits for a running Checkpoint
	defer s.closeMu.Unlock()
	defer func() {
		// Pebble panics (Fatalf, see quietLogger) when it cannot write its
		// manifest while opening; its deferred clean-ups release the
		// directory lock, so a later Reopen can try again.
		if r := recover(); r != nil {
			err = fmt.Errorf("reopen pebble store in %s: %v", s.dir, r)
		}
	}()
	if old := s.retire(nil); old != nil {
		// Closing a database whose WAL failed reports that failure.
		if err := old.Close(); err != nil && s.o.Logger != nil {
			s.o.Logger.Warn("storage: closed the failed database", "err", err)
		}
	}
	s.broken.Store(nil) // the old WAL's; a new one's errors are kept from here
	db, err := pebble.Open(s.dir, s.options())
	if err != nil {
		return fmt.Errorf("reopen pebble store in %s: %w", s.dir, err)
	}
	s.retire(db)
	return nil
}

// walFailed records the first error of the write-ahead log.
func (s *Store) walFailed(err error) {
	s.broken.CompareAndSwap(nil, &err)
}

// Broken returns the write-ahead log's error, if it failed
// (storage.Breakable): a commit of any of the store's users may have
// found it.
func (s *Store) Broken() error { return s.failure() }

var _ storage.Breakable = (*Store)(nil)

// failure is the WAL's error, if it failed.
func (s *Store) failure() error {
	if p := s.broken.Load(); p != nil {
		return fmt.Errorf("storage: the write-ahead log failed, the store must be reopened: %w", *p)
	}
	return nil
}

// walWatchFS reports every failed write or sync of a write-ahead log to
// failed, before the error reaches Pebble.
type walWatchFS struct {
	vfs.FS
	failed func(error)
	dir    string // the store's directory: only its WALs are watched ("": any)
}

// Create creates the file; a WAL is watched.
func (fs walWatchFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil && isStoreWAL(fs.dir, name) {
		fs.failed(err)
	}
	if err != nil || !isStoreWAL(fs.dir, name) {
		return f, err
	}
	return watchedFile{File: f, failed: fs.failed}, nil
}

// ReuseForWrite reuses an obsolete WAL, watched.
func (fs walWatchFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname)
	if err != nil && isStoreWAL(fs.dir, newname) {
		fs.failed(err)
	}
	if err != nil || !isStoreWAL(fs.dir, newname) {
		return f, err
	}
	return watchedFile{File: f, failed: fs.failed}, nil
}

// watchedFile is a WAL whose write and sync errors are reported.
type watchedFile struct {
	vfs.File
	failed func(error)
}

func (f watchedFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if err != nil {
		f.failed(err)
	}
	return n, err
}

func (f watchedFile) Sync() error {
	err := f.File.Sync()
	if err != nil {
		f.failed(err)
	}
	return err
}

func (f watchedFile) SyncData() error {
	err := f.File.SyncData()
	if err != nil {
		f.failed(err)
	}
	return err
}

func (f watchedFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	if err != nil {
		f.failed(err)
	}
	return full, err
}
