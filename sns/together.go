package sns

import (
	"errors"

	"github.com/tidemq/tidemq"
)

// A fan-out in one write. When every delivery of a standard topic's
// publish goes to an SQS queue and the broker can send to several queues
// in one durable write, all or nothing (tidemq.QueuesSender: the embedded
// engine), the deliveries go into their queues together, without an outbox
// record: after a crash either every queue has the message or none has and
// the publish was not acknowledged, so there is no fan-out left half way
// for the outbox to finish. One store write instead of three (the record,
// the messages, forgetting the record), and one signature and one envelope
// per publish as before (envelope.go).
//
// Invariant: nothing is answered before the write is durable, and a
// refused write (any queue missing or full, any entry the queue would
// refuse, the broker failing) sends nothing: the publish then takes the
// recorded path (publish.go), where each delivery meets its own fate
// (retried, dead-lettered) as before.

// allSQS reports whether every delivery of r goes to an SQS subscription
// among subs.
func allSQS(subs []*Subscription, r *record) bool {
	for _, d := range r.deliveries {
		if protocolOf(subs, d.sub) != "sqs" {
			return false
		}
	}
	return true
}

// deliverTogether makes every delivery of recs in one write of the broker
// and reports whether it did; false means none was made.
func (s *Service) deliverTogether(recs []*record) bool {
	n := 0
	for _, r := range recs {
		n += len(r.deliveries)
	}
	ps := make([]tidemq.SendMessagesParams, 0, n)
	entries := make([]tidemq.SendEntry, 0, n) // one array for all the entries
	for _, r := range recs {
		for _, d := range r.deliveries {
			sub, ok := s.store.subscription(d.sub)
			if !ok || sub.IsHTTP() {
				return false // changed meanwhile: the recorded path counts it
			}
			queue, entry, err := s.queueEntry(sub, r, sub.Endpoint)
			if err != nil {
				return false
			}
			entry.ID = "0"
			entries = append(entries, entry)
			i := len(entries)
			ps = append(ps, tidemq.SendMessagesParams{Queue: queue, Entries: entries[i-1 : i : i], Client: r.Client})
		}
	}
	if _, err := tidemq.SendToQueues(s.ctx, s.opt.Broker, ps); err != nil {
		if errors.Is(err, tidemq.ErrNoQueuesSender) {
			s.noTogether.Store(true)
		}
		return false
	}
	s.stats.delivered.Add(uint64(len(ps)))
	return true
}
