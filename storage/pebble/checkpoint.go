package pebble

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Checkpoint writes a consistent copy of the database into dest, a
// directory that must not exist (its parent must), while the store goes
// on serving: Pebble hard-links the immutable tables (copies them across
// file systems) and copies the write-ahead logs and the manifest as of one
// moment. Every batch whose Durable reported success before Checkpoint was
// called is in the copy, since its WAL record was on disk then; batches
// committed meanwhile may or may not be. The copy is a database that
// Open (and 'tidemq serve --data-dir dest') opens like the original.
//
// Commits go on during the copy. A Reopen or Close waits for it to end.
// A failure writing the copy leaves the store as it was, and removes the
// partial copy.
func (s *Store) Checkpoint(dest string) (err error) {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if err := s.failure(); err != nil {
		return err
	}
	db := s.db.Load()
	if db == nil {
		return errClosed
	}
	if _, err := os.Stat(dest); err == nil {
		return fmt.Errorf("checkpoint: %s already exists: give a new directory", dest)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if fi, err := os.Stat(filepath.Dir(dest)); err != nil || !fi.IsDir() {
		return fmt.Errorf("checkpoint: the parent of %s must be an existing directory", dest)
	}
	defer func() {
		// Pebble panics (Fatalf, see quietLogger) on some I/O errors.
		if r := recover(); r != nil {
			err = fmt.Errorf("checkpoint into %s: %v", dest, r)
		}
		if err != nil && !errors.Is(err, fs.ErrExist) { // not someone else's directory
			os.RemoveAll(dest)
		}
	}()
	// Without WithFlushedWAL: every batch the store acknowledged was
	// synced, and flushing would be a commit outside commitMu (reopen.go).
	if err := db.Checkpoint(dest); err != nil {
		return fmt.Errorf("checkpoint into %s: %w", dest, err)
	}
	return nil
}
