package tidemq

import (
	"fmt"
	"time"
)

// The events both brokers write into a message's story, made here so
// that a story reads the same on every store. (PostgreSQL's receive SQL
// writes the received and expired events itself; their texts are the
// same as these.)

// ExpiredDetail is the detail of a visibility-expired event.
const ExpiredDetail = "visibility timeout expired without a delete"

// ExpiredEvent is the end of a receive whose visibility timeout ran out at
// deadline without a delete.
func ExpiredEvent(queue string, deadline time.Time) HistoryEvent {
	return HistoryEvent{Time: deadline, Kind: HistoryExpired, Queue: queue, Detail: ExpiredDetail}
}

// ReleasedEvent is a visibility timeout set to 0: the message is back in
// queue at now.
func ReleasedEvent(queue string, now time.Time) HistoryEvent {
	return HistoryEvent{Time: now, Kind: HistoryReleased, Queue: queue,
		Detail: "visibility timeout set to 0: returned to the queue"}
}

// DeadLetterEvent is a move out of queue after receives receives with a
// redrive policy's maxReceiveCount of maxReceives.
func DeadLetterEvent(queue string, maxReceives, receives int, now time.Time) HistoryEvent {
	return HistoryEvent{Time: now, Kind: HistoryDeadLetter, Queue: queue,
		Detail: fmt.Sprintf("maxReceiveCount %d reached: received %d times without being deleted", maxReceives, receives)}
}

// ReceivedEvent is a receive from queue by client at now, the message's
// count-th, for a visibility timeout of vt. (PostgreSQL's receive SQL
// writes the same detail: "receive " || count || ", visibility timeout "
// || vt.String().)
func ReceivedEvent(queue string, client ClientInfo, count int, vt time.Duration, now time.Time) HistoryEvent {
	return HistoryEvent{Time: now, Kind: HistoryReceived, Queue: queue, Client: client,
		Detail: fmt.Sprintf("receive %d, visibility timeout %s", count, vt)}
}

// MovedEvent is a move (a redrive or MoveMessages) from queue to dst.
func MovedEvent(queue, dst string, now time.Time) HistoryEvent {
	return HistoryEvent{Time: now, Kind: HistoryMoved, Queue: queue, Detail: "moved to " + dst}
}

// CapturedEvent is a message expired from queue (retention period
// retention) and captured into dst instead of dropped.
func CapturedEvent(queue string, retention time.Duration, dst string, now time.Time) HistoryEvent {
	return HistoryEvent{Time: now, Kind: HistoryCaptured, Queue: queue,
		Detail: fmt.Sprintf("retention period of %s passed; captured into %s", retention, dst)}
}

// FailedEvent is a consumer's report that it failed on a message.
func FailedEvent(queue string, client ClientInfo, detail string, now time.Time) HistoryEvent {
	return HistoryEvent{Time: now, Kind: HistoryConsumerFailed, Queue: queue, Client: client, Detail: detail}
}
