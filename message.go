package tidemq

import (
	"strings"
	"time"
)

// MessageAttributeValue is a typed message attribute. DataType starts with
// String, Number or Binary and may carry a custom suffix ("Number.int").
// String and Number attributes use StringValue, Binary ones BinaryValue.
type MessageAttributeValue struct {
	DataType    string
	StringValue string
	BinaryValue []byte
}

// IsBinary reports whether the attribute carries a binary value.
func (v MessageAttributeValue) IsBinary() bool { return strings.HasPrefix(v.DataType, "Binary") }

// Message is a message as a Broker hands it out: on a receive (with a
// receipt handle) or a peek (without one). The transports choose which of
// the system attributes to show.
type Message struct {
	MessageID     string
	ReceiptHandle string
	Body          string
	// Attributes are the sender's message attributes.
	Attributes map[string]MessageAttributeValue
	// SystemAttributes holds AWSTraceHeader when the sender set it.
	SystemAttributes map[string]MessageAttributeValue

	SenderID                 string
	SentTimestamp            time.Time
	ApproximateReceiveCount  int
	FirstReceiveTimestamp    time.Time // zero until the first receive
	SequenceNumber           string    // FIFO only
	MessageGroupID           string
	MessageDeduplicationID   string // FIFO only
	DeadLetterQueueSourceARN string // set once the message has been dead-lettered

	// History is tidemq's record of what happened to the message: every
	// receive, every visibility expiry, and why it was dead-lettered. It is
	// an extension that plain SQS clients never see.
	History []HistoryEvent
}

// HistoryEvent is one entry in a message's story.
type HistoryEvent struct {
	Time  time.Time
	Kind  string // one of the HistoryXxx constants
	Queue string // the queue the event happened in
	// Client is set for receives.
	Client ClientInfo
	// Detail is free text: the reason for a dead-letter move, the receive count.
	Detail string
}

// History event kinds.
const (
	HistorySent       = "sent"
	HistoryReceived   = "received"
	HistoryExpired    = "visibility-expired"
	HistoryReleased   = "visibility-changed"
	HistoryDeadLetter = "dead-lettered"
	HistoryMoved      = "moved"
	HistoryCaptured   = "expired-captured"
)

// MaxHistoryEvents bounds the story kept per message; the oldest receive
// events are dropped first, the send and the dead-letter move are kept.
const MaxHistoryEvents = 32

// ClientInfo identifies who made a request, for SenderId and for the story of
// a dead letter.
type ClientInfo struct {
	Addr      string `json:",omitempty"`
	UserAgent string `json:",omitempty"`
	AccessKey string `json:",omitempty"`
}

// MessageSize is the size that counts against MaximumMessageSize: the body
// plus every attribute's name, data type and value. System attributes do not
// count.
func MessageSize(body string, attrs map[string]MessageAttributeValue) int {
	n := len(body)
	for name, v := range attrs {
		n += len(name) + len(v.DataType)
		if v.IsBinary() {
			n += len(v.BinaryValue)
		} else {
			n += len(v.StringValue)
		}
	}
	return n
}
