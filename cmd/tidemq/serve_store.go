package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/postgres"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/pebble"
)

// isPostgresStore reports whether --store names a PostgreSQL database.
func isPostgresStore(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// checkStore validates --store against the other storage flags.
func (o *serveOptions) checkStore() error {
	if len(o.cluster.queueStoreList()) > 0 && !isPostgresStore(o.store) {
		return errors.New("--queue-store places queues on more PostgreSQL databases besides --store postgres://...: give --store a postgres:// URL too (the home database)")
	}
	switch {
	case o.store == "" || o.store == "pebble":
		return nil
	case isPostgresStore(o.store):
		if o.inMemory {
			return errors.New("--in-memory and --store postgres://... both say where queues live: pick one")
		}
		if err := checkPostgresURL("--store", o.store); err != nil {
			return err
		}
		return o.checkQueueStores()
	}
	return fmt.Errorf("--store must be pebble (the default: --data-dir) or a postgres://user@host/db URL, not %q", redactDSN(o.store))
}

// checkPostgresURL checks that flag's value s parses as a URL.
func checkPostgresURL(flag, s string) error {
	if _, err := url.Parse(s); err != nil {
		var ue *url.Error // its message quotes the whole URL, password and all
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%s %s: not a postgres:// URL: %v", flag, redactDSN(s), err)
	}
	return nil
}

// redactDSN hides the passwords of a connection URL, for messages and
// logs: the userinfo's and those given as query parameters (password=,
// sslpassword=). A URL that does not parse is redacted as text, and its
// query left out.
func redactDSN(s string) string {
	if !strings.Contains(s, "://") {
		// Not a URL: perhaps libpq's keyword/value form (host=db
		// password=secret), which url.Parse takes for a path.
		return kvPassword.ReplaceAllString(s, "${1}xxxxx")
	}
	u, err := url.Parse(s)
	if err != nil {
		return redactDSNText(s)
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			u.RawQuery = "xxxxx"
		} else {
			changed := false
			for k := range q {
				if isPasswordParam(k) {
					q[k] = []string{"xxxxx"}
					changed = true
				}
			}
			if changed {
				u.RawQuery = q.Encode()
			}
		}
	}
	return u.String()
}

// kvPassword matches the value of a password keyword of libpq's
// keyword/value connection string, quoted ('a b\'c') or not.
var kvPassword = regexp.MustCompile(`(?i)(\b[a-z_]*password[a-z_]*\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)

// isPasswordParam reports whether a connection URL's query parameter holds
// a password.
func isPasswordParam(k string) bool {
	return strings.Contains(strings.ToLower(k), "password")
}

// redactDSNText redacts a connection URL that does not parse: the
// password of its userinfo (between the first ':' and the last '@' of the
// authority) and its whole query.
func redactDSNText(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i] + "?xxxxx"
	}
	start := 0
	if k := strings.Index(s, "://"); k >= 0 {
		start = k + len("://")
	}
	end := len(s)
	if e := strings.IndexAny(s[start:], "/?"); e >= 0 {
		end = start + e
	}
	at := strings.LastIndexByte(s[start:end], '@')
	if at < 0 {
		return s
	}
	userinfo := s[start : start+at]
	if c := strings.IndexByte(userinfo, ':'); c >= 0 {
		userinfo = userinfo[:c] + ":xxxxx"
	}
	return s[:start] + userinfo + s[start+at:]
}

// openLocalStore opens the node-local store: Pebble in --data-dir, or
// memory with --in-memory. It holds the queues, the topics, the SNS outbox
// and the triggers; with --store postgres it is not opened (openCluster
// opens the shared store instead).
func (o *serveOptions) openLocalStore(log *slog.Logger) (storage.Store, error) {
	if o.inMemory {
		log.Warn("running in memory: nothing survives this process")
		return mem.New(), nil
	}
	privateFiles()
	if err := os.MkdirAll(o.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	if fi, err := os.Stat(o.dataDir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("the data directory can be read by other users of this machine: it holds message bodies and secrets (chmod 700 it)",
			"dir", o.dataDir, "mode", fi.Mode().Perm().String())
	}
	return pebble.Open(o.dataDir, pebble.Options{Logger: log, TruncateCorruptWAL: o.truncateCorruptWAL})
}

// openBroker opens the queues' broker: the engine on shared (the local
// store), or the PostgreSQL broker with --store postgres://..., which
// does not use shared (the cluster's KV) but closes it when it closes.
func (o *serveOptions) openBroker(shared storage.Store, cl *cluster, log *slog.Logger) (tidemq.Broker, error) {
	if !isPostgresStore(o.store) {
		pageSize := engine.DefaultPageSize // the backlog of standard queues stays on disk
		if o.inMemory {
			pageSize = 0
		}
		return engine.Open(engine.Options{Store: shared, Region: o.region, AccountID: o.accountID, Logger: log, PageSize: pageSize,
			MaxQueueBytes: o.maxQueueBytes})
	}
	if len(o.cluster.queueStoreList()) > 0 {
		b, err := o.openPlacement(cl, log)
		if err != nil {
			return nil, err
		}
		return closesStore{b, shared}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := postgres.Open(ctx, postgres.Options{DSN: o.store, Region: o.region, AccountID: o.accountID, Logger: log,
		MaxQueueBytes: o.maxQueueBytes})
	if err != nil {
		return nil, fmt.Errorf("--store %s: %w", redactDSN(o.store), err)
	}
	return closesStore{b, shared}, nil
}

// closesStore is a Broker that does not use its share of the local store
// and closes it when it closes (the last share closes the store).
type closesStore struct {
	tidemq.Broker
	share storage.Store
}

func (c closesStore) Close() error {
	return errors.Join(c.Broker.Close(), c.share.Close())
}

// storeDescription says where the queues are, for the start-up log line.
func (o *serveOptions) storeDescription() string {
	switch {
	case isPostgresStore(o.store) && len(o.cluster.queueStoreList()) > 0:
		return fmt.Sprintf("%s and %d more databases for queues (--queue-store)", redactDSN(o.store), len(o.cluster.queueStoreList()))
	case isPostgresStore(o.store):
		return redactDSN(o.store)
	case o.inMemory:
		return "memory"
	}
	return o.dataDir
}

// secretsOnCommandLine names the flags given on the command line (not
// through their TIDEMQ_ variables) that carry a secret: --store with a
// password, --credentials.
func secretsOnCommandLine(fs *pflag.FlagSet, o *serveOptions) []string {
	var out []string
	if onCommandLine(fs, "store") && redactDSN(o.store) != o.store {
		out = append(out, "store")
	}
	for _, q := range o.cluster.queueStores {
		if onCommandLine(fs, "queue-store") && redactDSN(q) != q {
			out = append(out, "queue-store")
			break
		}
	}
	if onCommandLine(fs, "credentials") && o.credentials != "" {
		out = append(out, "credentials")
	}
	return out
}
