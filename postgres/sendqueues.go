package postgres

import (
	"context"

	"github.com/tidemq/tidemq"
)

var _ tidemq.QueuesSender = (*Broker)(nil)

// SendToQueues sends to several standard queues in one statement, all or
// nothing (see tidemq.QueuesSender): every params is checked against its
// queue first (the queue exists, every entry is one it takes), then all
// the messages go to the group commit as one request (commit.go), whose
// rows are in one statement, with other requests' or, when that statement
// fails, alone: they commit together or not at all, and the call answers
// once they did. SNS sends a standard topic's fan-out to SQS queues this
// way, without an outbox record.
//
// A FIFO queue among the targets is refused with tidemq.ErrNotTogether
// once everything passed the checks (the caller then sends them one by
// one): a FIFO send takes its queue's lock and runs its own statement
// (sendFIFO), which one write to several queues would have to take in
// turn. SNS never sends to a FIFO queue this way (only a FIFO topic
// delivers to one, and it delivers in order, queue by queue).
func (b *Broker) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	for i := range ps {
		if err := ps[i].Validate(); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		queues, results, rows, err := b.queuesRows(ctx, ps)
		if err != nil {
			return nil, err
		}
		req := &writeReq{}
		for _, r := range rows {
			switch {
			case r == nil:
			case req.send == nil:
				req.send = r
			default:
				req.more = append(req.more, r)
			}
		}
		if req.send == nil {
			return results, nil
		}
		err = b.submit(ctx, req)
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
		if req.full != nil {
			return nil, req.full // a queue full to --max-queue-bytes: nothing was sent
		}
		for i, r := range rows {
			if r != nil {
				b.sentStandard(queues[i], r)
			}
		}
		return results, nil
	}
}

// queuesRows checks every ps against its queue and returns the queues,
// the results and the rows to write for each ps (nil when it has none).
// The first problem found is the error; a FIFO queue is refused
// (tidemq.ErrNotTogether) only once every ps passed.
func (b *Broker) queuesRows(ctx context.Context, ps []tidemq.SendMessagesParams) ([]*queue, [][]tidemq.SendResult, []*sendRows, error) {
	queues := make([]*queue, len(ps))
	results := make([][]tidemq.SendResult, len(ps))
	rows := make([]*sendRows, len(ps))
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
		res, r := b.standardRows(q, p)
		for _, x := range res {
			if x.Err != nil {
				return nil, nil, nil, x.Err
			}
		}
		queues[i], results[i], rows[i] = q, res, r
	}
	if fifo {
		return nil, nil, nil, tidemq.ErrNotTogether
	}
	return queues, results, rows, nil
}
