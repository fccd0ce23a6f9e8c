package tidemq

// MoveRule is what moving a message into another queue does to its
// record, the same on every store. Every move keeps the message's body,
// attributes and history (the move's event appended); the message gets a
// new sequence in its new queue.
type MoveRule struct {
	// NewID gives the message a new MessageId. SQS's developer guide
	// ("Learn how to configure a dead-letter queue redrive"): redriven
	// messages are new messages, with a new message id and enqueue time.
	// A dead-letter move keeps the id (the DLQ shows the MessageId the
	// consumer failed on).
	NewID bool
	// DedupFromID makes the message's id its deduplication id: the same
	// guide says a message moved into a FIFO dead-letter queue has its
	// deduplication id replaced by its message id, so that two messages
	// that shared a deduplication id stay two in the DLQ.
	DedupFromID bool
	// DLQSource becomes the message's DeadLetterQueueSourceArn: a
	// dead-letter move records where the message came from; any other move
	// clears it (StoredMessage.Moved).
	DLQSource string
	// ResetReceives starts the receive count, the first and the latest
	// receive again. A redrive gives the message a fresh start: with the
	// count kept, a source with maxReceiveCount 1 would dead-letter it
	// again on the first receive attempt. A dead-letter move and a capture
	// keep the count, as on SQS.
	ResetReceives bool
	// RestartRetention makes the move's time the message's enqueue time.
	// A dead-letter move into a standard queue keeps the original enqueue
	// time, as on SQS; a capture (an expired message, given the capture
	// queue's whole retention period), a redrive and any move into a FIFO
	// queue restart it.
	RestartRetention bool
	// Group is the message group a message without one gets: "default"
	// into a FIFO queue, where every message has a group.
	Group string
}

// ApplyMove applies r to a moved copy's fields, whose instants a store
// keeps as S (nanoseconds since the Unix epoch, 0 for never); now is the
// move's instant.
func ApplyMove[S ~int64](r MoveRule, now S, dlqSource, group *string, receives *int, firstReceive, receivedAt, enqueued *S) {
	if r.DLQSource != "" {
		*dlqSource = r.DLQSource
	}
	if r.ResetReceives {
		*receives, *firstReceive, *receivedAt = 0, 0, 0
	}
	if r.RestartRetention {
		*enqueued = now
	}
	if *group == "" {
		*group = r.Group
	}
}

// MoveRuleOf returns the rule of a move whose event is of kind (one of
// HistoryDeadLetter, HistoryCaptured, HistoryMoved) out of the queue
// srcARN into a queue that is FIFO when dstFIFO.
func MoveRuleOf(kind, srcARN string, dstFIFO bool) MoveRule {
	var r MoveRule
	switch kind {
	case HistoryDeadLetter:
		r.DLQSource, r.DedupFromID = srcARN, dstFIFO
	case HistoryCaptured:
		r.RestartRetention = true
	default:
		r.ResetReceives, r.RestartRetention, r.NewID = true, true, true
	}
	if dstFIFO {
		r.RestartRetention = true
		r.Group = "default"
	}
	return r
}
