package tidemq

import (
	"context"
	"time"
)

// Broker is everything tidemq's transports need from a queue backend: one
// method per operation, each taking a params struct. Queues are named by
// their name within the broker's single account; the transports turn queue
// URLs into names and names back into URLs. Each region is a namespace of
// its own: a queue of the broker's home region is named plainly, one of
// another region "<region>/<name>", and its ARN carries that region
// (region.go; ListQueues lists one region's queues).
//
// Every error meant for a client is an *Error from the catalogue.
//
// A Broker validates what reaches it, so that every backend enforces the
// same rules with the same codes and messages; the transports only decode
// (wire types, and queue URLs to names). The rules are in this package.
// Those that need no state are the params types' Validate methods, which a
// Broker calls first, before it looks at any queue. Those that need the
// queue's type or settings are here too, for a Broker to call once it has
// the queue: SendMessagesParams.ValidateFIFO, SendEntry.Validate,
// ChangeVisibilityEntry.Validate, ValidateQueueAttributes and
// TagQueueParams.ValidateCount (old and new tags together).
// TagQueueParams.ApplyTo and UntagQueueParams.ApplyTo edit a queue's tags.
// MergeQueueAttributes applies accepted attributes to a queue's, with the
// rules that tie some together; AddPermissionParams.AddTo and
// RemovePermissionParams.RemoveFrom edit a queue's Policy. An optional
// number is a pointer, nil when the client left it out: AWS refuses a 0
// given where it accepts the member left out. brokertest holds every Broker
// to these rules.
//
// Durability: a Broker answers a mutating call only once its effect is
// durable, unless it was opened in memory on purpose.
type Broker interface {
	CreateQueue(ctx context.Context, p CreateQueueParams) (*QueueInfo, error)
	// GetQueue reports whether a queue exists (GetQueueUrl).
	GetQueue(ctx context.Context, p GetQueueParams) (*QueueInfo, error)
	DeleteQueue(ctx context.Context, p DeleteQueueParams) error
	ListQueues(ctx context.Context, p ListQueuesParams) (*ListQueuesResult, error)
	// ListDeadLetterSourceQueues lists the queues whose RedrivePolicy names
	// p.Queue as their dead-letter queue.
	ListDeadLetterSourceQueues(ctx context.Context, p ListDeadLetterSourceQueuesParams) (*ListQueuesResult, error)
	GetQueueAttributes(ctx context.Context, p GetQueueAttributesParams) (map[string]string, error)
	SetQueueAttributes(ctx context.Context, p SetQueueAttributesParams) error
	PurgeQueue(ctx context.Context, p PurgeQueueParams) error

	TagQueue(ctx context.Context, p TagQueueParams) error
	UntagQueue(ctx context.Context, p UntagQueueParams) error
	ListQueueTags(ctx context.Context, p ListQueueTagsParams) (map[string]string, error)
	AddPermission(ctx context.Context, p AddPermissionParams) error
	RemovePermission(ctx context.Context, p RemovePermissionParams) error

	// SendMessages enqueues one or more messages (SendMessage is a batch of
	// one). Problems with one entry are reported in its result; a problem
	// with the whole request is the returned error.
	SendMessages(ctx context.Context, p SendMessagesParams) ([]SendResult, error)
	// ReceiveMessages receives up to p.MaxNumberOfMessages messages, waiting
	// up to the wait time for the first one.
	ReceiveMessages(ctx context.Context, p ReceiveMessagesParams) ([]*Message, error)
	// DeleteMessages deletes by receipt handle. The result holds one error
	// (nil for success) per entry.
	DeleteMessages(ctx context.Context, p DeleteMessagesParams) ([]error, error)
	// ChangeMessageVisibility changes visibility timeouts by receipt
	// handle. The result holds one error (nil for success) per entry.
	ChangeMessageVisibility(ctx context.Context, p ChangeVisibilityParams) ([]error, error)

	// PeekMessages returns messages without receiving them: no receive
	// count, visibility or history changes (a tidemq extension).
	PeekMessages(ctx context.Context, p PeekMessagesParams) ([]*Message, error)
	// MoveMessages moves visible messages from one queue to another, each
	// move atomic: a message is never in both queues nor in neither.
	MoveMessages(ctx context.Context, p MoveMessagesParams) (*MoveMessagesResult, error)

	// StartMessageMoveTask starts moving the messages of a dead-letter
	// queue, back to their sources or to a destination, and returns the
	// task handle.
	StartMessageMoveTask(ctx context.Context, p StartMoveTaskParams) (string, error)
	// CancelMessageMoveTask cancels a running task and returns how many
	// messages it had moved.
	CancelMessageMoveTask(ctx context.Context, p CancelMoveTaskParams) (int64, error)
	// ListMessageMoveTasks lists the most recent tasks of a source queue,
	// newest first.
	ListMessageMoveTasks(ctx context.Context, p ListMoveTasksParams) ([]MessageMoveTask, error)

	Snapshotter
	FailureRecorder
	HealthChecker

	// Drain answers every waiting long poll (empty) and makes later
	// receives return without waiting: a server calls it when it begins to
	// shut down, so that open long polls do not hold the shutdown up.
	Drain()
	// Close stops the broker and releases its storage.
	Close() error
}

