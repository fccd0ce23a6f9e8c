package tidemq

// QueueStats counts what happened to a queue's messages since the broker
// started. Every way a message leaves a queue has its counter, so nothing
// disappears uncounted.
type QueueStats struct {
	Sent          uint64 `json:"Sent"`          // new messages accepted (duplicates excluded)
	Duplicates    uint64 `json:"Duplicates"`    // FIFO sends answered from the deduplication window
	Received      uint64 `json:"Received"`      // messages handed out by receives
	EmptyReceives uint64 `json:"EmptyReceives"` // receives that returned nothing
	Deleted       uint64 `json:"Deleted"`       // deleted by receipt handle
	Expired       uint64 `json:"Expired"`       // dropped at the end of the retention period
	DeadLettered  uint64 `json:"DeadLettered"`  // moved out to the dead-letter queue
	Purged        uint64 `json:"Purged"`        // removed by PurgeQueue
	MovedOut      uint64 `json:"MovedOut"`      // moved out by MoveMessages (redrive)
	MovedIn       uint64 `json:"MovedIn"`       // arrived by a dead-letter move or MoveMessages
}

// QueueSnapshot is a queue's state at one moment: the one type of a
// queue's stats, read by the metrics, alarms, the console, tidemq top and
// tidemq dlq. Its JSON is what GET /tidemq/queues answers (and what tidemq
// top reads): the keys are the field names, written out here so that
// renaming a field cannot change the wire. The ListQueueStats extension
// lists the same type under AWS's key names (ListedQueue).
type QueueSnapshot struct {
	Name     string `json:"Name"`
	ARN      string `json:"ARN"`
	FIFO     bool   `json:"FIFO"`
	Visible  int    `json:"Visible"`  // ApproximateNumberOfMessages
	InFlight int    `json:"InFlight"` // ApproximateNumberOfMessagesNotVisible
	Delayed  int    `json:"Delayed"`  // ApproximateNumberOfMessagesDelayed
	// OldestAge is the age of the oldest message (ApproximateAgeOfOldestMessage); 0 when empty.
	OldestAgeSeconds float64 `json:"OldestAgeSeconds"`
	// RetentionSeconds is the queue's MessageRetentionPeriod.
	RetentionSeconds int `json:"RetentionSeconds"`
	// DeadLetterTarget is the ARN the queue's RedrivePolicy names, if any.
	DeadLetterTarget string `json:"DeadLetterTarget"`
	// MaxReceiveCount is the RedrivePolicy's maxReceiveCount (0 without one).
	MaxReceiveCount int `json:"MaxReceiveCount"`
	// IsDeadLetterQueue is true when some queue's RedrivePolicy targets this
	// one, when it holds messages dead-lettered into it, or when it is named
	// like a dead-letter queue (see NamedLikeDeadLetterQueue).
	IsDeadLetterQueue bool `json:"IsDeadLetterQueue"`
	// LastReceive is when a receive last asked this queue for messages
	// (zero if never since start).
	LastReceiveUnixMilli int64      `json:"LastReceiveUnixMilli"`
	Stats                QueueStats `json:"Stats"`
	// Bytes is the size of the queue's messages (body and attributes);
	// MaxBytes is the server's limit on it (--max-queue-bytes), 0 without
	// one. Brokers that do not keep the size leave both 0.
	Bytes    int64 `json:"Bytes,omitempty"`
	MaxBytes int64 `json:"MaxBytes,omitempty"`
}

// QueueTotals are sums over every queue of a broker, for the metrics'
// totals: what a scrape reports without a series per queue.
type QueueTotals struct {
	Queues           int
	DeadLetterQueues int
	Visible          int
	InFlight         int
	Delayed          int
	// DeadLetterVisible are the visible messages of dead-letter queues.
	DeadLetterVisible int
	// OldestAgeSeconds is the largest OldestAgeSeconds of any queue.
	OldestAgeSeconds float64
	Stats            QueueStats
}

// Add counts one queue's snapshot into t.
func (t *QueueTotals) Add(s *QueueSnapshot) {
	t.Queues++
	t.Visible += s.Visible
	t.InFlight += s.InFlight
	t.Delayed += s.Delayed
	if s.IsDeadLetterQueue {
		t.DeadLetterQueues++
		t.DeadLetterVisible += s.Visible
	}
	t.OldestAgeSeconds = max(t.OldestAgeSeconds, s.OldestAgeSeconds)
	t.Stats.Add(&s.Stats)
}

// Add adds o's counters to s.
func (s *QueueStats) Add(o *QueueStats) {
	s.Sent += o.Sent
	s.Duplicates += o.Duplicates
	s.Received += o.Received
	s.EmptyReceives += o.EmptyReceives
	s.Deleted += o.Deleted
	s.Expired += o.Expired
	s.DeadLettered += o.DeadLettered
	s.Purged += o.Purged
	s.MovedOut += o.MovedOut
	s.MovedIn += o.MovedIn
}

// Depth is what a queue holds: visible, in flight and delayed.
func (s *QueueSnapshot) Depth() int { return s.Visible + s.InFlight + s.Delayed }

// DeeperFirst orders snapshots by depth, deepest first, then by name: the
// order in which metrics pick the queues that get their own series.
func DeeperFirst(a, b *QueueSnapshot) bool {
	if da, db := a.Depth(), b.Depth(); da != db {
		return da > db
	}
	return a.Name < b.Name
}
