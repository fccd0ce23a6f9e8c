package sns

import (
	"strconv"
)

// A FIFO topic's publishes are deduplicated and numbered, and their SQS
// deliveries made, one publish at a time: within a node under the topic's
// lock (topicLock), and across the nodes sharing the Outbox under the
// topic's lock there too (Outbox.LockFIFO: a PostgreSQL advisory lock;
// nothing more on a store one process owns). Holding both, a node
//   - looks a deduplication id up in its cache and, when the cache does
//     not have it, in the Outbox (FindDedup), which holds every node's
//     entries: a duplicate published through another node within
//     DedupWindow is recognised;
//   - numbers the publish above the topic's last sequence number in the
//     Outbox (LastSequence), whichever node gave it, and stores its own
//     with the publish: sequence numbers increase across the nodes;
//   - delivers to SQS before it lets go, so deliveries reach the queues
//     in publish order whichever node took each publish.

// lockFIFO takes a FIFO topic's locks, this node's then the Outbox's, and
// returns what releases them.
func (s *Service) lockFIFO(arn string) (func(), error) {
	mu := s.topicLock(arn)
	mu.Lock()
	unlock, err := s.outbox.LockFIFO(arn)
	if err != nil {
		mu.Unlock()
		return nil, err
	}
	return func() { unlock(); mu.Unlock() }, nil
}

// findDedup returns the live deduplication entry of key: this node's, or
// one another node stored.
func (s *Service) findDedup(key string, nowMs int64) (DedupEntry, bool, error) {
	s.dedupMu.Lock()
	e, ok := s.dedup.lookup(key, nowMs)
	s.dedupMu.Unlock()
	if ok {
		return e, true, nil
	}
	return s.outbox.FindDedup(key, nowMs)
}

// raiseSequence makes the next sequence numbers of this node greater than
// the topic's last one in the Outbox.
func (s *Service) raiseSequence(arn string) error {
	last, err := s.outbox.LastSequence(arn)
	if err != nil || last == "" {
		return err
	}
	n, err := strconv.ParseUint(last, 10, 64)
	if err != nil {
		return nil // not one of ours: nothing to keep above
	}
	for {
		old := s.seq.Load()
		if old >= n || s.seq.CompareAndSwap(old, n) {
			return nil
		}
	}
}
