package tidemq

import (
	"context"
	"errors"
)

// QueuesSender is a Broker that can send to several queues in one durable
// write: the embedded engine, whose queues share one store, and PostgreSQL
// (one statement; standard queues only, see ErrNotTogether). SNS uses it for
// a fan-out whose deliveries all go to SQS queues: the deliveries of one
// publish are either all in their queues, durable together, or none is,
// so no outbox record is needed to finish a fan-out left half way.
//
// SendToQueues sends each of ps as SendMessages would send it alone (the
// same checks, the same results; FIFO deduplication applies), with one
// difference: it is all or nothing. If any ps fails as a whole, or any
// entry would fail, nothing is sent and the error is the first problem
// found; the caller sends them the ordinary way to learn each one's fate.
// Otherwise the results are one slice per ps, in order, and every entry
// is durable when it returns. A queue's byte limit (--max-queue-bytes) is
// checked once per queue, as for one request. A broker that can write
// only some queues together answers ErrNotTogether for the others, once
// every ps passed the checks above, and sends nothing.
//
// A wrapper of a Broker that changes SendMessages must change
// SendToQueues the same way, or not offer it (SendToQueues below then
// answers ErrNoQueuesSender).
type QueuesSender interface {
	SendToQueues(ctx context.Context, ps []SendMessagesParams) ([][]SendResult, error)
}

// ErrNoQueuesSender is SendToQueues's answer for a Broker that cannot send
// to several queues in one write. It never reaches a client: the caller
// falls back to SendMessages.
var ErrNoQueuesSender = errors.New("tidemq: the broker cannot send to several queues in one write")

// ErrNotTogether is SendToQueues's answer when ps are valid but the
// broker cannot write these queues in one write (PostgreSQL, when any is
// a FIFO queue: a FIFO send takes its queue's lock, which a write to
// several queues would have to take in turn). Nothing was sent. It never
// reaches a client: the caller sends ps the ordinary way, this time.
var ErrNotTogether = errors.New("tidemq: the broker cannot send to these queues in one write")

// SendToQueues sends ps through b's SendToQueues, or answers
// ErrNoQueuesSender if b has none.
func SendToQueues(ctx context.Context, b Broker, ps []SendMessagesParams) ([][]SendResult, error) {
	if qs, ok := b.(QueuesSender); ok {
		return qs.SendToQueues(ctx, ps)
	}
	return nil, ErrNoQueuesSender
}
