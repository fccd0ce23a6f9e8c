package backup_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/backup"
)

// fakeStore checkpoints by writing two files, or blocks until released.
type fakeStore struct {
	started, release chan struct{}
	calls            []string
}

func (f *fakeStore) Checkpoint(dest string) error {
	f.calls = append(f.calls, dest)
	if f.started != nil {
		close(f.started)
		<-f.release
	}
	if err := os.Mkdir(dest, 0o700); err != nil {
		return err
	}
	os.WriteFile(filepath.Join(dest, "CURRENT"), []byte("MANIFEST-000001\n"), 0o600)
	return os.WriteFile(filepath.Join(dest, "000001.sst"), make([]byte, 1000), 0o600)
}

func post(t *testing.T, h http.Handler, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, backup.APIPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	out := map[string]any{}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("answer %q is not JSON: %v", rec.Body, err)
	}
	return rec.Code, out
}

func TestHandler(t *testing.T) {
	dir := t.TempDir()
	fs := &fakeStore{}
	h := backup.Handler(fs, backup.Options{Dir: dir})
	dest := filepath.Join(dir, "b1")
	code, out := post(t, h, `{"Destination":"`+dest+`"}`)
	if code != 200 || out["Destination"] != dest || out["Files"] != 2.0 || out["Bytes"] != 1016.0 {
		t.Fatalf("backup: %d %v", code, out)
	}
	for _, c := range []struct {
		body string
		code int
		want string
	}{
		{`{"Destination":"` + dest + `"}`, 409, "already exists"},
		{`{"Destination":"b1"}`, 409, "already exists"},
		{`{"Destination":"relative/dir"}`, 400, "directly under the server's backup directory"},
		{`{"Destination":"../b5"}`, 400, "directly under"},
		{`{"Destination":".."}`, 400, "directly under"},
		{`{"Destination":""}`, 400, "directly under"},
		{`{}`, 400, "directly under"},
		{`{"Destination":"` + filepath.Join(dir, "no", "parent") + `"}`, 400, "directly under"},
		// Outside the backup directory: one answer, existing or not.
		{`{"Destination":"/etc"}`, 400, "directly under"},
		{`{"Destination":"/root/.bash_history"}`, 400, "directly under"},
		{`{"Destination":"/no/such/dir"}`, 400, "directly under"},
		{`{"Dest":"/x"}`, 400, "unknown field"},
		{`not json`, 400, "the body must be"},
	} {
		code, out := post(t, h, c.body)
		if code != c.code || !strings.Contains(out["error"].(string), c.want) || out["code"] == "" {
			t.Errorf("%s: %d %v, want %d with %q", c.body, code, out, c.code, c.want)
		}
	}
	if len(fs.calls) != 1 {
		t.Errorf("the store was asked %d times: %v", len(fs.calls), fs.calls)
	}
	// By name, into the backup directory.
	if code, out := post(t, h, `{"Destination":"nightly-2.x"}`); code != 200 || out["Destination"] != filepath.Join(dir, "nightly-2.x") {
		t.Errorf("backup by name: %d %v", code, out)
	}

	// No backup directory: off. No --auth: refused unless allowed.
	if code, out := post(t, backup.Handler(fs, backup.Options{}), `{"Destination":"`+filepath.Join(dir, "b6")+`"}`); code != 400 || out["code"] != "BackupsOff" {
		t.Errorf("without a backup directory: %d %v", code, out)
	}
	if code, out := post(t, backup.Handler(fs, backup.Options{Dir: dir, Unauthenticated: true}), `{"Destination":"b6"}`); code != 403 || out["code"] != "BackupsNeedAuth" {
		t.Errorf("without --auth: %d %v", code, out)
	}
	if code, out := post(t, backup.Handler(fs, backup.Options{Dir: dir, Unauthenticated: true, AllowUnauthenticated: true}), `{"Destination":"b6"}`); code != 200 {
		t.Errorf("without --auth, allowed: %d %v", code, out)
	}

	// --in-memory: nothing to back up.
	if code, out := post(t, backup.Handler(nil, backup.Options{Dir: dir}), `{"Destination":"`+filepath.Join(dir, "b2")+`"}`); code != 400 || out["code"] != "NothingToBackUp" {
		t.Errorf("in memory: %d %v", code, out)
	}

	// One backup at a time.
	slow := &fakeStore{started: make(chan struct{}), release: make(chan struct{})}
	h = backup.Handler(slow, backup.Options{Dir: dir})
	done := make(chan int)
	go func() {
		code, _ := post(t, h, `{"Destination":"`+filepath.Join(dir, "b3")+`"}`)
		done <- code
	}()
	<-slow.started
	if code, out := post(t, h, `{"Destination":"`+filepath.Join(dir, "b4")+`"}`); code != 409 || out["code"] != "BackupInProgress" {
		t.Errorf("second backup meanwhile: %d %v", code, out)
	}
	close(slow.release)
	if code := <-done; code != 200 {
		t.Errorf("first backup: %d", code)
	}
}