// Snapshotter reports every queue's state in one call: what /metrics, the
// alarms, tidemq top and the ListQueueStats extension read. It is part of
// Broker; it has a name of its own for the readers that need nothing else.
type Snapshotter interface {
	Snapshot() []QueueSnapshot
}

// SnapshotFunc is a function as a Snapshotter.
type SnapshotFunc func() []QueueSnapshot

// Snapshot calls f.
func (f SnapshotFunc) Snapshot() []QueueSnapshot { return f() }

// SnapshotPager is a Snapshotter that snapshots a page of its queues
// without the others (GET /tidemq/queues: at 100,000 queues, a page of
// 1,000 cut from Snapshot copied and sorted all 100,000). The engine and
// PostgreSQL are; SnapshotPage serves the others from Snapshot.
type SnapshotPager interface {
	// SnapshotsAfter returns the snapshots of the first n queues whose
	// names sort after after (byte order; "" from the first), in name
	// order, as Snapshot has them (ARN included); fewer than n only when
	// no more queues follow.
	SnapshotsAfter(after string, n int) ([]QueueSnapshot, error)
}

// Visitor is a broker that hands out its queues' snapshots a few at a
// time instead of one slice of them all (the console's overview and the
// alarms: at 100,000 queues that slice is some 30 MB). Visit calls f with
// every queue's snapshot, in no order, each valid only during f's call
// (its ARN may be empty: the reader makes it from the name); it returns
// false, at once or part way, when the broker cannot be read. The engine
// and PostgreSQL are.
type Visitor interface {
	Visit(f func(*QueueSnapshot)) bool
}

// QueueCounter is a broker that counts its queues without snapshotting
// them (--max-queues recounts with it: at 100,000 queues, a Snapshot to
// take len of costs a copy of every queue). The engine and PostgreSQL are.
type QueueCounter interface {
	QueueCount() (int, error)
}

// HealthChecker is part of Broker: Healthy reports nil while the broker can
// serve, or why it cannot (GET /health answers 503 with it).
type HealthChecker interface {
	Healthy() error
}

// QueueInfo names a queue.
type QueueInfo struct {
	Name string
	ARN  string
	FIFO bool
}

// CreateQueueParams are the inputs of CreateQueue.
type CreateQueueParams struct {
	Name       string
	Attributes map[string]string
	Tags       map[string]string
}

// GetQueueParams are the inputs of GetQueue (GetQueueUrl).
type GetQueueParams struct {
	Name string
}

// DeleteQueueParams are the inputs of DeleteQueue.
type DeleteQueueParams struct {
	Queue string
}

// PurgeQueueParams are the inputs of PurgeQueue.
type PurgeQueueParams struct {
	Queue string
}

// ListQueuesParams are the inputs of ListQueues. MaxResults nil means no
// paging: every queue (at most MaxListQueuesResults), and no NextToken.
type ListQueuesParams struct {
	Prefix     string
	MaxResults *int
	NextToken  string
}

// ListQueuesResult is a page of queue names.
type ListQueuesResult struct {
	Names     []string
	NextToken string
}

// ListDeadLetterSourceQueuesParams are the inputs of
// ListDeadLetterSourceQueues. MaxResults nil means no paging, as in
// ListQueuesParams.
type ListDeadLetterSourceQueuesParams struct {
	Queue      string
	MaxResults *int
	NextToken  string
}

// GetQueueAttributesParams are the inputs of GetQueueAttributes. Names may
// include "All"; no names returns no attributes.
type GetQueueAttributesParams struct {
	Queue string
	Names []string
}

