package engine

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
)

// queueRecord is a queue as stored under q/<name>.
type queueRecord struct {
	ID         uint64            `json:"id"`
	Name       string            `json:"name"`
	FIFO       bool              `json:"fifo"`
	Attributes map[string]string `json:"attributes"`
	Tags       map[string]string `json:"tags,omitempty"`
	Created    time.Time         `json:"created"`
	Modified   time.Time         `json:"modified"`
	Purged     time.Time         `json:"purged,omitzero"`
}

func (q *queue) record() []byte {
	b, _ := json.Marshal(queueRecord{
		ID: q.id, Name: q.name, FIFO: q.fifo, Attributes: q.attrs, Tags: q.tags,
		Created: q.created.Time(), Modified: q.modified.Time(), Purged: q.purged.Time(),
	})
	return b
}

func (q *queue) info() *tidemq.QueueInfo {
	return &tidemq.QueueInfo{Name: q.name, ARN: q.arn(), FIFO: q.fifo}
}

// CreateQueue creates a queue, or returns the existing one when every given
// attribute matches it.
func (e *Engine) CreateQueue(ctx context.Context, p tidemq.CreateQueueParams) (_ *tidemq.QueueInfo, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	fifo, attrs, err := p.Validate()
	if err != nil {
		return nil, err
	}
	p.Name = e.canonical(p.Name)
	if err := h.lock(); err != nil {
		return nil, err
	}
	if q := e.queues[p.Name]; q != nil {
		// e.mu is released by the guard
		if err := tidemq.CheckExisting(attrs, fifo, q.attrs, q.fifo); err != nil {
			return nil, err
		}
		return q.info(), nil
	}
	merged := tidemq.MergeQueueAttributes(tidemq.DefaultQueueAttributes(fifo), attrs)
	if err := e.checkRedrive(p.Name, fifo, merged); err != nil {
		h.unlock()
		return nil, err
	}
	now := e.clock.Now()
	e.nextQueueID++
	q := e.newQueue(e.nextQueueID, p.Name, fifo)
	q.applyAttributes(merged)
	if len(p.Tags) > 0 {
		q.tags = make(map[string]string, len(p.Tags))
		for k, v := range p.Tags {
			q.tags[k] = v
		}
	}
	q.created, q.modified = stampOf(now), stampOf(now)
	e.addQueue(q)
	t := e.begin()
	t.b.Set([]byte(keyNextQueue), uint64Value(e.nextQueueID))
	t.b.Set(queueKey(q.name), q.record())
	q.reserveSeqs(t)
	info := q.info()
	return info, e.finish(&h, t)
}

// checkRedrive validates a RedrivePolicy against the other queues: the
// target exists, has the same type, and its RedriveAllowPolicy lets this
// queue in. Called with e.mu held.
func (e *Engine) checkRedrive(name string, fifo bool, attrs map[string]string) error {
	return tidemq.CheckRedrive(attrs, e.region, name, e.arn(name), fifo, func(arn string) (*tidemq.RedriveTarget, error) {
		if dlq := e.queueByARN(arn); dlq != nil {
			return &tidemq.RedriveTarget{Name: dlq.name, ARN: dlq.arn(), FIFO: dlq.fifo, Allow: dlq.Allow}, nil
		}
		return nil, nil
	})
}

// GetQueue reports a queue by name.
func (e *Engine) GetQueue(ctx context.Context, p tidemq.GetQueueParams) (_ *tidemq.QueueInfo, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := h.lock(); err != nil {
		return nil, err
	}
	// e.mu is released by the guard
	q, err := e.queue(p.Name)
	if err != nil {
		return nil, err
	}
	return q.info(), nil
}

// DeleteQueue deletes a queue and all its messages at once.
func (e *Engine) DeleteQueue(ctx context.Context, p tidemq.DeleteQueueParams) (err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return err
	}
	q, err := e.queue(p.Queue)
	if err != nil {
		h.unlock()
		return err
	}
	t := e.begin()
	e.dropMessages(q, t)
	e.removeQueue(q)
	t.b.Delete(queueKey(q.name))
	t.b.Delete(idKey(prefixCounter, q.id))
	deleteWindows(t, q.id)
	q.wakeAll() // each sees the queue is gone
	return e.finish(&h, t)
}

