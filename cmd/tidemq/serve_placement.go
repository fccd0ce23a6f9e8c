package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/placement"
	"github.com/tidemq/tidemq/postgres"
)

// Queues over several PostgreSQL clusters (package placement): --store is
// the home database, --queue-store names the others. Every database gets
// a broker; the placement table is the home database's.

// queueStoreList splits the --queue-store values: each may hold several
// URLs separated by spaces (the way $TIDEMQ_QUEUE_STORE gives several).
func (c *clusterOptions) queueStoreList() []string {
	var out []string
	for _, v := range c.queueStores {
		out = append(out, strings.Fields(v)...)
	}
	return out
}

// checkQueueStores checks the --queue-store URLs: PostgreSQL URLs, none
// given twice nor equal to --store.
func (o *serveOptions) checkQueueStores() error {
	seen := map[string]bool{o.store: true}
	for _, q := range o.cluster.queueStoreList() {
		if !isPostgresStore(q) {
			return fmt.Errorf("--queue-store must be a postgres://user@host/db URL, not %q", redactDSN(q))
		}
		if err := checkPostgresURL("--queue-store", q); err != nil {
			return err
		}
		if seen[q] {
			return fmt.Errorf("--queue-store %s is given twice (or is --store)", redactDSN(q))
		}
		seen[q] = true
	}
	return nil
}

// openPlacement opens a broker on the home database and on each
// --queue-store database, and the Router over them. A write of the
// leader's jobs on a queue outside the home database checks the leader's
// fence against the home database first (cl.leases.Check).
func (o *serveOptions) openPlacement(cl *cluster, log *slog.Logger) (tidemq.Broker, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var clusters []placement.Cluster
	fail := func(err error) (tidemq.Broker, error) {
		for _, c := range clusters {
			c.Broker.Close()
		}
		return nil, err
	}
	var home *postgres.Broker
	for i, dsn := range append([]string{o.store}, o.cluster.queueStoreList()...) {
		flag := "--queue-store"
		if i == 0 {
			flag = "--store"
		}
		b, err := postgres.Open(ctx, postgres.Options{DSN: dsn, Region: o.region, AccountID: o.accountID, Logger: log,
			MaxQueueBytes: o.maxQueueBytes})
		if err != nil {
			return fail(fmt.Errorf("%s %s: %w", flag, redactDSN(dsn), err))
		}
		clusters = append(clusters, placement.Cluster{Broker: b})
		if clusters[i].ID, err = b.ClusterID(ctx); err != nil {
			return fail(fmt.Errorf("%s %s: its identity: %w", flag, redactDSN(dsn), err))
		}
		if i == 0 {
			home = b
		}
		log.Info("queues placed on PostgreSQL", "store", redactDSN(dsn), "cluster", clusters[i].ID, "home", i == 0)
	}
	var check func(context.Context) error
	if cl != nil {
		check = cl.leases.Check
	}
	r, err := placement.New(placement.Options{Clusters: clusters, Table: home.Placements(),
		Region: o.region, AccountID: o.accountID, CheckFence: check})
	if err != nil {
		return fail(err)
	}
	return r, nil
}
