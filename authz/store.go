package authz

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sigv4"
)

// Store holds the current Directory of a credentials file (and of the
// --credentials flag, whose keys are root users) and reloads the file
// when its contents change. Safe for concurrent use: a request sees one
// Directory from its signature check to its decision.
type Store struct {
	path    string
	account string
	extra   sigv4.Credentials // --credentials: root users, never reloaded
	log     *slog.Logger

	cur     atomic.Pointer[Directory]
	mu      sync.Mutex // serializes Reload
	digest  [sha256.Size]byte
	reloads atomic.Int64
}

// NewStore loads path (may be "" when extra holds every key) for a server
// of account. An error is the file's: the server must not start on it.
func NewStore(path, account string, extra sigv4.Credentials, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.Default()
	}
	s := &Store{path: path, account: account, extra: extra, log: log}
	d, digest, err := s.load()
	if err != nil {
		return nil, err
	}
	if len(d.Credentials) == 0 {
		return nil, errors.New("--auth needs credentials: --credentials AKID:SECRET or --credentials-file FILE")
	}
	s.digest = digest
	s.cur.Store(d)
	return s, nil
}

// Directory is the current version of the credentials.
func (s *Store) Directory() *Directory { return s.cur.Load() }

// Path is the credentials file ("" if none).
func (s *Store) Path() string { return s.path }

// load reads the file and merges the flag's keys into it.
func (s *Store) load() (*Directory, [sha256.Size]byte, error) {
	var digest [sha256.Size]byte
	d := &Directory{Credentials: sigv4.Credentials{}, byKey: map[string]*Principal{}}
	if s.path != "" {
		data, err := os.ReadFile(s.path)
		if err != nil {
			return nil, digest, err
		}
		digest = sha256.Sum256(data)
		if d, err = LoadFile(s.path, s.account); err != nil {
			return nil, digest, err
		}
	}
	for k, v := range s.extra {
		if _, taken := d.byKey[k]; taken {
			return nil, digest, errors.New("access key " + k + " is given both in --credentials and in the credentials file")
		}
		d.Credentials[k] = v
		p := &Principal{Name: k, Account: s.account, Root: true}
		d.byKey[k] = p
		d.Principals = append(d.Principals, p)
	}
	return d, digest, nil
}

// Reload reads the file again if its contents changed. A file that does not
// load leaves the current Directory in force and is reported (and logged at
// error level): fix it and it is picked up.
func (s *Store) Reload() (changed bool, err error) {
	if s.path == "" {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := os.ReadFile(s.path)
	if err != nil {
		s.log.Error("authz: the credentials file cannot be read; the previous credentials stay in force", "path", s.path, "err", err)
		return false, err
	}
	if digest := sha256.Sum256(data); bytes.Equal(digest[:], s.digest[:]) {
		return false, nil
	}
	d, digest, err := s.load()
	if err != nil {
		s.log.Error("authz: the credentials file changed but does not load; the previous credentials stay in force", "path", s.path, "err", err)
		return false, err
	}
	s.digest = digest
	s.cur.Store(d)
	s.reloads.Add(1)
	s.log.Info("authz: credentials reloaded", "path", s.path, "principals", len(d.Principals), "keys", len(d.Credentials))
	return true, nil
}

// Watch reloads the file every interval until ctx ends (polling: it works
// for files replaced by rename, by Kubernetes' secret mounts and by
// editors alike).
func (s *Store) Watch(ctx context.Context, interval time.Duration) {
	if s.path == "" {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = s.Reload()
		}
	}
}

// Authenticator checks SigV4 signatures against the Store's current
// credentials, for the signing scopes Services (a sigv4.Authenticator,
// the type the transports and the front door take).
type Authenticator struct {
	Store    *Store
	Services []string
	// MaxPresignExpires and Clock are sigv4.Verifier's.
	MaxPresignExpires time.Duration
	Clock             tidemq.Clock
}

// Authenticate verifies r's signature and returns its access key.
func (a *Authenticator) Authenticate(r *http.Request, body []byte) (string, error) {
	v := sigv4.Verifier{Credentials: a.Store.Directory().Credentials, Services: a.Services,
		MaxPresignExpires: a.MaxPresignExpires, Clock: a.Clock}
	return v.Authenticate(r, body)
}

// ForServices is a copy of a accepting other signing scopes.
func (a *Authenticator) ForServices(services ...string) *Authenticator {
	c := *a
	c.Services = services
	return &c
}