// dropMessages removes every message of q in O(pending): the indexes are
// replaced, the records range-deleted. Purge and DeleteQueue use it.
func (e *Engine) dropMessages(q *queue, t *txn) uint64 {
	n := uint64(len(q.msgs) + q.cold.n)
	for _, m := range q.pending {
		m.state = stateGone
	}
	q.pending = nil
	// Replacing the indexes drops every other message at once: receipt
	// handles are resolved through q.msgs and timers through q.timers, so
	// nothing can reach the old messages any more.
	q.msgs = nil
	q.ready = nil
	q.timers = nil
	q.byAge.Clear(false)
	q.cold.reset()
	q.dropAhead()
	if q.fifo {
		q.groups = newFIFOIndex(q)
	}
	q.nReady, q.nDelayed, q.nInflight, q.nDeadLettered = 0, 0, 0, 0
	q.bytes = 0
	if q.windows != nil {
		q.windows.attempts, q.windows.attemptOrder = nil, nil
	}
	for _, r := range [][2][]byte{rangeOf(prefixMessage, q.id), rangeOf(prefixState, q.id), rangeOf(prefixHeaders, q.id), rangeOf(prefixGroup, q.id)} {
		t.b.DeleteRange(r[0], r[1])
	}
	return n
}

func rangeOf(prefix string, qid uint64) [2][]byte {
	s, e := queueRange(prefix, qid)
	return [2][]byte{s, e}
}

// PurgeQueue deletes every message, in flight or not, and the deduplication
// window of a FIFO queue; once per 60 seconds.
func (e *Engine) PurgeQueue(ctx context.Context, p tidemq.PurgeQueueParams) (err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return err
	}
	q, err := e.queue(p.Queue)
	if err != nil {
		h.unlock()
		return err
	}
	now := e.clock.Now()
	if q.purged != 0 && now.Sub(q.purged.Time()) < tidemq.PurgeCooldown {
		h.unlock()
		return tidemq.PurgeInProgress(q.name)
	}
	t := e.begin()
	q.count().Purged += e.dropMessages(q, t)
	// A purge also forgets the deduplication window: a message sent again
	// with the id of a purged one is accepted (as SQS does, per the
	// AWS-validated LocalStack suite, localstack#8218).
	if q.windows != nil {
		q.windows.dedup, q.windows.dedupOrder = nil, nil
	}
	deleteWindows(t, q.id)
	q.purged = stampOf(now)
	t.b.Set(queueKey(q.name), q.record())
	return e.finish(&h, t)
}

// ListQueues lists queue names in order, optionally by prefix, in pages.
func (e *Engine) ListQueues(ctx context.Context, p tidemq.ListQueuesParams) (_ *tidemq.ListQueuesResult, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := h.lock(); err != nil {
		return nil, err
	}
	// One region's and one account's queues: those named in the prefix
	// ("eu-west-1/111122223333:ord"), else the engine's own.
	region, account, prefix := tidemq.SplitQualifiedName(p.Prefix, e.region, e.acct)
	names := make([]string, 0, len(e.queues))
	for name := range e.queues {
		if r, a, plain := tidemq.SplitQualifiedName(name, e.region, e.acct); r == region && a == account && strings.HasPrefix(plain, prefix) {
			names = append(names, name)
		}
	}
	h.unlock()
	return tidemq.PageQueueNames(names, p.MaxResults, p.NextToken)
}

// ListDeadLetterSourceQueues lists the queues whose RedrivePolicy targets
// the named queue.
func (e *Engine) ListDeadLetterSourceQueues(ctx context.Context, p tidemq.ListDeadLetterSourceQueuesParams) (_ *tidemq.ListQueuesResult, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := h.lock(); err != nil {
		return nil, err
	}
	dlq, err := e.queue(p.Queue)
	if err != nil {
		h.unlock()
		return nil, err
	}
	var names []string
	arn := dlq.arn()
	for name, q := range e.queues {
		if q.Redrive != nil && q.Redrive.DeadLetterTargetARN == arn {
			names = append(names, name)
		}
	}
	h.unlock()
	return tidemq.PageQueueNames(names, p.MaxResults, p.NextToken)
}

// SetQueueAttributes changes settable attributes. Changes apply at once.
func (e *Engine) SetQueueAttributes(ctx context.Context, p tidemq.SetQueueAttributesParams) (err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return err
	}
	if err := h.lock(); err != nil {
		return err
	}
	q, err := e.queue(p.Queue)
	if err != nil {
		h.unlock()
		return err
	}
	merged, err := p.Merge(q.attrs, q.fifo, func(merged map[string]string) error {
		return e.checkRedrive(q.name, q.fifo, merged)
	})
	if err != nil {
		h.unlock()
		return err
	}
	q.applyAttributes(merged)
	q.modified = stampOf(e.clock.Now())
	t := e.begin()
	t.b.Set(queueKey(q.name), q.record())
	return e.finish(&h, t)
}

// deleteWindows deletes every deduplication record of queue qid, d/ and w/
// (keys.go).
func deleteWindows(t *txn, qid uint64) {
	for _, prefix := range []string{prefixDedup, prefixWindow} {
		start, end := queueRange(prefix, qid)
		t.b.DeleteRange(start, end)
	}
}
