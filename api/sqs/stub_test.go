package sqs

import (
	"context"
	"time"

	"github.com/tidemq/tidemq"
)

// stubBroker is a tidemq.Broker with canned answers, for tests of the
// protocol layer that need no queue semantics (fuzzing, routing, limits).
// Like every Broker it validates its params, so that the transport's tests
// see the errors a client gets for a request the broker refuses.
type stubBroker struct {
	panicWith any // when set, every call panics with it
}

var _ tidemq.Broker = (*stubBroker)(nil)

func (b *stubBroker) check() {
	if b.panicWith != nil {
		panic(b.panicWith)
	}
}

func (b *stubBroker) CreateQueue(_ context.Context, p tidemq.CreateQueueParams) (*tidemq.QueueInfo, error) {
	b.check()
	if _, _, err := p.Validate(); err != nil {
		return nil, err
	}
	return &tidemq.QueueInfo{Name: p.Name}, nil
}
func (b *stubBroker) GetQueue(_ context.Context, p tidemq.GetQueueParams) (*tidemq.QueueInfo, error) {
	b.check()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Name == "missing" {
		return nil, tidemq.NonExistentQueue()
	}
	return &tidemq.QueueInfo{Name: p.Name}, nil
}
func (b *stubBroker) DeleteQueue(context.Context, tidemq.DeleteQueueParams) error {
	b.check()
	return nil
}
func (b *stubBroker) ListQueues(_ context.Context, p tidemq.ListQueuesParams) (*tidemq.ListQueuesResult, error) {
	b.check()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &tidemq.ListQueuesResult{Names: []string{"a", "b"}, NextToken: "next"}, nil
}
func (b *stubBroker) ListDeadLetterSourceQueues(_ context.Context, p tidemq.ListDeadLetterSourceQueuesParams) (*tidemq.ListQueuesResult, error) {
	b.check()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &tidemq.ListQueuesResult{}, nil
}
func (b *stubBroker) GetQueueAttributes(_ context.Context, p tidemq.GetQueueAttributesParams) (map[string]string, error) {
	b.check()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return map[string]string{"VisibilityTimeout": "30"}, nil
}
func (b *stubBroker) SetQueueAttributes(_ context.Context, p tidemq.SetQueueAttributesParams) error {
	b.check()
	return p.Validate()
}
func (b *stubBroker) PurgeQueue(context.Context, tidemq.PurgeQueueParams) error {
	b.check()
	return nil
}
func (b *stubBroker) TagQueue(_ context.Context, p tidemq.TagQueueParams) error {
	b.check()
	return p.Validate()
}
func (b *stubBroker) UntagQueue(_ context.Context, p tidemq.UntagQueueParams) error {
	b.check()
	return p.Validate()
}
func (b *stubBroker) ListQueueTags(context.Context, tidemq.ListQueueTagsParams) (map[string]string, error) {
	b.check()
	return map[string]string{"k": "v"}, nil
}
func (b *stubBroker) AddPermission(_ context.Context, p tidemq.AddPermissionParams) error {
	b.check()
	return p.Validate()
}
func (b *stubBroker) RemovePermission(_ context.Context, p tidemq.RemovePermissionParams) error {
	b.check()
	return p.Validate()
}

func (b *stubBroker) SendMessages(_ context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	b.check()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	out := make([]tidemq.SendResult, len(p.Entries))
	for i, e := range p.Entries {
		out[i] = tidemq.SendResult{ID: e.ID, MessageID: "msg-" + e.ID}
		if err := tidemq.ValidateBody(e.Body); err != nil {
			out[i].Err = err
		}
	}
	return out, nil
}

func (b *stubBroker) ReceiveMessages(_ context.Context, p tidemq.ReceiveMessagesParams) ([]*tidemq.Message, error) {
	b.check()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return []*tidemq.Message{{
		MessageID: "m1", ReceiptHandle: "rh1", Body: "hello",
		Attributes: map[string]tidemq.MessageAttributeValue{
			"color":     {DataType: "String", StringValue: "red"},
			"trace.bin": {DataType: "Binary", BinaryValue: []byte{1, 2}},
		},
		SenderID: "AKID", SentTimestamp: time.UnixMilli(1_700_000_000_123), ApproximateReceiveCount: 1,
		FirstReceiveTimestamp: time.UnixMilli(1_700_000_000_456),
	}}, nil
}

