package sns

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
//   - No caller leads a lane for longer than its own deliveries take: a
//     caller that leads (sends the lane's next batches) stops once its own
//     entry is done, and if entries still wait, a goroutine goes on
//     leading until none does. A publish with several deliveries puts them
//     all in their lanes at once and leads at most one lane itself; the
//     other lanes it must lead get a goroutine each.
//   - At most maxLaneBatches batches of a lane are in the store at once.

// maxLaneBatches is how many batches of one lane may be committing at once:
// more than one, so that a lane's next batch is gathered while the last
// one's fsync runs.
const maxLaneBatches = 2

type laneKey struct{ queue, sender string }

// lane is the deliveries waiting for one queue and sender.
type lane struct {
	waiting []*laneEntry
	leaders int // batches of this lane being gathered or sent now
}

// laneEntry is one delivery in a lane.
type laneEntry struct {
	entry  tidemq.SendEntry
	client tidemq.ClientInfo
	size   int
	wg     *sync.WaitGroup // Done once err is set
	sent   atomic.Bool     // err is set
	err    error
}

// finish sets e's result.
func (e *laneEntry) finish(err error) {
	e.err = err
	e.sent.Store(true)
	e.wg.Done()
}

// lanes are the Service's SQS delivery lanes.
type lanes struct {
	mu sync.Mutex
	m  map[laneKey]*lane
}

// laneLead is a lane its caller is to lead (sendEntries).
type laneLead struct {
	key laneKey
	l   *lane
	own *laneEntry
}

// sendEntry sends one delivery to queue, gathered with concurrent
// deliveries to the same queue (see above).
func (s *Service) sendEntry(queue string, entry tidemq.SendEntry, client tidemq.ClientInfo) error {
	var wg sync.WaitGroup
	e := &laneEntry{entry: entry, client: client, wg: &wg}
	s.sendEntries([]string{queue}, []*laneEntry{e})
	wg.Wait()
	return e.err
}

// sendEntries puts entries (entries[i] for queues[i], each with its wg
// counted in) in their lanes and leads the lanes they need led; the caller
// waits on the entries' WaitGroups for their results.
func (s *Service) sendEntries(queues []string, entries []*laneEntry) {
	var leads []laneLead
	ls := &s.lanes
	for i, e := range entries {
		queue := queues[i]
		e.wg.Add(1)
		if strings.HasSuffix(queue, ".fifo") && e.entry.MessageGroupID == "" {
			// A batch would fail as a whole for it: alone, as before.
			e.finish(s.sendAlone(queue, e.entry, e.client))
			continue
		}
		e.size = tidemq.MessageSize(e.entry.Body, e.entry.Attributes)
		key := laneKey{queue: queue, sender: e.client.AccessKey}
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
		if l.leaders < maxLaneBatches {
			l.leaders++
			leads = append(leads, laneLead{key: key, l: l, own: e})
		}
		ls.mu.Unlock()
	}
	for i, ld := range leads {
		if i < len(leads)-1 {
			go s.leadLane(ld.key, ld.l, nil)
		} else {
			s.leadLane(ld.key, ld.l, ld.own)
		}
	}
}

// leadLane sends l's batches, oldest entries first, until no entry waits
// or, with own set, until own is done: then, if entries still wait, a
// goroutine goes on leading the lane in its place.
func (s *Service) leadLane(key laneKey, l *lane, own *laneEntry) {
	ls := &s.lanes
	for {
		ls.mu.Lock()
		if len(l.waiting) == 0 {
			// Nothing left to gather (own, if not done, is in a batch
			// that another leader is sending).
			if l.leaders--; l.leaders == 0 {
				delete(ls.m, key)
			}
			ls.mu.Unlock()
			return
		}
		if own != nil && own.sent.Load() {
			ls.mu.Unlock()
			go s.leadLane(key, l, nil)
			return
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
		batch[0].finish(s.sendAlone(queue, batch[0].entry, batch[0].client))
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
			e.finish(err)
		case i >= len(res):
			e.finish(tidemq.Errorf(tidemq.ErrInternalFailure, "the queue answered %d of %d entries", len(res), len(batch)))
		default:
			e.finish(res[i].Err)
		}
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
