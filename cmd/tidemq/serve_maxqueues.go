package main

import (
	"context"
	"sync"
	"time"

	"github.com/tidemq/tidemq"
)

// queueCapped refuses CreateQueue of a new queue once the server holds
// --max-queues queues: every queue costs memory and disk even empty, and a
// client creating queues in a loop must meet a limit before the process
// does. The count is the broker's (its snapshot), taken at start and every
// recount, and kept up to date between by the creates and deletes this
// node answers; with several nodes sharing PostgreSQL, another node's
// creates are seen at the next recount, so the limit may be passed by what
// the nodes create in the meantime.
type queueCapped struct {
	tidemq.Broker
	max int

	mu      sync.Mutex
	n       int
	counted time.Time
}

// queueRecount is how often the count is taken from the broker again.
const queueRecount = time.Minute

func newQueueCapped(b tidemq.Broker, max int) *queueCapped {
	return &queueCapped{Broker: b, max: max}
}

// Unwrap returns the capped broker (see summaryOf).
func (b *queueCapped) Unwrap() tidemq.Broker { return b.Broker }

// countLocked is the number of queues, taken from the broker when it is
// older than queueRecount: counted by the broker where it can
// (tidemq.QueueCounter), else the length of a snapshot. A count that
// fails keeps the last one. Called with mu held.
func (b *queueCapped) countLocked() int {
	if time.Since(b.counted) <= queueRecount {
		return b.n
	}
	if c, ok := unwrapTo[tidemq.QueueCounter](b.Broker); ok {
		if n, err := c.QueueCount(); err == nil {
			b.n, b.counted = n, time.Now()
		}
		return b.n
	}
	b.n, b.counted = len(b.Broker.Snapshot()), time.Now()
	return b.n
}

// SendToQueues passes through (see tidemq.QueuesSender).
func (b *queueCapped) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	return tidemq.SendToQueues(ctx, b.Broker, ps)
}

func (b *queueCapped) CreateQueue(ctx context.Context, p tidemq.CreateQueueParams) (*tidemq.QueueInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.countLocked() >= b.max {
		// An existing queue is not a new one: CreateQueue of it answers
		// as always.
		if _, err := b.Broker.GetQueue(ctx, tidemq.GetQueueParams{Name: p.Name}); err != nil {
			return nil, tidemq.Errorf(tidemq.ErrOverLimit,
				"The server holds its maximum of %d queues (--max-queues): delete queues before creating more.", b.max)
		}
		return b.Broker.CreateQueue(ctx, p)
	}
	_, existed := b.Broker.GetQueue(ctx, tidemq.GetQueueParams{Name: p.Name})
	res, err := b.Broker.CreateQueue(ctx, p)
	if err == nil && existed != nil {
		b.n++
	}
	return res, err
}

func (b *queueCapped) DeleteQueue(ctx context.Context, p tidemq.DeleteQueueParams) error {
	err := b.Broker.DeleteQueue(ctx, p)
	if err == nil {
		b.mu.Lock()
		b.n = max(b.n-1, 0)
		b.mu.Unlock()
	}
	return err
}
