package postgres

import (
	"context"
	"time"

	"github.com/tidemq/tidemq"
)

var _ tidemq.QueuesSender = (*Broker)(nil)

// SendToQueues sends to several standard queues in one statement, all or
// nothing (see tidemq.QueuesSender): every params is checked against its
// queue first (the queue exists, every entry is one it takes), then all
// the messages are inserted by one statement (commitSQL, the group
// commit's, carrying these sends alone), which commits them together or
// not at all, and the call answers once it committed. SNS sends a
// standard topic's fan-out to SQS queues this way, without an outbox
// record.
//
// A FIFO queue among the targets is refused with tidemq.ErrNotTogether
// once everything passed the checks (the caller then sends them one by
// one): a FIFO send takes its queue's lock and runs its own statement
// (sendFIFO), which one write to several queues would have to take in
// turn. SNS never sends to a FIFO queue this way (only a FIFO topic
// delivers to one, and it delivers in order, queue by queue).
//
// The statement runs on a connection of its own, not with the group
// commit: the group's statement is retried request by request when it
// fails, and these rows must stay in one statement. A leader's send is
// fenced in a transaction of its own (onConn).
func (b *Broker) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	for i := range ps {
		if err := ps[i].Validate(); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		queues, results, reqs, err := b.queuesRows(ctx, ps)
		if err != nil {
			return nil, err
		}
		err = b.writeTogether(ctx, reqs)
		if isForeignKeyViolation(err) {
			// A queue was deleted since it was cached, and maybe made
			// again: look again, once.
			for _, q := range queues {
				b.forgetQueue(q.name)
			}
			if attempt == 0 {
				continue
			}
			return nil, tidemq.NonExistentQueue()
		}
		if err != nil {
			return nil, b.failure(ctx, err)
		}
		for i, r := range reqs {
			if r.send != nil {
				b.sentStandard(queues[i], r.send)
			}
		}
		return results, nil
	}
}

// queuesRows checks every ps against its queue and returns the queues,
// the results and one write request per ps (its send nil when it has
// nothing to write). The first problem found is the error; a FIFO queue
// is refused (tidemq.ErrNotTogether) only once every ps passed.
func (b *Broker) queuesRows(ctx context.Context, ps []tidemq.SendMessagesParams) ([]*queue, [][]tidemq.SendResult, []*writeReq, error) {
	queues := make([]*queue, len(ps))
	results := make([][]tidemq.SendResult, len(ps))
	reqs := make([]*writeReq, len(ps))
	fifo := false
	for i := range ps {
		p := &ps[i]
		q, err := b.messageQueue(ctx, p.Queue)
		if err != nil {
			return nil, nil, nil, err
		}
		if q.fifo {
			// Checked as sendFIFO checks it, so that the error is the one
			// SendMessages would answer.
			if err := p.ValidateFIFO(q.ContentDedup); err != nil {
				return nil, nil, nil, err
			}
			for _, r := range p.Results(true, q.MaxSize) {
				if r.Err != nil {
					return nil, nil, nil, r.Err
				}
			}
			fifo = true
			continue
		}
		res, rows := b.standardRows(q, p)
		for _, r := range res {
			if r.Err != nil {
				return nil, nil, nil, r.Err
			}
		}
		queues[i], results[i], reqs[i] = q, res, &writeReq{send: rows}
	}
	if fifo {
		return nil, nil, nil, tidemq.ErrNotTogether
	}
	return queues, results, reqs, nil
}

// writeTogether writes reqs in one statement on a connection of its own
// and announces the queues that got messages after the commit.
func (b *Broker) writeTogether(ctx context.Context, reqs []*writeReq) error {
	group := make([]*writeReq, 0, len(reqs))
	for _, r := range reqs {
		if r.send != nil {
			group = append(group, r)
		}
	}
	if len(group) == 0 {
		return nil
	}
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// Once the statement is sent it runs whatever the client does, as a
	// group commit's does: the answer must say what was written (a
	// canceled statement might have committed).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := b.onConn(ctx, conn, func(db querier) error { return b.writeRows(ctx, db, group) }); err != nil {
		return err
	}
	b.announceGroup(group)
	return nil
}
