package tidemq

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
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

	// DelayedUntil and InvisibleUntil are set on peeked messages only
	// (PeekMessages), for the tools: DelayedUntil while the message's send
	// delay has not ended (when it becomes receivable), InvisibleUntil
	// while it is in flight (the end of its visibility timeout). Both are
	// zero for a message that can be received now.
	DelayedUntil, InvisibleUntil time.Time
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

// AppendHistory appends ev to a message's story, keeping at most
// MaxHistoryEvents: the first event (the send) is kept and the oldest after
// it dropped. Like append, it may reuse history's array.
func AppendHistory(history []HistoryEvent, ev HistoryEvent) []HistoryEvent {
	if len(history) >= MaxHistoryEvents {
		history = append(history[:1], history[2:]...)
	}
	return append(history, ev)
}

// Story is a message's history with its send first. Brokers do not store
// the send as an event (most messages are never received, and the message
// record already holds the time and sender): the send is made up from
// sent and sender, and the queue it was sent to is where the first
// recorded event happened, or queue when there is none.
func Story(history []HistoryEvent, queue string, sent time.Time, sender string) []HistoryEvent {
	origin := queue
	if len(history) > 0 {
		origin = history[0].Queue
	}
	h := make([]HistoryEvent, 0, len(history)+1)
	h = append(h, HistoryEvent{Time: sent, Kind: HistorySent, Queue: origin,
		Client: ClientInfo{AccessKey: sender}})
	return append(h, history...)
}

// ClientInfo identifies who made a request, for SenderId and for the story of
// a dead letter. Transports build it with NewClientInfo, which bounds it.
type ClientInfo struct {
	Addr      string `json:",omitempty"`
	UserAgent string `json:",omitempty"`
	AccessKey string `json:",omitempty"`
}

// NewClientInfo returns the ClientInfo of a request: its remote address, its
// User-Agent and the access key it was signed with (or claims). Each is cut
// to its bound in limits.go, on a UTF-8 boundary, and copied, so that what
// a message keeps is small and holds no request header alive (an access key
// is a few bytes of an Authorization header that may be a megabyte long).
func NewClientInfo(addr, userAgent, accessKey string) ClientInfo {
	return ClientInfo{
		Addr:      bounded(addr, MaxClientAddrBytes),
		UserAgent: bounded(userAgent, MaxClientUserAgentBytes),
		AccessKey: bounded(accessKey, MaxAccessKeyIDLength),
	}
}

// bounded returns a copy of s cut to at most n bytes. The cut does not
// split a UTF-8 sequence: it moves back (at most utf8.UTFMax-1 bytes) to
// the start of the rune it would split.
func bounded(s string, n int) string {
	if len(s) > n {
		cut := n
		for cut > n-(utf8.UTFMax-1) && cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if !utf8.RuneStart(s[cut]) { // not UTF-8 there anyway
			cut = n
		}
		s = s[:cut]
	}
	return strings.Clone(s)
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

// FormatSequenceNumber renders a FIFO message's sequence in SQS's form: a
// large decimal number of 20 digits (AWS returns numbers like
// 18849496460467696128, past the range of an int64). It is a "1" followed
// by the sequence padded to 19 digits, so it never starts with 0, exceeds
// 2^63, and string order equals numeric order for every sequence below
// 10^19.
func FormatSequenceNumber(seq uint64) string { return fmt.Sprintf("1%019d", seq) }
