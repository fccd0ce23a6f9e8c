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
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/adminjson"
	"github.com/tidemq/tidemq/storage"
)

// APIPath is the endpoint: POST a Request as JSON, get a Result.
const APIPath = "/tidemq/backup"

// Request asks for a backup into Destination: a new directory directly
// under the server's backup directory (tidemq serve --backup-dir), named
// by its name ("nightly-1") or by its absolute path.
type Request struct {
	Destination string `json:"Destination"`
}

// Options say where backups may go and who may ask for them.
//
// Why: a backup is a full copy of the store, written as the server's user.
// When callers named any path, an unprivileged local user made a root-run
// server create a directory in root's home, repeated calls filled any file
// system (/dev/shm included), and 409 against 400 told which paths exist.
// So backups go only into a directory the operator names, and a path
// outside it is refused with one answer that looks at nothing on disk.
type Options struct {
	// Dir is the directory backups are written into, absolute; "" turns
	// online backups off.
	Dir string
	// Unauthenticated is set when requests are not signed (no --auth):
	// backups are then refused unless AllowUnauthenticated.
	Unauthenticated      bool
	AllowUnauthenticated bool
	Logger               *slog.Logger
}

// maxNameLength bounds a backup's directory name.
const maxNameLength = 128

// validName reports whether a backup directory's name is one plain path
// element: letters, digits, '.', '_' and '-', starting with a letter or
// digit (so never "." or "..").
func validName(n string) bool {
	if n == "" || len(n) > maxNameLength {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
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
// destination under o.Dir. cp nil means the server keeps nothing on disk
// (--in-memory): there is nothing to back up. One backup runs at a time.
// The front door authenticates the request and requires JSON.
func Handler(cp storage.Checkpointer, o Options) http.Handler {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch {
	case cp == nil:
	case o.Dir == "":
		return Refuse(tidemq.Errorf(tidemq.ErrBackupsOff,
			"online backups are off: start the server with --backup-dir DIR, and back up into DIR"))
	case o.Unauthenticated && !o.AllowUnauthenticated:
		return Refuse(tidemq.Errorf(tidemq.ErrBackupsNeedAuth,
			"this server does not authenticate requests (no --auth): online backups, a copy of every message, "+
				"are refused unless the operator starts it with --backup-without-auth"))
	}
	var running sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			writeError(w, tidemq.PostJSON(APIPath))
			return
		}
		if cp == nil {
			writeError(w, tidemq.Errorf(tidemq.ErrNothingToBackUp, "this server runs --in-memory: it keeps nothing on disk to back up"))
			return
		}
		var req Request
		dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeError(w, tidemq.Errorf(tidemq.ErrInvalidBackupRequest, "the body must be {\"Destination\": \"/absolute/path\"}: %v", err))
			return
		}
		name := req.Destination
		if filepath.IsAbs(name) {
			// An absolute path is accepted when it names a directory
			// directly under o.Dir, whatever else it names: the same
			// answer for every path outside, without looking at it.
			if filepath.Dir(filepath.Clean(name)) != filepath.Clean(o.Dir) {
				name = ""
			} else {
				name = filepath.Base(name)
			}
		}
		if !validName(name) {
			writeError(w, tidemq.Errorf(tidemq.ErrInvalidDestination,
				"Destination must name a new directory directly under the server's backup directory %s: "+
					"a name of letters, digits, '.', '_' and '-' (at most %d), or its absolute path", o.Dir, maxNameLength))
			return
		}
		dest := filepath.Join(o.Dir, name)
		if _, err := os.Lstat(dest); err == nil {
			writeError(w, tidemq.Errorf(tidemq.ErrDestinationExists, "%s already exists: a backup goes into a new directory", dest))
			return
		}
		if !running.TryLock() {
			writeError(w, tidemq.Errorf(tidemq.ErrBackupInProgress, "another backup is running: try again when it has finished"))
			return
		}
		defer running.Unlock()
		start := time.Now()
		if err := cp.Checkpoint(dest); err != nil {
			log.Error("backup failed", "destination", dest, "err", err)
			code := tidemq.ErrBackupFailed
			if errors.Is(err, fs.ErrExist) {
				code = tidemq.ErrDestinationExists
			}
			writeError(w, tidemq.Errorf(code, "%s", err.Error()))
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
// one: a POST gets err (from the catalogue).
func Refuse(err *tidemq.Error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			writeError(w, tidemq.PostJSON(APIPath))
			return
		}
		writeError(w, err)
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

// writeError answers as every admin route does (api/adminjson).
func writeError(w http.ResponseWriter, err error) { adminjson.WriteError(w, err) }
