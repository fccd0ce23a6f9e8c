package tidemq

import (
	"time"

	"github.com/google/uuid"
)

// Stamp is an instant as nanoseconds since the Unix epoch, 0 meaning
// never. A stored message keeps its instants as stamps, 8 bytes each
// instead of time.Time's 24 (the embedded store holds every queued message
// in memory: with six per message that is about 100 MB of heap at a
// million messages), and the PostgreSQL store keeps them in bigint
// columns. Stamps compare by wall clock.
type Stamp int64

// StampOf returns t as a Stamp (0 for the zero Time).
func StampOf(t time.Time) Stamp {
	if t.IsZero() {
		return 0
	}
	return Stamp(t.UnixNano())
}

// Time returns the instant as a time.Time (the zero Time for 0).
func (s Stamp) Time() time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(s))
}

// StoredMessage is the record of one message that every broker stores, the
// same fields on every store: each driver embeds it in its own message
// type beside what only its storage needs (the embedded engine's state and
// timer generation, PostgreSQL's row key and held flag). What a broker
// hands out is made from it by Snapshot, once for every store.
type StoredMessage struct {
	ID       string
	Body     string
	Attrs    map[string]MessageAttributeValue
	SysAttrs map[string]MessageAttributeValue // AWSTraceHeader, when the sender set it
	Group    string                           // MessageGroupId (FIFO, or fair queues)
	DedupID  string                           // MessageDeduplicationId (FIFO)
	Sender   string                           // SenderId
	Sent     Stamp                            // SentTimestamp
	// Enqueued is when the message entered its queue: retention counts
	// from here (a dead-letter or move starts it again).
	Enqueued  Stamp
	DLQSource string // DeadLetterQueueSourceArn, once dead-lettered

	ReceiveCount int
	FirstReceive Stamp // 0 until the first receive
	ReceivedAt   Stamp // the latest receive, for the 12-hour visibility cap
	// VisibleAt is the end of the current visibility timeout while the
	// message is in flight (on PostgreSQL also the end of its send delay).
	VisibleAt Stamp
	// History is the story after the send (Story adds the send), bounded
	// by AppendHistory.
	History []HistoryEvent
}

// AddHistory appends an event to m's story (AppendHistory).
func (m *StoredMessage) AddHistory(ev HistoryEvent) {
	m.History = AppendHistory(m.History, ev)
}

// Story is m's history with its send first (Story), queue being the queue
// the message is in now.
func (m *StoredMessage) Story(queue string) []HistoryEvent {
	return Story(m.History, queue, m.Sent.Time(), m.Sender)
}

// Snapshot returns m as a Broker hands it out from the queue named queue,
// with handle as its receipt handle ("" for a peek). On a FIFO queue seq
// is its SequenceNumber and the deduplication id is shown; on a standard
// queue neither is.
func (m *StoredMessage) Snapshot(queue string, fifo bool, seq uint64, handle string) *Message {
	out := &Message{
		MessageID:                m.ID,
		ReceiptHandle:            handle,
		Body:                     m.Body,
		Attributes:               m.Attrs,
		SystemAttributes:         m.SysAttrs,
		SenderID:                 m.Sender,
		SentTimestamp:            m.Sent.Time(),
		ApproximateReceiveCount:  m.ReceiveCount,
		FirstReceiveTimestamp:    m.FirstReceive.Time(),
		MessageGroupID:           m.Group,
		DeadLetterQueueSourceARN: m.DLQSource,
		History:                  m.Story(queue),
	}
	if fifo {
		out.SequenceNumber = FormatSequenceNumber(seq)
		out.MessageDeduplicationID = m.DedupID
	}
	return out
}

// Received records a receive of m from queue by client at now, for a
// visibility timeout of vt: one more receive (the first one's time kept),
// in flight until now+vt, and the receive in its story.
func (m *StoredMessage) Received(queue string, client ClientInfo, vt time.Duration, now time.Time) {
	m.ReceiveCount++
	if m.FirstReceive == 0 {
		m.FirstReceive = StampOf(now)
	}
	m.ReceivedAt = StampOf(now)
	m.VisibleAt = StampOf(now.Add(vt))
	m.AddHistory(ReceivedEvent(queue, client, m.ReceiveCount, vt, now))
}

// Moved returns the record of m moved into another queue by a move whose
// event is ev, at now, under r (MoveRuleOf): a copy with its own history,
// r applied and ev appended (a new id when r says so). DLQSource is r's: only a dead-letter move
// leaves the message marked as a dead letter (a redriven or captured one
// is not). VisibleAt is 0: the store sets when the copy becomes visible in
// its queue. Everything else is kept.
func (m *StoredMessage) Moved(r MoveRule, now Stamp, ev HistoryEvent) StoredMessage {
	n := *m
	n.VisibleAt, n.DLQSource = 0, ""
	n.History = append([]HistoryEvent(nil), m.History...)
	ApplyMove(r, now, &n.DLQSource, &n.Group, &n.ReceiveCount, &n.FirstReceive, &n.ReceivedAt, &n.Enqueued)
	if r.DedupFromID {
		n.DedupID = m.ID
	}
	if r.NewID {
		n.ID = uuid.NewString()
	}
	n.AddHistory(ev)
	return n
}
