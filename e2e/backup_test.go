package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// TestBackupWhileLoading backs up a server with 'tidemq backup' while
// producers keep sending to a standard and a FIFO queue, then starts a
// server on the backup ('tidemq serve --data-dir DEST', the restore) and
// drains it: every message acknowledged before the backup started is
// there, once, with its body; nothing is there that was not sent; and the
// original server answered every send during the backup.
func TestBackupWhileLoading(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, "--data-dir", filepath.Join(dir, "data"), "--backup-dir", dir, "--backup-without-auth")
	queues := []string{
		s.createQueue(t, "orders", nil),
		s.createQueue(t, "jobs.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}),
	}

	var (
		mu      sync.Mutex
		acked   = map[string]bool{} // bodies the server answered
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		sendErr = make(chan error, 4)
	)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := queues[p%2]
				var entries []map[string]any
				for j := 0; j < 10; j++ {
					e := map[string]any{"Id": fmt.Sprint(j), "MessageBody": fmt.Sprintf("p%d-%d-%d", p, i, j)}
					if p%2 == 1 {
						e["MessageGroupId"] = fmt.Sprintf("g%d", j%3)
					}
					entries = append(entries, e)
				}
				status, out, err := s.tryCall("SendMessageBatch", map[string]any{"QueueUrl": q, "Entries": entries})
				if failed, _ := out["Failed"].([]any); err == nil && (status != http.StatusOK || len(failed) != 0) {
					err = fmt.Errorf("SendMessageBatch: %d %v", status, out)
				}
				if err != nil {
					sendErr <- err
					return
				}
				mu.Lock()
				for _, e := range entries {
					acked[e["MessageBody"].(string)] = true
				}
				mu.Unlock()
			}
		}()
	}
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for count() < n {
			if time.Now().After(deadline) {
				t.Fatalf("only %d messages acknowledged after 60s, want %d", count(), n)
			}
			select {
			case err := <-sendErr:
				t.Fatal(err)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	waitFor(1000)

	mu.Lock()
	before := make(map[string]bool, len(acked))
	for b := range acked {
		before[b] = true
	}
	mu.Unlock()
	dest := filepath.Join(dir, "backup")
	out, errOut, code := runTidemq(t, clientEnv("AKID", "SECRET"), "backup", dest, "--endpoint", s.url)
	if code != 0 || !strings.Contains(out, "backed up "+s.url+" to "+dest) || !strings.Contains(out, "tidemq serve --data-dir "+dest) {
		t.Fatalf("tidemq backup: exit %d\n%s%s", code, out, errOut)
	}
	waitFor(count() + 500) // the server goes on serving
	close(stop)
	wg.Wait()
	select {
	case err := <-sendErr:
		t.Fatal(err)
	default:
	}
	mu.Lock()
	total := len(acked)
	mu.Unlock()

	// A second backup into the same directory is refused.
	if _, errOut, code := runTidemq(t, clientEnv("AKID", "SECRET"), "backup", dest, "--endpoint", s.url); code == 0 || !strings.Contains(errOut, "already exists") {
		t.Errorf("backup into an existing directory: exit %d: %s", code, errOut)
	}

	restored := startServer(t, "--data-dir", dest)
	got := map[string]bool{}
	for _, name := range []string{"orders", "jobs.fifo"} {
		q := restored.url + "/000000000000/" + name
		for empty := 0; empty < 2; {
			msgs := messages(restored.mustCall(t, "ReceiveMessage", map[string]any{"QueueUrl": q, "MaxNumberOfMessages": 10, "VisibilityTimeout": 600}))
			if len(msgs) == 0 {
				empty++
				continue
			}
			var del []map[string]any
			for i, m := range msgs {
				body := str(m, "Body")
				if got[body] {
					t.Fatalf("%s delivered twice from the backup", body)
				}
				got[body] = true
				del = append(del, map[string]any{"Id": fmt.Sprint(i), "ReceiptHandle": str(m, "ReceiptHandle")})
			}
			restored.mustCall(t, "DeleteMessageBatch", map[string]any{"QueueUrl": q, "Entries": del})
		}
	}
	missing := 0
	for b := range before {
		if !got[b] {
			missing++
			if missing <= 5 {
				t.Errorf("%s was acknowledged before the backup and is not in it", b)
			}
		}
	}
	for b := range got {
		if !acked[b] {
			t.Errorf("the backup holds %s, which was never acknowledged", b)
		}
	}
	t.Logf("%d acknowledged before the backup, %d in it, %d acknowledged in all; %d missing", len(before), len(got), total, missing)
	// The original still has everything it acknowledged.
	attrs := s.queueAttrs(t, queues[0], "ApproximateNumberOfMessages")
	attrsFIFO := s.queueAttrs(t, queues[1], "ApproximateNumberOfMessages")
	var n1, n2 int
	fmt.Sscan(attrs["ApproximateNumberOfMessages"], &n1)
	fmt.Sscan(attrsFIFO["ApproximateNumberOfMessages"], &n2)
	if n1+n2 != total {
		t.Errorf("the original holds %d+%d messages, acknowledged %d", n1, n2, total)
	}
}

// TestBackupRefusals: under --auth the backup endpoint answers only signed
// requests (tidemq backup signs); a server --in-memory has nothing to back
// up; the offline mode refuses the store of a running server and backs up
// a stopped one.
func TestBackupRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	s := startServer(t, "--auth", "--credentials", secKey+":"+secSecret, "--data-dir", data, "--backup-dir", dir)
	dest := filepath.Join(dir, "b1")
	status, body := rawRequest(t, http.MethodPost, s.url+"/tidemq/backup", "application/json", `{"Destination":"`+dest+`"}`)
	if status != http.StatusForbidden {
		t.Errorf("unsigned POST /tidemq/backup: %d %s, want 403", status, body)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("an unsigned request wrote a backup: %v", err)
	}
	if out, errOut, code := runTidemq(t, clientEnv(secKey, secSecret), "backup", dest, "--endpoint", s.url); code != 0 {
		t.Errorf("signed backup: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runTidemq(t, nil, "backup", "--data-dir", data, filepath.Join(dir, "b2")); code == 0 || !strings.Contains(errOut, "is a server running on it?") {
		t.Errorf("offline backup of a running server's store: exit %d: %s", code, errOut)
	}
	s.stop()
	if out, errOut, code := runTidemq(t, nil, "backup", "--data-dir", data, filepath.Join(dir, "b2")); code != 0 || !strings.Contains(out, "backed up the store in "+data) {
		t.Errorf("offline backup of a stopped server's store: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "b2", "CURRENT")); err != nil {
		t.Errorf("offline backup: %v", err)
	}

	mem := startServer(t)
	if _, errOut, code := runTidemq(t, clientEnv("AKID", "SECRET"), "backup", filepath.Join(dir, "b3"), "--endpoint", mem.url); code == 0 || !strings.Contains(errOut, "--in-memory") {
		t.Errorf("backup of an in-memory server: exit %d: %s", code, errOut)
	}
}

// Online backups go only into --backup-dir: without it they are off;
// without --auth they need --backup-without-auth; a path outside the
// directory gets one answer whether it exists or not (no 409/400 oracle),
// and nothing is written there.
func TestBackupOnlyUnderBackupDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	backups := filepath.Join(dir, "backups")
	if err := os.Mkdir(backups, 0o700); err != nil {
		t.Fatal(err)
	}
	off := startServer(t, "--data-dir", filepath.Join(dir, "d1"))
	if status, body := rawRequest(t, http.MethodPost, off.url+"/tidemq/backup", "application/json", `{"Destination":"`+filepath.Join(backups, "x")+`"}`); status != http.StatusBadRequest || !strings.Contains(body, "--backup-dir") {
		t.Errorf("without --backup-dir: %d %s", status, body)
	}
	noAuth := startServer(t, "--data-dir", filepath.Join(dir, "d2"), "--backup-dir", backups)
	if status, body := rawRequest(t, http.MethodPost, noAuth.url+"/tidemq/backup", "application/json", `{"Destination":"x"}`); status != http.StatusForbidden || !strings.Contains(body, "--backup-without-auth") {
		t.Errorf("without --auth: %d %s", status, body)
	}
	s := startServer(t, "--data-dir", filepath.Join(dir, "d3"), "--backup-dir", backups, "--backup-without-auth")
	var answers []string
	for _, dest := range []string{dir, filepath.Join(dir, "d3"), filepath.Join(dir, "new"), "/no/such/dir/x", filepath.Join(backups, "..", "escape")} {
		status, body := rawRequest(t, http.MethodPost, s.url+"/tidemq/backup", "application/json", `{"Destination":"`+dest+`"}`)
		if status != http.StatusBadRequest {
			t.Errorf("backup into %s: %d %s, want 400", dest, status, body)
		}
		answers = append(answers, body)
	}
	for _, a := range answers[1:] {
		if a != answers[0] {
			t.Errorf("paths outside --backup-dir get different answers:\n%s\n%s", answers[0], a)
		}
	}
	for _, p := range []string{filepath.Join(dir, "new"), filepath.Join(dir, "escape")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written: %v", p, err)
		}
	}
	if out, errOut, code := runTidemq(t, nil, "backup", filepath.Join(backups, "ok"), "--endpoint", s.url); code != 0 {
		t.Errorf("backup into --backup-dir: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(backups, "ok", "CURRENT")); err != nil {
		t.Errorf("backup into --backup-dir: %v", err)
	}
}

// A server whose queues are in PostgreSQL refuses an online backup: a
// checkpoint of its local store would hold no queue and no message, yet
// say "backed up" and how to restore it.
func TestBackupRefusedWithPostgresStore(t *testing.T) {
	t.Parallel()
	dsn, _ := pgtest.Isolated(t)
	dir := t.TempDir()
	s := startServer(t, "--store", dsn, "--data-dir", filepath.Join(dir, "data"), "--no-alarms")
	dest := filepath.Join(dir, "b1")
	out, errOut, code := runTidemq(t, clientEnv("AKID", "SECRET"), "backup", dest, "--endpoint", s.url)
	if code == 0 || !strings.Contains(errOut, "PostgreSQL") {
		t.Errorf("backup of a server with --store postgres: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("a backup without the queues was written: %v", err)
	}
}