// SetQueueAttributesParams are the inputs of SetQueueAttributes. Attributes
// nil means the client gave none at all, which is refused before the queue
// is looked at; an empty map is refused once it is (AWS words the two
// differently).
type SetQueueAttributesParams struct {
	Queue      string
	Attributes map[string]string
}

// TagQueueParams are the inputs of TagQueue: tags to add or overwrite.
type TagQueueParams struct {
	Queue string
	Tags  map[string]string
}

// UntagQueueParams are the inputs of UntagQueue: tag keys to remove.
type UntagQueueParams struct {
	Queue   string
	TagKeys []string
}

// ListQueueTagsParams are the inputs of ListQueueTags.
type ListQueueTagsParams struct {
	Queue string
}

// AddPermissionParams are the inputs of AddPermission.
type AddPermissionParams struct {
	Queue      string
	Label      string
	AccountIDs []string
	Actions    []string
}

// RemovePermissionParams are the inputs of RemovePermission: the label of
// the policy statement to remove.
type RemovePermissionParams struct {
	Queue string
	Label string
}

// SendMessagesParams are the inputs of SendMessage and SendMessageBatch.
type SendMessagesParams struct {
	Queue   string
	Entries []SendEntry
	// Batch is true for SendMessageBatch. It changes which problems fail
	// the whole request and which only the entry.
	Batch  bool
	Client ClientInfo
}

// SendEntry is one message to send. DelaySeconds nil means the queue's delay.
type SendEntry struct {
	ID                     string
	Body                   string
	DelaySeconds           *int
	Attributes             map[string]MessageAttributeValue
	SystemAttributes       map[string]MessageAttributeValue
	MessageGroupID         string
	MessageDeduplicationID string
}

// SendResult is the outcome of one SendEntry. Err is nil on success.
type SendResult struct {
	ID             string
	MessageID      string
	SequenceNumber string
	Err            error
}

// ReceiveMessagesParams are the inputs of ReceiveMessage. Nil pointers mean
// the defaults: one message, the queue's visibility timeout and wait time.
type ReceiveMessagesParams struct {
	Queue                   string
	MaxNumberOfMessages     *int
	VisibilityTimeout       *int
	WaitTimeSeconds         *int
	ReceiveRequestAttemptID string
	Client                  ClientInfo
}

// Visibility is the visibility timeout the receive gives its messages:
// VisibilityTimeout when the request sets it, else the queue's.
func (p ReceiveMessagesParams) Visibility(queueDefault time.Duration) time.Duration {
	if p.VisibilityTimeout != nil {
		return time.Duration(*p.VisibilityTimeout) * time.Second
	}
	return queueDefault
}

// DeleteMessagesParams are the inputs of DeleteMessage(Batch).
type DeleteMessagesParams struct {
	Queue   string
	Entries []DeleteEntry
	// Batch is true for DeleteMessageBatch, whose entries need Ids. A
	// request with other than one entry is a batch in any case.
	Batch bool
}

// DeleteEntry is one receipt handle to delete.
type DeleteEntry struct {
	ID            string
	ReceiptHandle string
}

// ChangeVisibilityParams are the inputs of ChangeMessageVisibility(Batch).
type ChangeVisibilityParams struct {
	Queue   string
	Entries []ChangeVisibilityEntry
	// Batch is true for ChangeMessageVisibilityBatch, whose entries need
	// Ids. A request with other than one entry is a batch in any case.
	Batch bool
}

// ChangeVisibilityEntry is one visibility change. ChangeMessageVisibility
// requires VisibilityTimeout; a batch entry without one sets 0.
type ChangeVisibilityEntry struct {
	ID                string
	ReceiptHandle     string
	VisibilityTimeout *int
}

// PeekMessagesParams are the inputs of PeekMessages. Messages come in queue
// order (send order), oldest first.
type PeekMessagesParams struct {
	Queue string
	// Max nil means DefaultPeekMessages.
	Max *int
	// IncludeInflight adds messages that are in flight or delayed.
	IncludeInflight bool
	// IncludeDelayed adds messages whose send delay has not ended: they
	// are in the queue (a backoff, say), only not yet receivable.
	IncludeDelayed bool
}

// MoveMessagesParams are the inputs of MoveMessages. Destination "" sends
// each message back to the queue named by its DeadLetterQueueSourceARN.
type MoveMessagesParams struct {
	Source      string
	Destination string
	Max         int
}

// MoveMessagesResult reports what MoveMessages did.
type MoveMessagesResult struct {
	Moved int
	// Remaining is how many visible messages are left in Source.
	Remaining int
}
