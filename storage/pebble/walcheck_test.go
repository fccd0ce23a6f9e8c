package pebble_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/internal/testlog"
	"github.com/tidemq/tidemq/storage/pebble"
)

// writeRecords opens a store in dir, commits n synced batches of one key
// each (key%05d, a 1 KiB value) and closes it. Pebble's first memtables
// are small (256 KiB, then doubling): with 600 records, the last
// write-ahead log holds about 350 KiB of them.
func writeRecords(t *testing.T, dir string, n int) {
	t.Helper()
	s, err := pebble.Open(dir, pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	val := []byte(strings.Repeat("v", 1024))
	for i := 0; i < n; i++ {
		b := s.NewBatch()
		b.Set([]byte(fmt.Sprintf("key%05d", i)), val)
		d, err := b.Commit()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// lastLog is the path of the highest-numbered WAL in dir.
func lastLog(t *testing.T, dir string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) == 0 {
		t.Fatal("no WAL in", dir)
	}
	sort.Strings(logs)
	return logs[len(logs)-1]
}

func countKeys(t *testing.T, s *pebble.Store) int {
	t.Helper()
	n := 0
	if err := s.Scan([]byte("key"), func(k, v []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// A zeroed head of the last WAL, with valid records after it, is refused
// loudly (Pebble alone would open the store without them), and opened
// with the damage logged when the operator asks to truncate.
func TestCorruptWALHeadRefused(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, 600)
	wal := lastLog(t, dir)
	f, err := os.OpenFile(wal, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 64<<10), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var logs testlog.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	_, err = pebble.Open(dir, pebble.Options{Logger: log})
	var cerr *pebble.CorruptWALError
	if !errors.As(err, &cerr) {
		t.Fatalf("Open of a WAL with a zeroed head = %v, want a CorruptWALError", err)
	}
	if cerr.File != wal || cerr.Offset != 0 || cerr.ValidAt != 64<<10 {
		t.Errorf("CorruptWALError = %+v, want file %s, offset 0, valid at 65536", cerr, wal)
	}
	if !strings.Contains(err.Error(), wal) || !strings.Contains(err.Error(), "--truncate-corrupt-wal") {
		t.Errorf("error %q does not name the WAL and the flag", err)
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "offset=0") {
		t.Errorf("refusal not logged as an error with the offset:\n%s", logs.String())
	}

	// Refusing changed nothing: it refuses again.
	if _, err := pebble.Open(dir, pebble.Options{}); !errors.As(err, &cerr) {
		t.Fatalf("second Open = %v, want a CorruptWALError", err)
	}

	logs = testlog.Buffer{}
	s, err := pebble.Open(dir, pebble.Options{Logger: log, TruncateCorruptWAL: true})
	if err != nil {
		t.Fatalf("Open with TruncateCorruptWAL: %v", err)
	}
	defer s.Close()
	// What the earlier logs held (flushed) remains; the last log's
	// records are dropped.
	if n := countKeys(t, s); n == 0 || n > 300 {
		t.Errorf("after truncating the last log at offset 0, %d keys remain, want those of the earlier logs only", n)
	}
	if !strings.Contains(logs.String(), "truncate-corrupt-wal") || !strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("truncation not logged as an error:\n%s", logs.String())
	}
}

// A torn tail (the last record cut short) is recovered as Pebble does,
// with a warning in the log.
func TestTornWALTailRecovered(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, 600)
	wal := lastLog(t, dir)
	st, err := os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	// Find the end of the records (the file may be filled ahead): cut in
	// the middle of the last 1 KiB record.
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	end := strings.LastIndex(string(data), strings.Repeat("v", 1024))
	if end < 0 {
		t.Fatalf("no record found in %s (%d bytes)", wal, st.Size())
	}
	if err := os.Truncate(wal, int64(end+512)); err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	s, err := pebble.Open(dir, pebble.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("Open after a torn tail: %v", err)
	}
	defer s.Close()
	if n := countKeys(t, s); n != 599 {
		t.Errorf("after a torn last record, %d keys, want 599", n)
	}
	if !strings.Contains(logs.String(), "incomplete record") || !strings.Contains(logs.String(), wal) {
		t.Errorf("torn tail not logged with the WAL's name:\n%s", logs.String())
	}
}

// A WAL that ends cleanly logs nothing about its tail.
func TestCleanWALQuiet(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, 50)
	var logs testlog.Buffer
	s, err := pebble.Open(dir, pebble.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := countKeys(t, s); n != 50 {
		t.Errorf("%d keys, want 50", n)
	}
	if strings.Contains(logs.String(), "write-ahead log") {
		t.Errorf("a clean WAL was reported:\n%s", logs.String())
	}
}

// A second Open of a store in use says so (it said "resource temporarily
// unavailable").
func TestOpenInUse(t *testing.T) {
	dir := t.TempDir()
	s, err := pebble.Open(dir, pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = pebble.Open(dir, pebble.Options{})
	if !errors.Is(err, pebble.ErrInUse) || !strings.Contains(err.Error(), "is a tidemq server running on it?") {
		t.Fatalf("second Open = %v, want ErrInUse", err)
	}
}
