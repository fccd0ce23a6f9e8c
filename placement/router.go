package placement

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tidemq/tidemq"
)

// Cluster is one cluster queues are placed on: its identity (what the
// placement table names) and its broker.
type Cluster struct {
	ID     string
	Broker tidemq.Broker
}

// Table is the placement table (postgres.Placements). Its rows never
// change once made, so the Router caches them for good.
type Table interface {
	// Lookup returns the cluster a queue name is placed on.
	Lookup(ctx context.Context, queue string) (cluster string, ok bool, err error)
	// Place places queue on cluster unless it is placed already, and
	// returns where it is.
	Place(ctx context.Context, queue, cluster string) (string, error)
	// Counts returns how many names are placed on each cluster.
	Counts(ctx context.Context) (map[string]int, error)
}

// Options configure a Router.
type Options struct {
	// Clusters are the clusters, the home cluster (leases, topics,
	// triggers, the placement table) first. At least one; their IDs
	// differ.
	Clusters []Cluster
	Table    Table
	// Region and AccountID are the brokers' (queue names and ARNs).
	Region, AccountID string
	// CheckFence reports whether the fence a context carries is current,
	// against the home database (postgres.Leases.Check). Nil: writes that
	// carry a fence are refused on any cluster but the home one.
	CheckFence func(ctx context.Context) error
}

// Router is a tidemq.Broker over several clusters' brokers. It owns them:
// Close closes every one.
type Router struct {
	clusters []*Cluster
	byID     map[string]*Cluster
	table    Table
	region   string
	acct     string
	check    func(ctx context.Context) error

	mu    sync.RWMutex
	cache map[string]*Cluster // by canonical queue name; never stale (Table)
}

var _ tidemq.Broker = (*Router)(nil)

// New returns a Router over o's clusters.
func New(o Options) (*Router, error) {
	if len(o.Clusters) == 0 || o.Table == nil {
		return nil, errors.New("placement: no cluster or no table")
	}
	r := &Router{byID: map[string]*Cluster{}, table: o.Table, region: o.Region, acct: o.AccountID,
		check: o.CheckFence, cache: map[string]*Cluster{}}
	if r.region == "" {
		r.region = tidemq.DefaultRegion
	}
	if r.acct == "" {
		r.acct = tidemq.DefaultAccountID
	}
	for i := range o.Clusters {
		c := o.Clusters[i]
		if c.ID == "" || c.Broker == nil {
			return nil, fmt.Errorf("placement: cluster %d has no identity or no broker", i)
		}
		if r.byID[c.ID] != nil {
			return nil, fmt.Errorf("placement: two clusters have the identity %s (one database given twice, or a copy of another)", c.ID)
		}
		r.clusters = append(r.clusters, &c)
		r.byID[c.ID] = &c
	}
	return r, nil
}

func (r *Router) home() *Cluster { return r.clusters[0] }

func (r *Router) canonical(name string) string { return tidemq.CanonicalQueueName(name, r.region) }

// cluster returns the cluster of a placement row.
func (r *Router) cluster(queue, id string) (*Cluster, error) {
	c := r.byID[id]
	if c == nil {
		return nil, unknownCluster(queue, id)
	}
	return c, nil
}

// placed returns the cluster of a queue name, or nil when the name has no
// placement (no such queue, or one made before placement was turned on
// and not found on any cluster yet).
func (r *Router) placed(ctx context.Context, name string) (*Cluster, error) {
	name = r.canonical(name)
	r.mu.RLock()
	c := r.cache[name]
	r.mu.RUnlock()
	if c != nil {
		return c, nil
	}
	id, ok, err := r.table.Lookup(ctx, name)
	if err != nil || !ok {
		return nil, err
	}
	if c, err = r.cluster(name, id); err != nil {
		return nil, err
	}
	r.remember(name, c)
	return c, nil
}

func (r *Router) remember(name string, c *Cluster) {
	r.mu.Lock()
	r.cache[name] = c
	r.mu.Unlock()
}

// of returns the cluster a request on queue name runs on: where it is
// (locate), or, found nowhere, the home cluster, which answers with its
// own validation, then QueueDoesNotExist.
func (r *Router) of(ctx context.Context, name string) (*Cluster, error) {
	c, err := r.locate(ctx, name)
	if c == nil && err == nil {
		c = r.home()
	}
	return c, err
}

