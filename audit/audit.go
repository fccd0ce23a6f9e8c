// Package audit writes tidemq's audit log: one JSON object per line, in a
// file of its own, rotated by size. It records every change of state made
// through the admin API and every call refused for want of permission
// (package authz), with who (principal, access key), what (action,
// resource), from where (source address) and the outcome.
//
// Lines are written with one write(2) each and not synced: the log is for
// people reading what happened, and syncing every refused call of a client
// in a loop would let it slow the server down. Rotation renames path to
// path.1 (path.1 to path.2 ...) once the file holds MaxBytes, keeping Keep
// old files.
package audit

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// The kinds of events.
const (
	KindDenied = "denied" // a call refused by the permissions
	KindChange = "change" // a state-changing admin call, whatever its outcome
)

// Event is one line of the log.
type Event struct {
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`
	Principal string    `json:"principal,omitempty"` // its ARN
	AccessKey string    `json:"access_key,omitempty"`
	Action    string    `json:"action"`
	Resource  string    `json:"resource,omitempty"`
	Source    string    `json:"source,omitempty"` // the caller's address
	Method    string    `json:"method,omitempty"` // admin calls: HTTP method and path
	Path      string    `json:"path,omitempty"`
	Status    int       `json:"status,omitempty"` // admin calls: the answer's status
	Reason    string    `json:"reason,omitempty"` // denied calls: why
}

// Defaults of Open.
const (
	DefaultMaxBytes = 64 << 20
	DefaultKeep     = 5
)

// Log is an open audit log; safe for concurrent use. A nil *Log writes
// nothing.
type Log struct {
	path     string
	maxBytes int64
	keep     int
	log      *slog.Logger
	now      func() time.Time

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (or creates, mode 0600) the log at path, appending.
// maxBytes <= 0 and keep <= 0 mean the defaults.
func Open(path string, maxBytes int64, keep int, log *slog.Logger) (*Log, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if keep <= 0 {
		keep = DefaultKeep
	}
	if log == nil {
		log = slog.Default()
	}
	l := &Log{path: path, maxBytes: maxBytes, keep: keep, log: log, now: time.Now}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Log) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("audit log: %w", err)
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Write appends e (its Time set now if zero). A failure to write is logged,
// not returned: the call being audited has been decided already.
func (l *Log) Write(e Event) {
	if l == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = l.now().UTC()
	}
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	if l.size > 0 && l.size+int64(len(line)) > l.maxBytes {
		if err := l.rotate(); err != nil {
			l.log.Error("audit log: rotation failed; writing on in the same file", "path", l.path, "err", err)
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil {
		l.log.Error("audit log: write failed", "path", l.path, "err", err)
	}
}

// rotate shifts path.N-1 to path.N ... path to path.1 and opens a new path.
func (l *Log) rotate() error {
	if err := l.f.Close(); err != nil {
		return err
	}
	l.f = nil
	for i := l.keep - 1; i >= 1; i-- {
		_ = os.Rename(fmt.Sprintf("%s.%d", l.path, i), fmt.Sprintf("%s.%d", l.path, i+1))
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		_ = l.open()
		return err
	}
	return l.open()
}

// Close closes the file.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
