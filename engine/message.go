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

// message is one message in memory. The fields above the line are the
// immutable record (m/ key); the ones below change on receive (s/ key).
type message struct {
	seq         uint64 // order within the queue; also its key
	id          string
	body        string
	attrs       map[string]tidemq.MessageAttributeValue
	sysAttrs    map[string]tidemq.MessageAttributeValue
	group       string
	dedupID     string
	sender      string
	sent        stamp  // SentTimestamp
	enqueued    stamp  // retention counts from here
	availableAt stamp  // end of the delay
	dlqSource   string // DeadLetterQueueSourceArn, once dead-lettered
	fifoSeq     uint64 // SequenceNumber on FIFO queues (0 on standard)

	receiveCount int
	firstReceive stamp
	receivedAt   stamp // the latest receive, for the 12-hour visibility cap
	visibleAt    stamp // end of the current visibility timeout, while in flight
	history      []tidemq.HistoryEvent

	state msgState
	// gen invalidates timer entries: an entry whose gen differs from the
	// message's is stale and ignored.
	gen uint64
	// durable is set once the batch that created the message is synced; the
	// message is published (leaves statePending) in sequence order.
	durable bool
}

// size is what the message counts against the queue's size accounting.
func (m *message) size() int { return tidemq.MessageSize(m.body, m.attrs) }

// expiredWhileDown reports whether m, read from the store at now, was in
// flight with a visibility timeout that has run out and is not yet in its
// history (the timer that records it never ran).
func (m *message) expiredWhileDown(now time.Time) bool {
	if m.receiveCount == 0 || m.visibleAt == 0 || m.visibleAt > stampOf(now) {
		return false
	}
	for i := len(m.history) - 1; i >= 0; i-- { // since the latest receive
		switch m.history[i].Kind {
		case tidemq.HistoryExpired:
			return false
		case tidemq.HistoryReceived:
			return true
		}
	}
	return false
}

// addHistory appends an event to m's story (tidemq.AppendHistory).
func (m *message) addHistory(ev tidemq.HistoryEvent) {
	m.history = tidemq.AppendHistory(m.history, ev)
}

// snapshot returns the message as a Broker hands it out.
func (m *message) snapshot(q *queue, handle string) *tidemq.Message {
	out := &tidemq.Message{
		MessageID:                m.id,
		ReceiptHandle:            handle,
		Body:                     m.body,
		Attributes:               m.attrs,
		SystemAttributes:         m.sysAttrs,
		SenderID:                 m.sender,
		SentTimestamp:            m.sent.time(),
		ApproximateReceiveCount:  m.receiveCount,
		FirstReceiveTimestamp:    m.firstReceive.time(),
		MessageGroupID:           m.group,
		DeadLetterQueueSourceARN: m.dlqSource,
		History:                  m.story(q),
	}
	if q.fifo {
		out.SequenceNumber = tidemq.FormatSequenceNumber(m.fifoSeq)
		out.MessageDeduplicationID = m.dedupID
	}
	return out
}

// story is the message's history with its send first (tidemq.Story).
func (m *message) story(q *queue) []tidemq.HistoryEvent {
	return tidemq.Story(m.history, q.name, m.sent.time(), m.sender)
}
