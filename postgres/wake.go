package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Long polls wait on their queue's name in this node's waiters. Whatever
// may make a message receivable wakes them: a send, a visibility change,
// a delete that unlocks a FIFO group, a move into the queue, a queue
// deleted. The change is announced twice, both after its commit (wake):
// locally, at once, and to every node through NOTIFY on the schema's
// channel, from the node's announcer (announce.go), which gathers the
// names of many commits into one NOTIFY transaction of its own. Each
// node keeps one LISTEN connection; a notification wakes the waiters of
// the queue it names. When the listener's connection breaks, every waiter
// is woken (a notification may have been lost) and the listener
// reconnects and listens again. A woken poll just looks again, so a
// spurious wake costs one query. Messages that become receivable by time
// (a delay or a visibility timeout ending) need no announcement: a long
// poll sleeps on the Clock until the queue's next deadline at the latest.

type waiter struct{ ch chan struct{} }

type waiters struct {
	mu      sync.Mutex
	byQueue map[string]map[*waiter]struct{}
}

func (w *waiters) add(queue string) *waiter {
	x := &waiter{ch: make(chan struct{})}
	w.mu.Lock()
	m := w.byQueue[queue]
	if m == nil {
		m = map[*waiter]struct{}{}
		w.byQueue[queue] = m
	}
	m[x] = struct{}{}
	w.mu.Unlock()
	return x
}

func (w *waiters) remove(queue string, x *waiter) {
	w.mu.Lock()
	if m := w.byQueue[queue]; m != nil {
		delete(m, x)
		if len(m) == 0 {
			delete(w.byQueue, queue)
		}
	}
	w.mu.Unlock()
}

// wake wakes every waiter of the queue.
func (w *waiters) wake(queue string) {
	w.mu.Lock()
	for x := range w.byQueue[queue] {
		close(x.ch)
	}
	delete(w.byQueue, queue)
	w.mu.Unlock()
}

// wakeAll wakes every waiter of every queue.
func (w *waiters) wakeAll() {
	w.mu.Lock()
	for _, m := range w.byQueue {
		for x := range m {
			close(x.ch)
		}
	}
	w.byQueue = map[string]map[*waiter]struct{}{}
	w.mu.Unlock()
}

// wake wakes this node's waiters of queues now and, soon, every other
// node's (announce.go). Call it after the commit that concerns them.
func (b *Broker) wake(queues ...string) {
	for _, q := range queues {
		b.waiters.wake(q)
	}
	b.announce(queues...)
}

// listen opens the node's LISTEN connection.
func (b *Broker) listen(ctx context.Context) (*pgx.Conn, error) {
	cfg := b.pool.Config().ConnConfig.Copy()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{b.channel}.Sanitize()); err != nil {
		c.Close(ctx)
		return nil, err
	}
	return c, nil
}

// listenLoop wakes waiters on notifications until the broker closes,
// reconnecting (with backoff, in real time) when the connection breaks.
func (b *Broker) listenLoop(c *pgx.Conn) {
	defer b.wg.Done()
	ctx, cancel := b.closingContext(context.Background())
	defer cancel()
	delay := 100 * time.Millisecond
	for {
		for c != nil {
			n, err := c.WaitForNotification(ctx)
			if err != nil {
				closeCtx, cc := context.WithTimeout(context.Background(), time.Second)
				c.Close(closeCtx)
				cc()
				c = nil
				if ctx.Err() != nil {
					return
				}
				b.log.Warn("postgres: LISTEN connection lost; reconnecting", "err", err)
				b.listenErr.Store(&errBox{err})
				b.waiters.wakeAll()
				b.forgetQueues()
				break
			}
			delay = 100 * time.Millisecond
			b.heard(n.Payload)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
		var err error
		dctx, dc := context.WithTimeout(ctx, 10*time.Second)
		c, err = b.listen(dctx)
		dc()
		if err != nil {
			c = nil
			if ctx.Err() != nil {
				return
			}
			b.log.Warn("postgres: LISTEN reconnect failed", "err", err)
			b.listenErr.Store(&errBox{err})
			continue
		}
		b.log.Info("postgres: LISTEN connection restored")
		b.listenErr.Store(nil)
		b.waiters.wakeAll()
		b.forgetQueues()
	}
}

// retryable reports whether a transaction failed only because of a
// conflict with another (serialization failure, deadlock) and may be run
// again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// isForeignKeyViolation reports whether err is PostgreSQL's foreign key
// violation: a row written for a queue deleted meanwhile.
func isForeignKeyViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}
