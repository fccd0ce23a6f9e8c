package engine

import (
	"sync"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
)

// txn collects the writes of one operation. It is built and committed under
// e.mu, and waited for without it (see finish).
type txn struct {
	b storage.Batch
	// created are messages this operation added (sends, dead-letter moves);
	// they are published once the batch is durable.
	created []*message
	// queues are the queues of created, to publish.
	queues []*queue
	// durable is shared with later operations that must not answer before
	// this one is durable (a duplicate send of a message still syncing).
	durable *sharedDurable
	// paged are the queues whose backlog.gone this operation filled; they
	// are emptied once its batch is committed (and so visible to reads).
	paged []*backlog
}

// sharedDurable lets several waiters wait for one commit.
type sharedDurable struct {
	once sync.Once
	d    storage.Durable
	err  error
	done chan struct{}
}

func (s *sharedDurable) wait() error {
	s.once.Do(func() {
		if s.d != nil {
			s.err = s.d.Wait()
		}
		close(s.done)
	})
	<-s.done
	return s.err
}

func (e *Engine) begin() *txn {
	return &txn{b: e.store.NewBatch(), durable: &sharedDurable{done: make(chan struct{})}}
}

// addCreated records a message created by this operation in queue q.
func (t *txn) addCreated(q *queue, m *message) {
	t.created = append(t.created, m)
	for _, x := range t.queues {
		if x == q {
			return
		}
	}
	t.queues = append(t.queues, q)
}

// committed forgets what t's batch deletes, now that reads see it.
func (t *txn) committed() {
	for _, b := range t.paged {
		b.gone = nil
	}
	t.paged = nil
}

// finish commits t while e.mu is held through h (so that the log keeps
// lock order), releases e.mu, waits until the batch is durable, and then
// publishes the messages t created. A storage failure fails the engine:
// memory is ahead of disk, so it refuses all work until it has reloaded its
// state from the store (recover.go). An operation that began before such a
// reload neither fails the engine nor publishes: the reload read what is on
// disk.
func (e *Engine) finish(h *hold, t *txn) error {
	var err error
	wait := t.durable
	if !t.b.Empty() {
		// Pages read since the last checkpoint leave it before anything
		// that depends on the read can be on disk (checkpoint.go).
		e.ck.flush(t.b)
		t.durable.d, err = t.b.Commit()
		e.lastCommit = t.durable
		t.committed()
	} else if e.lastCommit != nil {
		// Nothing to write, but the answer may rest on state whose batch
		// is committed and not yet synced: wait for the latest one (the
		// log is sequential, so that covers every earlier batch too).
		wait = e.lastCommit
	}
	if err != nil {
		e.failLocked(err)
	}
	epoch := e.epoch
	h.unlock()
	if err == nil {
		err = wait.wait()
	}
	if err != nil {
		h.relock()
		if e.epoch == epoch {
			e.failLocked(err)
		}
		h.unlock()
		return tidemq.Errorf(tidemq.ErrInternalFailure, "The server cannot write to its storage.")
	}
	if len(t.created) > 0 {
		h.relock()
		if e.epoch == epoch {
			for _, m := range t.created {
				m.durable = true
			}
			now := e.clock.Now()
			for _, q := range t.queues {
				q.publish(now)
			}
		}
		h.unlock()
	}
	return nil
}
