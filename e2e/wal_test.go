package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// walFill is the body padding of walSends' messages: easy to find in a WAL.
var walFill = strings.Repeat("w", 1000)

// walSends starts a server on a fresh data dir, sends 1,000 messages of
// about 1 KiB in batches (enough for the last WAL to hold well over
// 64 KiB of them: Pebble's first memtables are small), and kills it with
// SIGKILL. It returns the data dir and the path of the last WAL.
func walSends(t *testing.T) (dir, wal string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "data")
	s := startServer(t, "--data-dir", dir)
	url := s.createQueue(t, "wal", nil)
	for b := 0; b < 100; b++ {
		var entries []map[string]any
		for i := 0; i < 10; i++ {
			entries = append(entries, map[string]any{"Id": fmt.Sprint(i), "MessageBody": fmt.Sprintf("m%04d-%s", b*10+i, walFill)})
		}
		out := s.mustCall(t, "SendMessageBatch", map[string]any{"QueueUrl": url, "Entries": entries})
		if f, ok := out["Failed"].([]any); ok && len(f) > 0 {
			t.Fatalf("SendMessageBatch failed entries: %v", f)
		}
	}
	s.kill()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) == 0 {
		t.Fatalf("no WAL in %s", dir)
	}
	sort.Strings(logs)
	return dir, logs[len(logs)-1]
}

// Zeroing the first 64 KiB of the last WAL (acknowledged sends after it)
// stops the server with the WAL's name and the offset; the operator's
// --truncate-corrupt-wal opens it, logged as an error.
func TestServeRefusesAWALWithAZeroedHead(t *testing.T) {
	t.Parallel()
	dir, wal := walSends(t)
	f, err := os.OpenFile(wal, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 64<<10), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()

	_, stderr, code := runTidemq(t, nil, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir)
	if code == 0 {
		t.Fatalf("serve on a WAL with a zeroed head exited 0; stderr:\n%s", stderr)
	}
	for _, want := range []string{filepath.Base(wal), "offset 0", "--truncate-corrupt-wal"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}

	s := startServer(t, "--data-dir", dir, "--truncate-corrupt-wal")
	if l := s.logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, filepath.Base(wal)) {
		t.Errorf("the truncation is not logged as an error naming the WAL:\n%s", l)
	}
	s.stop()
}

// A torn last record (its second half overwritten, nothing valid after
// it) is recovered: the server starts, healthy, with every message
// before it, and says so in its log.
func TestServeRecoversATornWALTail(t *testing.T) {
	t.Parallel()
	dir, wal := walSends(t)
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndex(data, []byte(walFill))
	if last < 0 {
		t.Fatalf("no message found in %s", wal)
	}
	// Tear the batch that holds the last message: garbage over its body.
	f, err := os.OpenFile(wal, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, 500), int64(last+200)); err != nil {
		t.Fatal(err)
	}
	f.Close()

	s := startServer(t, "--data-dir", dir)
	url := str(s.mustCall(t, "GetQueueUrl", map[string]any{"QueueName": "wal"}), "QueueUrl")
	n := s.queueAttrs(t, url, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"]
	// The torn record is the last batch of ten (or a later write of the
	// engine's): at least 990 messages are back.
	var got int
	fmt.Sscan(n, &got)
	if got < 990 || got > 1000 {
		t.Errorf("after a torn tail, %d messages, want 990 to 1000", got)
	}
	if l := s.logs.String(); !strings.Contains(l, "incomplete record") || !strings.Contains(l, filepath.Base(wal)) {
		t.Errorf("the torn tail is not logged with the WAL's name:\n%s", l)
	}
}

// A second serve on a data dir in use says so plainly (it said "resource
// temporarily unavailable").
func TestServeSecondOnADataDirInUse(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	startServer(t, "--data-dir", dir)
	_, stderr, code := runTidemq(t, nil, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir)
	if code == 0 || !strings.Contains(stderr, "in use by another process (is a tidemq server running on it?)") {
		t.Errorf("second serve: exit %d, stderr:\n%s", code, stderr)
	}
}
