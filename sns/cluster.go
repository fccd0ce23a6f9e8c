package sns

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tidemq/tidemq/storage"
)

// Several nodes can share one Store (`tidemq serve --store postgres://`).
// Each answers from topics and subscriptions in memory, and changes them
// only through the Registry's UpdateRegistry, against the registry's
// current state (store.go). Every change is announced to the other nodes
// (PostgreSQL NOTIFY, postgres/kvupdate.go), whose Invalidate reloads at
// once; they also reload every Options.Reload, a safety net for an
// announcement lost while their LISTEN connection was down.
// A publish is delivered by the node that received it: its SQS
// deliveries before it answers, its HTTP/HTTPS deliveries and retries in
// the background. Each outbox record names that node (Options.NodeID),
// and its id comes from Options.RecordIDs, unique across the nodes. At
// Open a node delivers nothing from the outbox; what a node leaves there
// (it crashed, or stopped with retries pending) is taken over by the one
// node running Redeliver (the holder of a lease), once that node is no
// longer alive.

// reloadLoop reloads topics and subscriptions every Options.Reload, and
// when invalidated, until Close.
func (s *Service) reloadLoop() {
	for {
		t := s.opt.Clock.NewTimer(s.opt.Reload)
		select {
		case <-t.C():
		case <-s.store.invalidated:
			t.Stop()
		case <-s.ctx.Done():
			t.Stop()
			return
		}
		if err := s.store.reload(); err != nil {
			s.log.Warn("sns: reload topics and subscriptions", "err", err)
		}
	}
}

// Invalidate tells the service that another node changed the registry:
// it reloads at once (in the background; calls while a reload is pending
// make one reload). It does nothing unless Options.Reload is set.
func (s *Service) Invalidate() {
	select {
	case s.store.invalidated <- struct{}{}:
	default:
	}
}

// reload replaces what the store answers from with what its Registry
// holds. It holds mu across the read, so that no change of this node can
// fall between the read and the swap.
func (s *store) reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.reg.LoadRegistry()
	if err != nil {
		return err
	}
	topics, subs, unsub := map[string]*Topic{}, map[string]*Subscription{}, map[string]*Subscription{}
	for _, t := range r.Topics {
		topics[t.ARN] = t
	}
	for _, sub := range r.Subscriptions {
		subs[sub.ARN] = sub
	}
	for _, sub := range r.Unsubscribed {
		unsub[sub.Token] = sub
	}
	s.topics, s.subs, s.unsubscribed = topics, subs, unsub
	s.changes++
	return nil
}

// Reload reloads topics and subscriptions from the Store now.
func (s *Service) Reload() error { return s.store.reload() }

// Redeliver takes over, every interval until ctx ends, the outbox records
// of nodes that are not alive: it marks each as this node's and delivers
// what is left of it, as Open does on a single node. Run it on one node
// at a time (under a lease): two nodes running it could both take the
// same record. alive reports whether a node (an Options.NodeID) is
// running; records of no node ("", written by a single node) are taken
// at once.
func (s *Service) Redeliver(ctx context.Context, alive func(ctx context.Context, node string) (bool, error), interval time.Duration) {
	for {
		if n, err := s.adoptOrphans(ctx, alive); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("sns: take over the publishes of stopped nodes", "err", err)
			}
		} else if n > 0 {
			s.log.Info("sns: delivering publishes left in the outbox by stopped nodes", "publishes", n)
		}
		t := s.opt.Clock.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// adoptOrphans delivers the records of dead nodes and returns how many.
func (s *Service) adoptOrphans(ctx context.Context, alive func(context.Context, string) (bool, error)) (int, error) {
	leave, err := s.enter()
	if err != nil {
		return 0, nil // closing
	}
	defer leave()
	entries, _, err := s.state.scanOutbox(s.opt.Now().UnixMilli(), false)
	if err != nil {
		return 0, err
	}
	verdict := map[string]bool{} // node -> alive, asked once per scan
	var recs []*record
	for _, e := range entries {
		if ctx.Err() != nil {
			break // the lease may be lost: leave the rest to the next holder
		}
		r := &record{}
		if err := json.Unmarshal(e.Record, r); err != nil {
			s.log.Error("sns: outbox: unreadable record", "id", e.ID, "err", err)
			continue
		}
		if r.Node == s.opt.NodeID && r.Node != "" {
			continue // this node's, in its memory
		}
		if r.Node != "" {
			up, ok := verdict[r.Node]
			if !ok {
				if up, err = alive(ctx, r.Node); err != nil {
					return 0, err
				}
				verdict[r.Node] = up
			}
			if up {
				continue
			}
		}
		// Marked as this node's before delivering, so that a later holder
		// of the lease leaves it to this node while this node lives.
		r.Node = s.opt.NodeID
		v, err := json.Marshal(r)
		if err != nil {
			return 0, err
		}
		b := s.state.kv.NewBatch()
		b.Set(recordKey(e.ID), v)
		// ctx carries the lease's fence: a holder paused past its lease
		// is refused here, before it delivers anything.
		if err := storage.CommitSyncContext(ctx, b); err != nil {
			return 0, err
		}
		r.ID = e.ID
		for _, d := range e.Deliveries {
			r.deliveries = append(r.deliveries, &delivery{rec: r, index: d.Index, sub: d.Subscription})
		}
		r.remaining.Store(int32(len(r.deliveries)))
		recs = append(recs, r)
	}
	for _, r := range recs {
		s.stats.recovered.Add(uint64(len(r.deliveries)))
		s.deliverRecord(r, false)
	}
	return len(recs), nil
}