// locate returns the cluster of queue name, or nil when it is nowhere. A
// name with no placement is looked for on every cluster (a queue made
// before placement was turned on, or by a node not given the other
// clusters) and placed where it is found.
func (r *Router) locate(ctx context.Context, name string) (*Cluster, error) {
	c, err := r.placed(ctx, name)
	if c != nil || err != nil {
		return c, err
	}
	if c, err = r.find(ctx, name); c == nil || err != nil {
		return nil, err
	}
	return r.place(ctx, name, c)
}

// place places queue name on c unless it is placed already, and returns
// the cluster it is placed on.
func (r *Router) place(ctx context.Context, name string, c *Cluster) (*Cluster, error) {
	name = r.canonical(name)
	id, err := r.table.Place(ctx, name, c.ID)
	if err != nil {
		return nil, err
	}
	if c, err = r.cluster(name, id); err != nil {
		return nil, err
	}
	r.remember(name, c)
	return c, nil
}

// find returns the cluster that has a queue name, or nil when every
// cluster answers that it has none. A cluster that cannot answer is an
// error: the queue may be there.
func (r *Router) find(ctx context.Context, name string) (*Cluster, error) {
	for _, c := range r.clusters {
		_, err := c.Broker.GetQueue(ctx, tidemq.GetQueueParams{Name: name})
		if err == nil {
			return c, nil
		}
		if !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
			return nil, err
		}
	}
	return nil, nil
}

// ofARN returns the cluster of the queue an ARN names; a malformed or
// foreign ARN goes to the home cluster, which refuses it.
func (r *Router) ofARN(ctx context.Context, arn string) (*Cluster, error) {
	name, ok := tidemq.QueueNameOfARN(arn, r.region, r.acct)
	if !ok {
		return r.home(), nil
	}
	return r.of(ctx, name)
}

// choose picks the cluster of a new queue: its dead-letter queue's when
// its RedrivePolicy names one that is placed, else its capture queue's
// (tidemq.CaptureExpiredTag), else the one with the fewest names.
func (r *Router) choose(ctx context.Context, attrs, tags map[string]string) (*Cluster, error) {
	for _, name := range []string{r.deadLetterQueue(attrs), r.captureQueue(tags)} {
		if name == "" {
			continue
		}
		if c, err := r.locate(ctx, name); c != nil || err != nil {
			return c, err
		}
	}
	counts, err := r.table.Counts(ctx)
	if err != nil {
		return nil, err
	}
	best := r.home()
	for _, c := range r.clusters[1:] {
		if counts[c.ID] < counts[best.ID] {
			best = c
		}
	}
	return best, nil
}

// fenced returns the context to call c with: ctx itself on the home
// cluster, where the broker checks a fence in the write's transaction;
// elsewhere, once the fence ctx carries is checked against the home
// database, ctx without it (that cluster has no leases to check it
// against) but with the check (tidemq.WithFenceCheck), which a long poll
// makes again before each look at its queue.
func (r *Router) fenced(ctx context.Context, c *Cluster) (context.Context, error) {
	if c == r.home() {
		return ctx, nil
	}
	f, ok := tidemq.FenceOf(ctx)
	if !ok {
		return ctx, nil
	}
	if r.check == nil {
		return nil, tidemq.ErrFenced
	}
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	again := func(ctx context.Context) error { return r.check(tidemq.WithFence(ctx, f)) }
	return tidemq.WithFenceCheck(tidemq.WithoutFence(ctx), again), nil
}

// sameCluster refuses what would join queues of two clusters: a
// dead-letter queue, a capture queue, a move task's destination, a move's
// destination. With claim (a dead-letter or capture queue), a name not
// placed yet is placed on c, with the queue that names it, so that the
// queue created by that name later is on c: a queue's dead-letter or
// capture queue may be named before it is created (a refused
// RedrivePolicy included; the cluster refuses a dead-letter queue that
// does not exist, and the name stays placed).
func (r *Router) sameCluster(ctx context.Context, param, value string, c *Cluster, other string, claim bool) error {
	if other == "" {
		return nil
	}
	o, err := r.locate(ctx, other)
	if err != nil {
		return err
	}
	if o == nil {
		if !claim || !r.validName(other) {
			return nil // the cluster refuses it in its own words
		}
		if o, err = r.place(ctx, other, c); err != nil {
			return err
		}
	}
	if o == c {
		return nil
	}
	return otherCluster(param, value, other)
}

