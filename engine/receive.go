package engine

import (
	"context"
	"time"

	"github.com/tidemq/tidemq"
)

// receiveAttempt remembers a FIFO receive by its ReceiveRequestAttemptId, so
// that a retried request returns the same messages and handles.
type receiveAttempt struct {
	id      string
	expires time.Time
	msgs    []*message
	gens    []uint64 // each message's gen right after the receive
	handles []string
}

// ReceiveMessages receives messages, long-polling up to the wait time.
func (e *Engine) ReceiveMessages(ctx context.Context, p tidemq.ReceiveMessagesParams) (_ []*tidemq.Message, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	max := p.Limit()
	var deadline time.Time
	var w *waiter // while this call waits: its registration on wq
	var wq *queue
	for first := true; ; first = false {
		var fenced error
		if !first {
			// Outside the lock: it may ask another database (placement).
			fenced = tidemq.CheckFence(ctx)
		}
		if err := h.lock(); err != nil {
			if w != nil {
				// The engine failed while this call waited (recover.go):
				// the wait ends empty; the next request gets the error.
				return nil, nil
			}
			return nil, err
		}
		if w != nil { // woken (it receives now) or its own timer ran out
			wq.leave(w, fenced == nil) // fenced off: a wake it got goes to the next waiter
			w = nil
		}
		if fenced != nil {
			h.unlock()
			return nil, fenced
		}
		q, err := e.queue(p.Queue)
		if err != nil {
			h.unlock()
			return nil, err
		}
		now := e.clock.Now()
		if first {
			deadline = q.PollDeadline(p, now)
		}
		t := e.begin()
		e.advance(q, now, t)
		q.lastReceive = stampOf(now)
		msgs, err := e.receiveLocked(q, p, max, now, t)
		if err != nil || len(msgs) > 0 || !now.Before(deadline) || e.draining.Draining() {
			if err == nil && len(msgs) == 0 {
				q.count().EmptyReceives++
			}
			if q.nReady > 0 {
				q.wakeOne() // what this receive left behind is for the next waiter
			}
			if ferr := e.finish(&h, t); ferr != nil {
				return nil, ferr
			}
			return msgs, err
		}
		// Nothing yet: wait for a wake, the end of the wait, or the next
		// deadline of this queue (a delay or visibility timeout ending).
		w, wq = q.addWaiter(), q
		broken := e.broken
		next, _ := q.timers.nextDeadline()
		if err := e.finish(&h, t); err != nil {
			return nil, err
		}
		if !tidemq.PollWait(ctx, e.clock, now, deadline, next, w.ch, e.draining.Done(), broken) {
			h.relock()
			wq.leave(w, false) // a wake it got goes to the next waiter
			h.unlock()
			return nil, nil
		}
	}
}

// receiveLocked takes up to max messages from q. Called with e.mu held.
func (e *Engine) receiveLocked(q *queue, p tidemq.ReceiveMessagesParams, max int, now time.Time, t *txn) ([]*tidemq.Message, error) {
	vt := p.Visibility(q.Visibility)
	if q.fifo && p.ReceiveRequestAttemptID != "" {
		if out := e.retryAttempt(q, p.ReceiveRequestAttemptID, vt, now, t); out != nil {
			return out, nil
		}
	}
	limit := e.inflight.Cap(q.fifo)
	if !q.fifo && q.nInflight >= limit {
		return nil, tidemq.TooManyInflight(q.name, limit)
	}
	var taken []*message
	deliver := func(m *message) bool {
		if e.deadLetter(q, m, now, t) {
			return false
		}
		e.markReceived(q, m, vt, now, p.Client, t)
		taken = append(taken, m)
		return true
	}
	if q.fifo {
		for len(taken) < max && q.nInflight < limit {
			g := q.groups.next()
			if g == nil {
				break
			}
			// As many messages of this group as possible, in order, up to
			// the first that is not ready (fifo.go: group), and never past
			// the in-flight limit.
			// The group's next page is read in when the walk reaches it.
			for i := g.head; len(taken) < max && q.nInflight < limit; i++ {
				for i < len(g.msgs) && g.coldBefore(g.msgs[i]) || i == len(g.msgs) && g.cold.n > 0 {
					q.fillGroup(g)
				}
				if i == len(g.msgs) {
					break
				}
				m := g.msgs[i]
				if m == nil || m.state == stateGone {
					continue
				}
				if m.state != stateReady {
					break
				}
				deliver(m)
			}
			q.groups.refresh(g)
		}
	} else {
		for len(taken) < max {
			m := q.nextReady()
			if m == nil {
				break
			}
			deliver(m) // its entry goes stale: in flight or dead-lettered
		}
	}
	out := make([]*tidemq.Message, len(taken))
	var attempt *receiveAttempt
	if q.fifo && p.ReceiveRequestAttemptID != "" && len(taken) > 0 {
		attempt = &receiveAttempt{id: p.ReceiveRequestAttemptID, expires: now.Add(tidemq.ReceiveAttemptTTL)}
		q.win().addAttempt(attempt)
	}
	for i, m := range taken {
		handle := q.handle(m)
		out[i] = m.snapshot(q, handle)
		if attempt != nil {
			attempt.msgs = append(attempt.msgs, m)
			attempt.gens = append(attempt.gens, m.gen)
			attempt.handles = append(attempt.handles, handle)
		}
	}
	q.count().Received += uint64(len(taken))
	return out, nil
}

// markReceived puts m in flight for vt and records the receive.
func (e *Engine) markReceived(q *queue, m *message, vt time.Duration, now time.Time, client tidemq.ClientInfo, t *txn) {
	m.Received(q.name, client, vt, now)
	q.setState(m, stateInflight)
	t.b.Set(seqKey(prefixState, q.id, m.seq), encodeState(m))
}

// retryAttempt answers a retried FIFO receive from the attempt cache, if
// the attempt is known and none of its messages was deleted or had its
// visibility changed since. Their visibility timeouts start again.
func (e *Engine) retryAttempt(q *queue, id string, vt time.Duration, now time.Time, t *txn) []*tidemq.Message {
	if q.windows == nil {
		return nil
	}
	a := q.windows.attempts[id]
	if a == nil || !a.expires.After(now) {
		return nil
	}
	for i, m := range a.msgs {
		if m.state != stateInflight || m.gen != a.gens[i] {
			return nil
		}
	}
	out := make([]*tidemq.Message, len(a.msgs))
	for i, m := range a.msgs {
		m.VisibleAt = stampOf(now.Add(vt))
		q.setState(m, stateInflight)
		a.gens[i] = m.gen
		t.b.Set(seqKey(prefixState, q.id, m.seq), encodeState(m))
		out[i] = m.snapshot(q, a.handles[i])
	}
	return out
}
