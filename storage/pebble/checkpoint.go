package pebble

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble"
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
	// The copy is written into a private (0700) staging directory beside
	// dest and renamed into place once whole: Pebble makes its directory
	// 0755 and copies the WAL 0644, and the store's messages must stay as
	// private as the data directory; and a half-written copy is never at
	// dest, nor does a failure remove anything that is (someone else's
	// directory, made there meanwhile).
	base := filepath.Base(dest)
	if len(base) > 100 { // the staging name stays within NAME_MAX
		base = base[:100]
	}
	stage, err := os.MkdirTemp(filepath.Dir(dest), "."+base+".partial-")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer os.RemoveAll(stage)
	tmp := filepath.Join(stage, "db")
	if err := s.checkpoint(db, tmp); err != nil {
		return fmt.Errorf("checkpoint into %s: %w", dest, err)
	}
	if err := os.Chmod(tmp, 0o700); err != nil {
		return fmt.Errorf("checkpoint into %s: %w", dest, err)
	}
	if _, err := os.Lstat(dest); err == nil { // made meanwhile: not ours to replace
		return fmt.Errorf("checkpoint: %s already exists: give a new directory: %w", dest, fs.ErrExist)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("checkpoint into %s: %w", dest, err)
	}
	if d, err := os.Open(filepath.Dir(dest)); err == nil { // the rename, durable
		d.Sync()
		d.Close()
	}
	return nil
}

// checkpoint runs Pebble's checkpoint into dest, which panics (Fatalf, see
// quietLogger) on some I/O errors.
func (s *Store) checkpoint(db *pebble.DB, dest string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	// Without WithFlushedWAL: every batch the store acknowledged was
	// synced, and flushing would be a commit outside commitMu (reopen.go).
	return db.Checkpoint(dest)
}
