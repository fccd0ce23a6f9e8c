package engine

import (
	"time"

	"github.com/tidemq/tidemq"
)

// msgState is where a message is in its life.
type msgState uint8

const (
	statePending  msgState = iota // sent, batch not yet durable: invisible to everyone
	stateDelayed                  // durable, waiting for availableAt
	stateReady                    // receivable
	stateInflight                 // received, invisible until visibleAt
	stateGone                     // deleted, purged, expired or moved
)

// message is one message in memory: the record every store keeps
// (tidemq.StoredMessage) and what only this store needs. Of the record,
// the fields up to DLQSource are immutable (m/ key); ReceiveCount,
// FirstReceive, ReceivedAt, VisibleAt and History change on receive (s/
// key, codec.go).
type message struct {
	tidemq.StoredMessage
	seq         uint64 // order within the queue; also its key
	availableAt stamp  // end of the delay
	fifoSeq     uint64 // SequenceNumber on FIFO queues (0 on standard)
	// gen invalidates timer entries: an entry whose gen differs from the
	// message's is stale and ignored.
	gen   uint64
	state msgState
	// durable is set once the batch that created the message is synced; the
	// message is published (leaves statePending) in sequence order.
	durable bool
}

// size is what the message counts against the queue's size accounting.
func (m *message) size() int { return tidemq.MessageSize(m.Body, m.Attrs) }

// expiredWhileDown reports whether m, read from the store at now, was in
// flight with a visibility timeout that has run out and is not yet in its
// history (the timer that records it never ran).
func (m *message) expiredWhileDown(now time.Time) bool {
	if m.ReceiveCount == 0 || m.VisibleAt == 0 || m.VisibleAt > stampOf(now) {
		return false
	}
	for i := len(m.History) - 1; i >= 0; i-- { // since the latest receive
		switch m.History[i].Kind {
		case tidemq.HistoryExpired:
			return false
		case tidemq.HistoryReceived:
			return true
		}
	}
	return false
}

// snapshot returns the message as a Broker hands it out.
func (m *message) snapshot(q *queue, handle string) *tidemq.Message {
	return m.Snapshot(q.name, q.fifo, m.fifoSeq, handle)
}
