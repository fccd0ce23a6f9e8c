package pebble

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/tidemq/tidemq/storage"
)

func commit(t *testing.T, s *Store, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		b := s.NewBatch()
		b.Set(fmt.Appendf(nil, "k%06d", i), bytes.Repeat([]byte{'v'}, 300))
		d, err := b.Commit()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

func wals(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// tenCommits opens a store in a new directory, makes 10 small commits and
// returns its WALs (the store stays open until the test ends).
func tenCommits(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	commit(t, s, 0, 10)
	ws := wals(t, dir)
	if len(ws) == 0 {
		t.Fatal("no WAL")
	}
	return ws
}

// TestWALIsFilledAhead: the WAL on disk reaches past what was written, with
// the fill, so that an fsync does not have to commit a new file size.
func TestWALIsFilledAhead(t *testing.T) {
	ws := tenCommits(t)
	last := ws[len(ws)-1]
	data, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < walFillAhead {
		t.Fatalf("WAL %s is %d bytes after 10 small commits, want at least %d (filled ahead)", last, len(data), walFillAhead)
	}
	if !bytes.Contains(data, []byte("k000009")) {
		t.Fatal("the WAL does not hold the last commit")
	}
	if tail := data[len(data)-4096:]; !bytes.Equal(tail, fillBlock[:len(tail)]) {
		t.Fatal("the WAL's tail is not the fill")
	}
}

// TestCrashImageOpens: a copy of the store taken while it runs (its last
// WAL not closed, its tail the fill) opens with every synced commit,
// across WAL rotations. (A copy is gentler than a crash: unsynced data is
// in it too. The engine's crash test kills a real server.)
func TestCrashImageOpens(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 3000
	commit(t, s, 0, n/3)
	for round := 0; round < 2; round++ { // rotate: the next WALs are new, then recycled
		if err := s.db.Load().Flush(); err != nil {
			t.Fatal(err)
		}
		commit(t, s, n/3*(round+1), n/3*(round+2))
	}

	image := copyStore(t, dir)
	c, err := Open(image, Options{})
	if err != nil {
		t.Fatalf("open the crash image: %v", err)
	}
	defer c.Close()
	got := 0
	if err := c.Scan([]byte("k"), func(k, v []byte) error {
		if want := fmt.Sprintf("k%06d", got); string(k) != want {
			return fmt.Errorf("key %q, want %q", k, want)
		}
		got++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Fatalf("%d of %d commits after reopening the image", got, n)
	}
}

// copyStore copies the files of the store in dir, as they are, into a new
// directory, and returns it.
func copyStore(t *testing.T, dir string) string {
	t.Helper()
	image := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "LOCK" && !e.IsDir() {
			copyFile(t, filepath.Join(dir, e.Name()), filepath.Join(image, e.Name()))
		}
	}
	return image
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestIsWAL(t *testing.T) {
	for name, want := range map[string]bool{
		"/d/000123.log": true, "000004.log": true, "/d/.log": false, "/d/LOG": false,
		"/d/000123.sst": false, "/d/MANIFEST-000001": false, "/d/x1.log": false,
	} {
		if isWAL(name) != want {
			t.Errorf("isWAL(%q) = %v, want %v", name, !want, want)
		}
	}
}

// TestLogWithoutTrailerOpens: a log that is not the last and has no
// end-of-file trailer (a disk lost the fsync of the trailer) must end at
// its last record, as it would without the fill, not fail Pebble's strict
// check of a non-last log's tail (which zeros would).
func TestLogWithoutTrailerOpens(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	commit(t, s, 0, 10)
	image := copyStore(t, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A newer, empty log: the copied one is no longer the last.
	if err := os.WriteFile(filepath.Join(image, "999999.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Open(image, Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer c.Close()
	got := 0
	if err := c.Scan([]byte("k"), func(k, v []byte) error { got++; return nil }); err != nil {
		t.Fatal(err)
	}
	if got != 10 {
		t.Fatalf("%d of 10 commits", got)
	}
}

// Only the store's own WALs are filled and watched: a checkpoint's copies
// of them, made through the same file system into another directory, are
// not (a failure writing a backup must not mark the store's WAL failed).
func TestIsStoreWAL(t *testing.T) {
	for _, c := range []struct {
		dir, name string
		want      bool
	}{
		{"/d", "/d/000123.log", true},
		{"/d/", "/d/000123.log", true},
		{"/d", "/backup/000123.log", false},
		{"/d", "/d/backup/000123.log", false},
		{"/d", "/d/MANIFEST-000001", false},
		{"", "/anywhere/000123.log", true},
	} {
		if got := isStoreWAL(c.dir, c.name); got != c.want {
			t.Errorf("isStoreWAL(%q, %q) = %v, want %v", c.dir, c.name, got, c.want)
		}
	}
}

// A checkpoint whose WAL copy fails (here: the destination's file system
// refuses it) leaves the store's WAL unbroken: commits go on.
func TestCheckpointFailureLeavesStoreWorking(t *testing.T) {
	dir := t.TempDir()
	// The copy is written in a staging directory beside the destination
	// (.backup.partial-*) and renamed into place.
	fs := failCreateFS{FS: vfs.Default, under: filepath.Join(dir, ".backup")}
	s, err := Open(filepath.Join(dir, "store"), Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := s.NewBatch()
	b.Set([]byte("k"), []byte("v"))
	if err := storage.CommitSync(b); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(filepath.Join(dir, "backup")); err == nil {
		t.Fatal("the checkpoint succeeded although its files could not be created")
	}
	b = s.NewBatch()
	b.Set([]byte("k2"), []byte("v"))
	if err := storage.CommitSync(b); err != nil {
		t.Fatalf("commit after a failed checkpoint: %v", err)
	}
}

// failCreateFS refuses to create WAL files under one directory.
type failCreateFS struct {
	vfs.FS
	under string
}

func (f failCreateFS) Create(name string) (vfs.File, error) {
	if strings.HasPrefix(name, f.under) && isWAL(name) {
		return nil, errors.New("injected: disk full")
	}
	return f.FS.Create(name)
}
