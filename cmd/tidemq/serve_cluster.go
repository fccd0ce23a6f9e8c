package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/pflag"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/postgres"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/trigger"
)

// clusterOptions are the serve flags of nodes sharing PostgreSQL.
type clusterOptions struct {
	leaseTTL time.Duration
	reload   time.Duration
	// queueStores are more PostgreSQL databases to place queues on
	// (--queue-store, serve_placement.go).
	queueStores []string
}

func (c *clusterOptions) addFlags(f *pflag.FlagSet) {
	f.DurationVar(&c.leaseTTL, "lease-ttl", postgres.DefaultLeaseTTL,
		"with --store postgres: how long the node running triggers, alarm notifications and SNS redeliveries holds its lease without renewing it (a dead node is replaced within 4/3 of it)")
	f.DurationVar(&c.reload, "cluster-reload", 2*time.Second,
		"with --store postgres: how often each node reloads the topics, subscriptions and triggers as a safety net (other nodes' changes are announced and seen within milliseconds)")
	f.StringArrayVar(&c.queueStores, "queue-store", nil,
		"with --store postgres: another PostgreSQL database (on another cluster) to place queues on; repeat it, or give several separated by spaces. --store stays the home database (topics, triggers, leases, the placement table, and queues too); every node must be given the same list")
}

func (c *clusterOptions) check() error {
	if c.leaseTTL < 3*time.Second {
		return fmt.Errorf("--lease-ttl must be at least 3s, not %v", c.leaseTTL)
	}
	if c.reload <= 0 {
		return fmt.Errorf("--cluster-reload must be positive, not %v", c.reload)
	}
	return nil
}

// leaderLease is the one lease of the jobs that run on one node: the
// triggers, the alarm notifications and the SNS outbox redelivery (one
// lease, so that the alarms about triggers read the counters of the node
// that runs them).
const leaderLease = "leader"

// cluster is what a node sharing PostgreSQL with others runs besides the
// broker: the shared store of topics, subscriptions, the SNS outbox and
// triggers (postgres.KV: sns/ and trg/ keys, as in Pebble), and the leases.
type cluster struct {
	pool   *pgxpool.Pool
	kv     *postgres.KV
	leases *postgres.Leases
	node   string
	log    *slog.Logger
	// The leader lease's jobs end with leadCtx; the node lease with nodeCtx,
	// last, once this node has stopped delivering (else the leader would
	// take over its outbox while it still delivers).
	leadCtx, nodeCtx   context.Context
	stopLead, stopNode context.CancelFunc
	leadWG, nodeWG     sync.WaitGroup
}

// openCluster connects the node to the shared store and starts holding
// its node lease (others read it to tell that it is alive).
func (o *serveOptions) openCluster(log *slog.Logger) (*cluster, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := postgres.PoolConfig(o.store)
	if err != nil {
		return nil, fmt.Errorf("--store %s: %w", redactDSN(o.store), err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("--store %s: %w", redactDSN(o.store), err)
	}
	kv, err := postgres.OpenKV(ctx, postgres.Options{Pool: pool})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("--store %s: %w", redactDSN(o.store), err)
	}
	node := nodeID()
	leases, err := postgres.NewLeases(pool, postgres.LeaseOptions{Holder: node, TTL: o.cluster.leaseTTL, Logger: log})
	if err != nil {
		pool.Close()
		return nil, err
	}
	c := &cluster{pool: pool, kv: kv, leases: leases, node: node, log: log}
	c.leadCtx, c.stopLead = context.WithCancel(context.Background())
	c.nodeCtx, c.stopNode = context.WithCancel(context.Background())
	c.nodeWG.Add(1)
	go func() {
		defer c.nodeWG.Done()
		leases.Hold(c.nodeCtx, postgres.NodeLease(node), func(ctx context.Context) { <-ctx.Done() })
	}()
	log.Info("sharing PostgreSQL with other nodes: queues, topics, subscriptions, the SNS outbox and triggers",
		"node", node, "lease_ttl", o.cluster.leaseTTL, "reload", o.cluster.reload)
	return c, nil
}

