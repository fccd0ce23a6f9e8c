package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

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
	switch {
	case o.store == "" || o.store == "pebble":
		return nil
	case isPostgresStore(o.store):
		if o.inMemory {
			return errors.New("--in-memory and --store postgres://... both say where queues live: pick one")
		}
		if _, err := url.Parse(o.store); err != nil {
			return fmt.Errorf("--store: not a postgres:// URL: %w", err)
		}
		return nil
	}
	return fmt.Errorf("--store must be pebble (the default: --data-dir) or a postgres://user@host/db URL, not %q", redactDSN(o.store))
}

// redactDSN hides a password in a connection URL, for messages and logs.
func redactDSN(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
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
	return pebble.Open(o.dataDir, pebble.Options{Logger: log})
}

// openBroker opens the queues' broker: the engine on shared (the local
// store), or the PostgreSQL broker with --store postgres://..., which
// does not use shared (the cluster's KV) but closes it when it closes.
func (o *serveOptions) openBroker(shared storage.Store, log *slog.Logger) (tidemq.Broker, error) {
	if !isPostgresStore(o.store) {
		return engine.Open(engine.Options{Store: shared, Region: o.region, AccountID: o.accountID, Logger: log})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := postgres.Open(ctx, postgres.Options{DSN: o.store, Region: o.region, AccountID: o.accountID, Logger: log})
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
	case isPostgresStore(o.store):
		return redactDSN(o.store)
	case o.inMemory:
		return "memory"
	}
	return o.dataDir
}