func (b *stubBroker) DeleteMessages(_ context.Context, p tidemq.DeleteMessagesParams) ([]error, error) {
	b.check()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return b.handleErrors(len(p.Entries), func(i int) string { return p.Entries[i].ReceiptHandle }), nil
}

func (b *stubBroker) ChangeMessageVisibility(_ context.Context, p tidemq.ChangeVisibilityParams) ([]error, error) {
	b.check()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	errs := b.handleErrors(len(p.Entries), func(i int) string { return p.Entries[i].ReceiptHandle })
	for i := range p.Entries {
		if err := p.Entries[i].Validate(); err != nil {
			errs[i] = err
		}
	}
	return errs, nil
}

// handleErrors accepts receipt handles that start with "rh".
func (b *stubBroker) handleErrors(n int, handle func(int) string) []error {
	errs := make([]error, n)
	for i := range errs {
		if h := handle(i); len(h) < 2 || h[:2] != "rh" {
			errs[i] = tidemq.Errorf(tidemq.ErrReceiptHandleIsInvalid, "The input receipt handle %q is not a valid receipt handle.", h)
		}
	}
	return errs
}

func (b *stubBroker) PeekMessages(_ context.Context, p tidemq.PeekMessagesParams) ([]*tidemq.Message, error) {
	b.check()
	return nil, p.Validate()
}
func (b *stubBroker) MoveMessages(context.Context, tidemq.MoveMessagesParams) (*tidemq.MoveMessagesResult, error) {
	b.check()
	return &tidemq.MoveMessagesResult{}, nil
}
func (b *stubBroker) Snapshot() []tidemq.QueueSnapshot { b.check(); return nil }
func (b *stubBroker) RecordFailure(_ context.Context, p tidemq.RecordFailureParams) ([]error, error) {
	b.check()
	return make([]error, len(p.ReceiptHandles)), nil
}
func (b *stubBroker) Healthy() error { return nil }
func (b *stubBroker) Drain()         {}
func (b *stubBroker) Close() error   { return nil }

// The move-task answers: a handle; a listing whose two tasks carry members
// AWS would not show (a FAILED task's handle, a RUNNING task's failure
// reason), which the handler must leave out; cancel of "th-1" only.

func (b *stubBroker) StartMessageMoveTask(_ context.Context, p tidemq.StartMoveTaskParams) (string, error) {
	b.check()
	if err := p.Validate(); err != nil {
		return "", err
	}
	return "th-1", nil
}

// CancelMessageMoveTask knows one task, th-1 (the handle is not a real one,
// so the stub checks only that there is a handle).
func (b *stubBroker) CancelMessageMoveTask(_ context.Context, p tidemq.CancelMoveTaskParams) (int64, error) {
	b.check()
	if p.TaskHandle == "" {
		return 0, tidemq.MissingParameter("TaskHandle")
	}
	if p.TaskHandle != "th-1" {
		return 0, tidemq.Errorf(tidemq.ErrResourceNotFound, "Task does not exist.")
	}
	return 3, nil
}
func (b *stubBroker) ListMessageMoveTasks(_ context.Context, p tidemq.ListMoveTasksParams) ([]tidemq.MessageMoveTask, error) {
	b.check()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return []tidemq.MessageMoveTask{{
		TaskHandle: "th-1", Status: tidemq.MoveTaskRunning, SourceARN: p.SourceARN,
		DestinationARN: "arn:aws:sqs:us-east-1:000000000000:dest", MaxNumberOfMessagesPerSecond: 5,
		ApproximateNumberOfMessagesMoved: 2, ApproximateNumberOfMessagesToMove: 5, FailureReason: "stale",
		StartedTimestamp: time.UnixMilli(1_700_000_000_123),
	}, {
		TaskHandle: "stale", Status: tidemq.MoveTaskFailed, SourceARN: p.SourceARN,
		ApproximateNumberOfMessagesMoved: 1, ApproximateNumberOfMessagesToMove: 4,
		FailureReason: "AWS.SimpleQueueService.NonExistentQueue", StartedTimestamp: time.UnixMilli(1_699_999_000_000),
	}}, nil
}