// validName reports whether name (plain or "[<region>/][<account>:]<name>")
// is a queue name a queue could have: only those are placed before they
// exist.
func (r *Router) validName(name string) bool {
	_, account, plain := tidemq.SplitQualifiedName(name, r.region, r.acct)
	return plain != "" && tidemq.ValidAccount(account) && tidemq.ValidateQueueName(plain, strings.HasSuffix(plain, ".fifo")) == nil
}

// deadLetterQueue is the name of the queue a RedrivePolicy in attrs
// names, or "".
func (r *Router) deadLetterQueue(attrs map[string]string) string {
	p, err := tidemq.ParseRedrivePolicy(attrs[tidemq.AttrRedrivePolicy])
	if err != nil {
		return "" // none, or one the cluster's broker refuses in its own words
	}
	name, _ := tidemq.QueueNameOfARN(p.DeadLetterTargetARN, r.region, r.acct)
	return name
}

// captureQueue is the name of the queue tidemq.CaptureExpiredTag in tags
// names (a name or an ARN), or "".
func (r *Router) captureQueue(tags map[string]string) string {
	v := tags[tidemq.CaptureExpiredTag]
	if name, ok := tidemq.QueueNameOfARN(v, r.region, r.acct); ok {
		return name
	}
	return v
}

// checkJoins refuses a RedrivePolicy (in attrs) or a capture tag (in
// tags) naming a queue on another cluster than c.
func (r *Router) checkJoins(ctx context.Context, c *Cluster, attrs, tags map[string]string) error {
	if dlq := r.deadLetterQueue(attrs); dlq != "" {
		if err := r.sameCluster(ctx, tidemq.AttrRedrivePolicy, attrs[tidemq.AttrRedrivePolicy], c, dlq, true); err != nil {
			return err
		}
	}
	if capture := r.captureQueue(tags); capture != "" {
		return r.sameCluster(ctx, "Tags", tidemq.CaptureExpiredTag, c, capture, true)
	}
	return nil
}

// each calls f on every cluster, in order, and joins their errors.
func (r *Router) each(f func(c *Cluster) error) error {
	var errs []error
	for _, c := range r.clusters {
		if err := f(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Snapshot reports every cluster's queues, sorted by name.
func (r *Router) Snapshot() []tidemq.QueueSnapshot {
	var out []tidemq.QueueSnapshot
	for _, c := range r.clusters {
		out = append(out, c.Broker.Snapshot()...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SnapshotsAfter is tidemq.SnapshotPager over every cluster: the first n
// queues after after of each cluster, merged in name order and cut to n.
func (r *Router) SnapshotsAfter(after string, n int) ([]tidemq.QueueSnapshot, error) {
	var out []tidemq.QueueSnapshot
	for _, c := range r.clusters {
		page, err := tidemq.SnapshotPage(c.Broker, after, n)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out[:min(max(n, 0), len(out))], nil
}

// Visit is tidemq.Visitor over every cluster: each cluster's queues in
// turn, through its own Visit where it has one.
func (r *Router) Visit(f func(*tidemq.QueueSnapshot)) bool {
	for _, c := range r.clusters {
		if !tidemq.VisitQueues(c.Broker, f) {
			return false
		}
	}
	return true
}

// QueueCount is tidemq.QueueCounter over every cluster: the sum of their
// counts.
func (r *Router) QueueCount() (int, error) {
	total := 0
	for _, c := range r.clusters {
		n, err := tidemq.CountQueues(c.Broker)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// Healthy reports nil while every cluster can serve; else the first that
// cannot, named. One cluster down makes the node unhealthy although the
// other clusters' queues still serve: every node is given the same
// clusters, so taking one node out of a balancer helps nothing, and the
// status tells the truth.
func (r *Router) Healthy() error {
	for i, c := range r.clusters {
		if err := c.Broker.Healthy(); err != nil {
			if i == 0 {
				return err
			}
			return fmt.Errorf("queue store %d (cluster %s): %w", i, c.ID, err)
		}
	}
	return nil
}

// Drain drains every cluster's broker.
func (r *Router) Drain() {
	for _, c := range r.clusters {
		c.Broker.Drain()
	}
}

// Close closes every cluster's broker.
func (r *Router) Close() error {
	return r.each(func(c *Cluster) error { return c.Broker.Close() })
}
