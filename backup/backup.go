// Package backup is tidemq's online backup: the admin endpoint that writes
// a consistent copy of a running server's store (a Pebble checkpoint) into
// a new directory on the server's machine while the server goes on
// serving, and the call 'tidemq backup' makes to it. Restoring is starting
// a server on the copy: 'tidemq serve --data-dir DEST'.
//
// The copy holds every message (and queue, topic, trigger, receive) whose
// request was answered before the backup started: the server answers only
// once a change is on disk, and the checkpoint takes the store as it is on
// disk at one moment. Changes answered while the backup runs may or may
// not be in it.
package backup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tidemq/tidemq/storage"
)

// APIPath is the endpoint: POST a Request as JSON, get a Result.
const APIPath = "/tidemq/backup"

// Request asks for a backup into Destination, an absolute path on the
// server's machine that does not exist yet (its parent must).
type Request struct {
	Destination string `json:"Destination"`
}

// Result describes a finished backup.
type Result struct {
	Destination string `json:"Destination"`
	Files       int    `json:"Files"`
	Bytes       int64  `json:"Bytes"`
	// Milliseconds is how long the checkpoint took.
	Milliseconds int64 `json:"Milliseconds"`
}

// Handler answers POST APIPath by checkpointing cp into the request's
// destination. cp nil means the server keeps nothing on disk
// (--in-memory): there is nothing to back up. One backup runs at a time.
// The front door authenticates the request and requires JSON.
func Handler(cp storage.Checkpointer, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var running sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "POST a JSON request to "+APIPath)
			return
		}
		if cp == nil {
			writeError(w, http.StatusBadRequest, "NothingToBackUp", "this server runs --in-memory: it keeps nothing on disk to back up")
			return
		}
		var req Request
		dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("the body must be {\"Destination\": \"/absolute/path\"}: %v", err))
			return
		}
		dest := req.Destination
		switch {
		case dest == "":
			writeError(w, http.StatusBadRequest, "InvalidRequest", "Destination is missing: give a new directory on the server's machine")
			return
		case !filepath.IsAbs(dest):
			writeError(w, http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("Destination %q must be an absolute path on the server's machine", dest))
			return
		}
		dest = filepath.Clean(dest)
		if _, err := os.Lstat(dest); err == nil {
			writeError(w, http.StatusConflict, "DestinationExists", fmt.Sprintf("%s already exists: a backup goes into a new directory", dest))
			return
		}
		if fi, err := os.Stat(filepath.Dir(dest)); err != nil || !fi.IsDir() {
			writeError(w, http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("the parent of %s is not an existing directory on the server's machine", dest))
			return
		}
		if !running.TryLock() {
			writeError(w, http.StatusConflict, "BackupInProgress", "another backup is running: try again when it has finished")
			return
		}
		defer running.Unlock()
		start := time.Now()
		if err := cp.Checkpoint(dest); err != nil {
			log.Error("backup failed", "destination", dest, "err", err)
			status, code := http.StatusInternalServerError, "BackupFailed"
			if errors.Is(err, fs.ErrExist) {
				status, code = http.StatusConflict, "DestinationExists"
			}
			writeError(w, status, code, err.Error())
			return
		}
		res := Result{Destination: dest, Milliseconds: time.Since(start).Milliseconds()}
		_ = filepath.WalkDir(dest, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					res.Files++
					res.Bytes += fi.Size()
				}
			}
			return nil
		})
		log.Info("backup written", "destination", dest, "files", res.Files, "bytes", res.Bytes, "took", time.Since(start))
		writeJSON(w, http.StatusOK, res)
	})
}

// Refuse answers every backup request with why this server cannot make
// one: a POST gets status, code and msg.
func Refuse(status int, code, msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "POST a JSON request to "+APIPath)
			return
		}
		writeError(w, status, code, msg)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeError answers as tidemq's other admin endpoints do:
// {"error": message, "code": code}.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"error": msg, "code": code})
}
