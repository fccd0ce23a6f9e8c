package sns

import (
	"strconv"
	"strings"
	"sync"

	"github.com/tidemq/tidemq"
)

// SQS deliveries are gathered into batches per queue: the deliveries that
// concurrent publishes make to one queue go into the store as one
// SendMessages of up to ten entries (what SendMessageBatch takes), one
// commit instead of ten. Each delivery keeps what it would have had alone:
// its own body (envelope), MessageId, attributes, group and deduplication
// id, and its own result (an entry refused by the queue fails only that
// delivery).
//
// Invariants kept here:
//   - A lane is one queue and one sender: the store records each message's
//     SenderId from the request's access key (the publisher's, as for a
//     delivery made alone), so deliveries of different publishers' keys are
//     never mixed in one SendMessages.
//   - Order: a lane sends its entries in the order they arrived, and a
//     delivery's caller returns only once its entry is in the queue. A FIFO
//     topic's next publish is delivered only after the previous one's
//     deliveries returned (deliverRecord), so its messages reach each queue
//     in publish order, batched or not.
//   - Nothing is refused for being batched: a batch is cut at ten entries
//     and at tidemq.MaxMessageSize bytes (SendMessageBatch's whole-request
//     limits), and an entry a batch could fail as a whole (a FIFO queue's
//     entry without a group) is sent alone, as before.
//   - No caller waits behind a batch it is not in for long: at most
//     maxLaneBatches batches of a lane are in the store at once, and the
//     caller whose delivery is sent leads the next batch only until its own
//     entry is done; then it hands the lane on to the first waiting caller.

// maxLaneBatches is how many batches of one lane may be committing at once:
// more than one, so that a lane's next batch is gathered while the last
// one's fsync runs.
const maxLaneBatches = 2

type laneKey struct{ queue, sender string }

// lane is the deliveries waiting for one queue and sender.
type lane struct {
	waiting []*laneEntry
	leaders int // callers sending this lane's batches now
}

// laneEntry is one delivery in a lane.
type laneEntry struct {
	entry  tidemq.SendEntry
	client tidemq.ClientInfo
	size   int
	lead   chan struct{} // this caller is to send the lane's next batch
	// leading: the caller leads the lane, or has been asked to (guarded by
	// lanes.mu).
	leading bool
	done    chan struct{} // closed when err is set
	err     error
}

// lanes are the Service's SQS delivery lanes.
type lanes struct {
	mu sync.Mutex
	m  map[laneKey]*lane
}

// sendEntry sends one delivery to queue, gathered with concurrent
// deliveries to the same queue (see above).
func (s *Service) sendEntry(queue string, entry tidemq.SendEntry, client tidemq.ClientInfo) error {
	if strings.HasSuffix(queue, ".fifo") && entry.MessageGroupID == "" {
		return s.sendAlone(queue, entry, client)
	}
	key := laneKey{queue: queue, sender: client.AccessKey}
	e := &laneEntry{entry: entry, client: client, size: tidemq.MessageSize(entry.Body, entry.Attributes),
		lead: make(chan struct{}, 1), done: make(chan struct{})}
	ls := &s.lanes
	ls.mu.Lock()
	if ls.m == nil {
		ls.m = make(map[laneKey]*lane)
	}
	l := ls.m[key]
	if l == nil {
		l = &lane{}
		ls.m[key] = l
	}
	l.waiting = append(l.waiting, e)
	leader := l.leaders < maxLaneBatches
	if leader {
		l.leaders++
		e.leading = true
	}
	ls.mu.Unlock()
	if !leader {
		select {
		case <-e.done:
			// Asked to lead while still waiting, then sent by another
			// leader: the lane is still ours to hand on (a lead is only
			// asked of a waiting entry, so it came before done).
			select {
			case <-e.lead:
			default:
				return e.err
			}
		case <-e.lead:
		}
	}
	s.leadLane(key, l, e)
	return e.err
}

// leadLane sends l's batches, oldest entries first, until own is done, then
// hands the lane on to the first caller still waiting (or leaves it).
func (s *Service) leadLane(key laneKey, l *lane, own *laneEntry) {
	ls := &s.lanes
	for {
		ls.mu.Lock()
		select {
		case <-own.done:
			// The lane goes to the first waiting caller that does not
			// lead already; without one, it has one leader fewer.
			var next *laneEntry
			for _, w := range l.waiting {
				if !w.leading {
					next = w
					break
				}
			}
			if next != nil {
				next.leading = true
				next.lead <- struct{}{} // buffered, and asked once only
			} else if l.leaders--; l.leaders == 0 && len(l.waiting) == 0 {
				delete(ls.m, key)
			}
			ls.mu.Unlock()
			return
		default:
		}
		if len(l.waiting) == 0 {
			// own is in another leader's batch: wait for it, then hand on.
			ls.mu.Unlock()
			<-own.done
			continue
		}
		n, total := 0, 0
		for n < len(l.waiting) && n < tidemq.MaxBatchEntries && (n == 0 || total+l.waiting[n].size <= tidemq.MaxMessageSize) {
			total += l.waiting[n].size
			n++
		}
		batch := append([]*laneEntry(nil), l.waiting[:n]...)
		l.waiting = l.waiting[n:]
		ls.mu.Unlock()
		s.sendBatch(key.queue, batch)
	}
}

// sendBatch sends the entries of one lane as one SendMessages and hands
// each its result.
func (s *Service) sendBatch(queue string, batch []*laneEntry) {
	if len(batch) == 1 {
		batch[0].err = s.sendAlone(queue, batch[0].entry, batch[0].client)
		close(batch[0].done)
		return
	}
	entries := make([]tidemq.SendEntry, len(batch))
	for i, e := range batch {
		entries[i] = e.entry
		entries[i].ID = strconv.Itoa(i)
	}
	res, err := s.opt.Broker.SendMessages(s.ctx, tidemq.SendMessagesParams{Queue: queue, Entries: entries, Batch: true, Client: batch[0].client})
	for i, e := range batch {
		switch {
		case err != nil:
			e.err = err
		case i >= len(res):
			e.err = tidemq.Errorf(tidemq.ErrInternalFailure, "the queue answered %d of %d entries", len(res), len(batch))
		default:
			e.err = res[i].Err
		}
		close(e.done)
	}
}

// sendAlone sends one delivery by itself.
func (s *Service) sendAlone(queue string, entry tidemq.SendEntry, client tidemq.ClientInfo) error {
	entry.ID = "0"
	res, err := s.opt.Broker.SendMessages(s.ctx, tidemq.SendMessagesParams{Queue: queue, Entries: []tidemq.SendEntry{entry}, Client: client})
	if err == nil && len(res) == 1 && res[0].Err != nil {
		err = res[0].Err
	}
	return err
}
