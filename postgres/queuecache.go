package postgres

import (
	"context"
	"strings"
	"sync"
	"time"
)

// The queue rows a node read for its message requests (send, delete,
// receive) are kept for queueCacheTTL, so that a request costs no round
// trip, no JSON decoding of the attributes and no parsing of the settings
// before its own statement.
//
// A change of a queue's row (SetQueueAttributes, tags, permissions, purge,
// DeleteQueue) drops the node's entry once the change committed, and tells
// the other nodes with the next announcement (announce.go), a payload of
// changedPrefix and the queue's name, on which they drop theirs. So another
// node serves a changed queue's old settings for the time an announcement
// takes, and at most queueCacheTTL when one is lost (a node dying between a
// commit and its announcement, or a LISTEN connection lost, which also
// empties the cache). SQS documents that attribute changes take up to 60
// seconds to reach every server.
//
// A send with a cached id of a queue deleted and created again meanwhile
// on another node fails on the foreign key, drops the entry and tries again
// with the row as it is.
//
// The rows in the cache are shared by concurrent requests: nothing may
// change a *queue that came from queueFor. The writers read their own row
// with getQueue, under its lock.
var queueCacheTTL = time.Second // a variable for the tests (export_test.go)

// changedPrefix starts the payload that tells the nodes a queue's row
// changed; a queue name cannot contain ':'.
const changedPrefix = "changed:"

type queueCache struct {
	mu     sync.Mutex
	byName map[string]cachedQueue
	// gen counts the entries dropped: a row read before a drop is not
	// cached after it (it may be the row the change replaced).
	gen uint64
}

type cachedQueue struct {
	q    *queue
	read time.Time // on the broker's Clock
}

// queueFor returns the queue named name for a message request, from the
// cache while it is fresh, else read from the database (db, or the pool
// when nil) and cached.
func (b *Broker) queueFor(ctx context.Context, db querier, name string) (*queue, error) {
	name = b.canonical(name)
	now := b.clock.Now()
	c := &b.queueCache
	c.mu.Lock()
	e, ok := c.byName[name]
	gen := c.gen
	c.mu.Unlock()
	if ok && now.Sub(e.read) < queueCacheTTL && !now.Before(e.read) {
		return e.q, nil
	}
	if db == nil {
		db = b.pool
	}
	q, err := b.getQueue(ctx, db, name, false)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.byName == nil {
		c.byName = map[string]cachedQueue{}
	}
	if c.gen == gen {
		c.byName[name] = cachedQueue{q: q, read: now}
	}
	c.mu.Unlock()
	return q, nil
}

// forgetQueue drops name's entry on this node.
func (b *Broker) forgetQueue(name string) {
	c := &b.queueCache
	c.mu.Lock()
	delete(c.byName, name)
	c.gen++
	c.mu.Unlock()
}

// forgetQueues empties the cache (the LISTEN connection was lost: a
// change may have gone unheard).
func (b *Broker) forgetQueues() {
	c := &b.queueCache
	c.mu.Lock()
	clear(c.byName)
	c.gen++
	c.mu.Unlock()
}

// queueChanged drops name's entry here and, soon, on every other node.
// Call it after the change committed.
func (b *Broker) queueChanged(name string) {
	name = b.canonical(name)
	b.forgetQueue(name)
	b.announce(changedPrefix + name)
}

// heard handles a notification's payload: a changed queue's entry is
// dropped and its waiters woken, a queue name wakes the queue's waiters.
// A change wakes too because one NOTIFY names queues in no set order: a
// wake for the queue may have come first and found the old row still in
// the cache (a long poll on a queue just deleted would then wait its whole
// wait instead of answering QueueDoesNotExist).
func (b *Broker) heard(payload string) {
	if name, ok := strings.CutPrefix(payload, changedPrefix); ok {
		b.forgetQueue(name)
		b.waiters.wake(name)
		return
	}
	b.waiters.wake(payload)
}