// nodeID names this process among the nodes: the host name and a random
// suffix (a restarted node is a new node; what the old one left is taken
// over like a dead node's).
func nodeID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
}

// leaderBroker is the broker of the triggers: on nodes sharing PostgreSQL,
// their receives, deletes and failure records carry the leader lease's
// fence, so that a node paused past its lease cannot touch a message once
// another node took over (tidemq.FencedBroker). Alone, b itself.
func (c *cluster) leaderBroker(b tidemq.Broker) tidemq.Broker {
	if c == nil {
		return b
	}
	return tidemq.FencedBroker(b, func() tidemq.Fence { return c.leases.Fence(leaderLease) })
}

// lead runs the one-node jobs while this node holds the leader lease. Each
// job's context carries the lease's fence: the SNS redelivery's claims are
// refused by the database once the token is stale, and the alarm webhook
// checks it before each notification.
func (c *cluster) lead(trg *trigger.Manager, hook *alarms.LeaderWebhook, topics *topicstore.Service) {
	interval := c.leases.TTL() / 3
	if hook != nil {
		hook.Fence, hook.Logger = c.leases.Check, c.log
	}
	c.leadWG.Add(1)
	go func() {
		defer c.leadWG.Done()
		c.leases.Hold(c.leadCtx, leaderLease, func(ctx context.Context) {
			c.log.Info("this node now runs the triggers, the alarm notifications and the SNS redeliveries", "node", c.node)
			var wg sync.WaitGroup
			run := func(f func(context.Context)) {
				wg.Add(1)
				go func() { defer wg.Done(); f(ctx) }()
			}
			run(trg.Lead)
			if hook != nil {
				run(hook.Lead)
			}
			run(func(ctx context.Context) { topics.Redeliver(ctx, c.alive, interval) })
			wg.Wait()
		})
	}()
}

// watch reloads the topic service's and the triggers' registries as soon
// as another node changes them (a NOTIFY, postgres.KV.Watch), until the
// node stops.
func (c *cluster) watch(trg *trigger.Manager, topics *topicstore.Service) {
	c.nodeWG.Add(1)
	go func() {
		defer c.nodeWG.Done()
		c.kv.Watch(c.nodeCtx, func(lock string) {
			if lock == "" || lock == topicstore.RegistryLock {
				topics.Invalidate()
			}
			if lock == "" || lock == trigger.RegistryLock {
				trg.Invalidate()
			}
		}, func(msg string, err error) { c.log.Warn(msg, "err", err) })
	}()
}

// nodeID names this node, or is "" without a cluster.
func (c *cluster) nodeID() string {
	if c == nil {
		return ""
	}
	return c.node
}

// alive reports whether node holds its node lease.
func (c *cluster) alive(ctx context.Context, node string) (bool, error) {
	return c.leases.Alive(ctx, postgres.NodeLease(node))
}

// stopLeading stops the leader's jobs and gives its lease up, so that
// another node takes over at once.
func (c *cluster) stopLeading() {
	if c == nil {
		return
	}
	c.stopLead()
	c.leadWG.Wait()
}

// close gives the node lease up (the outbox records this node leaves are
// then taken over by the leader) and closes the connections; the shared
// store's shares are closed by their users before.
func (c *cluster) close() {
	if c == nil {
		return
	}
	c.stopLeading()
	c.stopNode()
	c.nodeWG.Wait()
	c.pool.Close()
}

// exclusively runs f while no other node runs an exclusively of the same
// name (a PostgreSQL advisory lock): the topic service's first start
// creates the signing key with a read then a write, which two nodes
// starting together would race on.
func (c *cluster) exclusively(name string, f func() error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('tidemq:' || $1))`, name); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock(hashtext('tidemq:' || $1))`, name)
	return f()
}
