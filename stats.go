package tidemq

// QueueStats counts what happened to a queue's messages since the broker
// started. Every way a message leaves a queue has its counter, so nothing
// disappears uncounted.
type QueueStats struct {
	Sent          uint64 // new messages accepted (duplicates excluded)
	Duplicates    uint64 // FIFO sends answered from the deduplication window
	Received      uint64 // messages handed out by receives
	EmptyReceives uint64 // receives that returned nothing
	Deleted       uint64 // deleted by receipt handle
	Expired       uint64 // dropped at the end of the retention period
	DeadLettered  uint64 // moved out to the dead-letter queue
	Purged        uint64 // removed by PurgeQueue
	MovedOut      uint64 // moved out by MoveMessages (redrive)
	MovedIn       uint64 // arrived by a dead-letter move or MoveMessages
}

// QueueSnapshot is a queue's state at one moment, for metrics, alarms and
// live views.
type QueueSnapshot struct {
	Name     string
	ARN      string
	FIFO     bool
	Visible  int // ApproximateNumberOfMessages
	InFlight int // ApproximateNumberOfMessagesNotVisible
	Delayed  int // ApproximateNumberOfMessagesDelayed
	// OldestAge is the age of the oldest message (ApproximateAgeOfOldestMessage); 0 when empty.
	OldestAgeSeconds float64
	// RetentionSeconds is the queue's MessageRetentionPeriod.
	RetentionSeconds int
	// DeadLetterTarget is the ARN the queue's RedrivePolicy names, if any.
	DeadLetterTarget string
	// MaxReceiveCount is the RedrivePolicy's maxReceiveCount (0 without one).
	MaxReceiveCount int
	// IsDeadLetterQueue is true when some queue's RedrivePolicy targets this
	// one, when it holds messages dead-lettered into it, or when it is named
	// like a dead-letter queue (see NamedLikeDeadLetterQueue).
	IsDeadLetterQueue bool
	// LastReceive is when a receive last asked this queue for messages
	// (zero if never since start).
	LastReceiveUnixMilli int64
	Stats                QueueStats
}
