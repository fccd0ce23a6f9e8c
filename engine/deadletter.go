package engine

import (
	"context"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
)

// deadLetter moves m to q's dead-letter queue if it has used up its
// receives; it reports whether it did. A receive reaches the message first:
// the move happens on the receive attempt after maxReceiveCount, as on SQS.
func (e *Engine) deadLetter(q *queue, m *message, now time.Time, t *txn) bool {
	if !q.DeadLetterDue(m.ReceiveCount) {
		return false
	}
	dlq := e.queueByARN(q.Redrive.DeadLetterTargetARN)
	if dlq == nil || dlq == q {
		return false // the target was deleted: keep delivering rather than lose it
	}
	e.move(q, m, dlq, now, t, tidemq.DeadLetterEvent(q.name, q.Redrive.MaxReceiveCount, m.ReceiveCount, now))
	q.count().DeadLettered++
	e.log.Debug("message dead-lettered", "queue", q.name, "dlq", dlq.name, "message_id", m.ID, "receives", m.ReceiveCount)
	return true
}

// move transfers m from src to dst in one batch: the source records are
// deleted and the destination records written together, so after a crash
// the message is in exactly one of the two queues. What the move does to
// the message is tidemq.MoveRuleOf's.
func (e *Engine) move(src *queue, m *message, dst *queue, now time.Time, t *txn, ev tidemq.HistoryEvent) *message {
	n := &message{
		StoredMessage: m.Moved(tidemq.MoveRuleOf(ev.Kind, src.arn(), dst.fifo), stampOf(now), ev),
		availableAt:   stampOf(now),
	}
	n.seq = dst.nextSeq
	dst.nextSeq++
	if dst.fifo {
		n.fifoSeq = n.seq
	}
	src.remove(m, t)
	dst.add(n)
	dst.count().MovedIn++
	t.addCreated(dst, n)
	storage.SetValue(t.b, seqKey(prefixMessage, dst.id, n.seq), (*messageRecord)(n))
	if dst.fifo && dst.paged() {
		t.b.Set(groupKey(dst.id, n.Group, n.seq), nil)
	}
	t.b.Set(seqKey(prefixState, dst.id, n.seq), encodeState(n))
	dst.reserveSeqs(t)
	return n
}

// MoveMessages moves up to p.Max visible messages (all, when Max is 0) from
// p.Source to p.Destination, or back to each message's source queue when
// Destination is "". Each message moves atomically. Messages whose source
// queue no longer exists stay where they are.
func (e *Engine) MoveMessages(ctx context.Context, p tidemq.MoveMessagesParams) (_ *tidemq.MoveMessagesResult, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return nil, err
	}
	src, err := e.queue(p.Source)
	if err != nil {
		h.unlock()
		return nil, err
	}
	var fixed *queue
	if p.Destination != "" {
		if fixed, err = e.queue(p.Destination); err != nil {
			h.unlock()
			return nil, err
		}
		if fixed == src {
			h.unlock()
			return nil, tidemq.MoveToSource(fixed.arn())
		}
	}
	now := e.clock.Now()
	t := e.begin()
	e.advance(src, now, t)
	moved, _ := e.moveSome(src, fixed, p.Max, now, t, true)
	res := &tidemq.MoveMessagesResult{Moved: moved, Remaining: src.nReady}
	return res, e.finish(&h, t)
}

// oldestReady returns the receivable message with the lowest sequence.
func (q *queue) oldestReady() *message {
	if !q.fifo {
		return q.nextReady()
	}
	g := q.groups.next()
	if g == nil {
		return nil
	}
	return g.first()
}

// CaptureExpiredTag is tidemq.CaptureExpiredTag.
const CaptureExpiredTag = tidemq.CaptureExpiredTag

// captureTarget returns the queue q's expired messages are captured into,
// or nil to drop them.
func (e *Engine) captureTarget(q *queue) *queue {
	name := q.tags[CaptureExpiredTag]
	if name == "" {
		return nil
	}
	dst := e.queues[name]
	if dst == nil {
		dst = e.queueByARN(name)
	}
	if dst == q || (dst != nil && dst.fifo != q.fifo) {
		return nil
	}
	return dst
}
