package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/backup"
	"github.com/tidemq/tidemq/storage/pebble"
)

// TestBackupFlagsWinOverEnvironment: a flag given on the command line
// chooses between the offline and the online backup even when the other
// one's TIDEMQ_ variable is set (a TIDEMQ_ENDPOINT exported for the other
// commands, the TIDEMQ_DATA_DIR of a systemd or container deployment).
// Both were refused as "give one".
func TestBackupFlagsWinOverEnvironment(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	st, err := pebble.Open(store, pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req backup.Request
		if r.Method != http.MethodPost || r.URL.Path != backup.APIPath || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		asked = append(asked, req.Destination)
		_ = json.NewEncoder(w).Encode(backup.Result{Destination: req.Destination, Files: 1, Bytes: 1})
	}))
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")

	// --data-dir on the command line, TIDEMQ_ENDPOINT in the environment:
	// offline.
	t.Setenv("TIDEMQ_ENDPOINT", srv.URL)
	offline := filepath.Join(dir, "offline")
	if out, errOut, err := runStderr(newBackupCommand(), "--data-dir", store, offline); err != nil {
		t.Fatalf("offline backup with $TIDEMQ_ENDPOINT set: %v\n%s%s", err, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(offline, "CURRENT")); err != nil || len(asked) != 0 {
		t.Fatalf("offline backup: %v, server asked for %q", err, asked)
	}

	// --endpoint on the command line, TIDEMQ_DATA_DIR in the environment:
	// online.
	os.Unsetenv("TIDEMQ_ENDPOINT")
	t.Setenv("TIDEMQ_DATA_DIR", store)
	online := filepath.Join(dir, "online")
	if out, errOut, err := runStderr(newBackupCommand(), "--endpoint", srv.URL, online); err != nil {
		t.Fatalf("online backup with $TIDEMQ_DATA_DIR set: %v\n%s%s", err, out, errOut)
	}
	if len(asked) != 1 || asked[0] != online {
		t.Fatalf("online backup: server asked for %q, want [%s]", asked, online)
	}

	// Both only in the environment: ambiguous, and said so.
	t.Setenv("TIDEMQ_ENDPOINT", srv.URL)
	_, _, err = runStderr(newBackupCommand(), filepath.Join(dir, "either"))
	if err == nil || !strings.Contains(err.Error(), "$TIDEMQ_DATA_DIR and $TIDEMQ_ENDPOINT") {
		t.Fatalf("both variables set: %v", err)
	}
	// Both on the command line: refused.
	if _, _, err := runStderr(newBackupCommand(), "--data-dir", store, "--endpoint", srv.URL, filepath.Join(dir, "both")); err == nil {
		t.Fatal("--data-dir and --endpoint together were accepted")
	}
}
