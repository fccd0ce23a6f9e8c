package authz

import (
	"context"
	"sync"
	"time"

	"github.com/tidemq/tidemq"
)

// queuePolicies keeps each queue's Policy text, as read through
// Authorizer.QueuePolicy, for Authorizer.QueuePolicyTTL: on PostgreSQL that
// read is a transaction of its own on every call that names a queue
// (docs/performance.md measures it), and policies change rarely.
//
// Invariants: an entry is never used after its deadline (the Clock's);
// ForgetQueue removes the queue's entry, and a read that began before a
// forget does not store what it read (the epoch tells), so that a change
// made through this node is decided with the next call. Only texts are
// kept (parsing is policyCache's), never errors, nor the absence of a
// queue: a name nobody created costs a read each time, as without a
// cache, and cannot fill the map. The map holds at most
// maxCachedQueuePolicies entries.
type queuePolicies struct {
	mu    sync.Mutex
	m     map[string]queuePolicy
	epoch uint64 // bumped by every forget
}

type queuePolicy struct {
	text  string
	until time.Time
}

const maxCachedQueuePolicies = 1 << 16

func (a *Authorizer) clock() tidemq.Clock {
	if a.Clock == nil {
		return tidemq.SystemClock{}
	}
	return a.Clock
}

// ForgetQueue drops what the cache holds of a queue's policy (its name as
// the broker knows it): the next call reads it again. "" forgets every
// queue.
func (a *Authorizer) ForgetQueue(name string) {
	q := &a.queues
	q.mu.Lock()
	defer q.mu.Unlock()
	q.epoch++
	if name == "" {
		q.m = nil
		return
	}
	delete(q.m, name)
}

// get returns the queue's policy text, from the cache while its entry
// lasts, else from read (and keeps it when ttl > 0).
func (q *queuePolicies) get(ctx context.Context, clock tidemq.Clock, ttl time.Duration, name string,
	read func(context.Context, string) (string, error)) (string, error) {
	if ttl <= 0 {
		return read(ctx, name)
	}
	now := clock.Now()
	q.mu.Lock()
	e, ok := q.m[name]
	epoch := q.epoch
	q.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.text, nil
	}
	text, err := read(ctx, name)
	if err != nil {
		return "", err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.epoch != epoch {
		return text, nil // forgotten meanwhile: what was read may be older than the change
	}
	if q.m == nil {
		q.m = map[string]queuePolicy{}
	}
	if len(q.m) >= maxCachedQueuePolicies {
		for k, e := range q.m {
			if !now.Before(e.until) {
				delete(q.m, k)
			}
		}
		if len(q.m) >= maxCachedQueuePolicies {
			q.m = map[string]queuePolicy{}
		}
	}
	q.m[name] = queuePolicy{text: text, until: now.Add(ttl)}
	return text, nil
}
