package sqs

import (
	"strconv"

	"github.com/tidemq/tidemq"
)

// The message-move-task actions (DLQ redrive): StartMessageMoveTask,
// ListMessageMoveTasks and CancelMessageMoveTask. The broker judges their
// inputs (a rate of 1 to 500, MaxResults of 1 to 10, the task handle).

func (c *call) startMoveTask(in *startMoveTaskInput) (output, error) {
	if err := c.authorizeARN(iamAction(c.action), in.SourceARN); err != nil {
		return nil, err
	}
	// The messages are sent on the caller's behalf to the destination:
	// the one named, or else each queue whose dead-letter queue this is.
	if in.DestinationARN != "" {
		if err := c.authorizeARN("sqs:SendMessage", in.DestinationARN); err != nil {
			return nil, err
		}
	} else if err := c.authorizeSendToSources(in.SourceARN); err != nil {
		return nil, err
	}
	handle, err := c.broker().StartMessageMoveTask(c.r.Context(), tidemq.StartMoveTaskParams{
		SourceARN: in.SourceARN, DestinationARN: in.DestinationARN, MaxNumberOfMessagesPerSecond: in.MaxNumberOfMessagesPerSecond,
	})
	if err != nil {
		return nil, err
	}
	return &startMoveTaskOutput{TaskHandle: handle}, nil
}

// authorizeSendToSources asks for sqs:SendMessage on every source queue of
// the dead-letter queue an ARN names (a redrive back to the sources sends
// into each). A DLQ that names no queue of this server, or does not exist,
// is left to the broker to refuse.
func (c *call) authorizeSendToSources(dlqARN string) error {
	if c.h.cfg.Authorizer == nil {
		return nil
	}
	name, ok := tidemq.QueueNameOfARN(dlqARN, c.h.cfg.Region, c.h.cfg.AccountID)
	if !ok {
		return nil
	}
	res, err := c.broker().ListDeadLetterSourceQueues(c.r.Context(), tidemq.ListDeadLetterSourceQueuesParams{Queue: name})
	if tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, source := range res.Names {
		if err := c.authorizeARN("sqs:SendMessage", c.queueARN(source)); err != nil {
			return err
		}
	}
	return nil
}

func (c *call) listMoveTasks(in *listMoveTasksInput) (output, error) {
	if err := c.authorizeARN(iamAction(c.action), in.SourceARN); err != nil {
		return nil, err
	}
	tasks, err := c.broker().ListMessageMoveTasks(c.r.Context(), tidemq.ListMoveTasksParams{SourceARN: in.SourceARN, MaxResults: in.MaxResults})
	if err != nil {
		return nil, err
	}
	out := &listMoveTasksOutput{Results: make([]moveTaskEntry, 0, len(tasks))}
	for i := range tasks {
		out.Results = append(out.Results, toMoveTaskEntry(&tasks[i]))
	}
	return out, nil
}

func (c *call) cancelMoveTask(in *cancelMoveTaskInput) (output, error) {
	if h, ok := tidemq.ParseMoveTaskHandle(in.TaskHandle); ok { // a malformed handle: the broker refuses it
		if err := c.authorizeARN(iamAction(c.action), h.SourceARN); err != nil {
			return nil, err
		}
	}
	moved, err := c.broker().CancelMessageMoveTask(c.r.Context(), tidemq.CancelMoveTaskParams{TaskHandle: in.TaskHandle})
	if err != nil {
		return nil, err
	}
	return &cancelMoveTaskOutput{ApproximateNumberOfMessagesMoved: moved}, nil
}

type startMoveTaskOutput struct {
	TaskHandle string `json:"TaskHandle"`
}

func (o *startMoveTaskOutput) writeXML(x *xmlWriter) { x.elem("TaskHandle", o.TaskHandle) }

type cancelMoveTaskOutput struct {
	ApproximateNumberOfMessagesMoved int64 `json:"ApproximateNumberOfMessagesMoved"`
}

func (o *cancelMoveTaskOutput) writeXML(x *xmlWriter) {
	x.elem("ApproximateNumberOfMessagesMoved", strconv.FormatInt(o.ApproximateNumberOfMessagesMoved, 10))
}

// moveTaskEntry is a ListMessageMoveTasksResultEntry. Members AWS leaves
// out are empty here: TaskHandle unless RUNNING, DestinationArn when the
// messages went back to their sources, the rate when the broker chose it,
// FailureReason unless FAILED.
type moveTaskEntry struct {
	TaskHandle                        string `json:"TaskHandle,omitempty"`
	Status                            string `json:"Status"`
	SourceARN                         string `json:"SourceArn"`
	DestinationARN                    string `json:"DestinationArn,omitempty"`
	MaxNumberOfMessagesPerSecond      int    `json:"MaxNumberOfMessagesPerSecond,omitempty"`
	ApproximateNumberOfMessagesMoved  int64  `json:"ApproximateNumberOfMessagesMoved"`
	ApproximateNumberOfMessagesToMove int64  `json:"ApproximateNumberOfMessagesToMove"`
	FailureReason                     string `json:"FailureReason,omitempty"`
	StartedTimestamp                  int64  `json:"StartedTimestamp"` // epoch milliseconds
}

func toMoveTaskEntry(t *tidemq.MessageMoveTask) moveTaskEntry {
	e := moveTaskEntry{
		Status:                            t.Status,
		SourceARN:                         t.SourceARN,
		DestinationARN:                    t.DestinationARN,
		MaxNumberOfMessagesPerSecond:      t.MaxNumberOfMessagesPerSecond,
		ApproximateNumberOfMessagesMoved:  t.ApproximateNumberOfMessagesMoved,
		ApproximateNumberOfMessagesToMove: t.ApproximateNumberOfMessagesToMove,
		StartedTimestamp:                  t.StartedTimestamp.UnixMilli(),
	}
	if t.Status == tidemq.MoveTaskRunning {
		e.TaskHandle = t.TaskHandle
	}
	if t.Status == tidemq.MoveTaskFailed {
		e.FailureReason = t.FailureReason
	}
	return e
}

// writeXML writes the members in model order.
func (e *moveTaskEntry) writeXML(x *xmlWriter) {
	x.optional("TaskHandle", e.TaskHandle)
	x.elem("Status", e.Status)
	x.elem("SourceArn", e.SourceARN)
	x.optional("DestinationArn", e.DestinationARN)
	if e.MaxNumberOfMessagesPerSecond != 0 {
		x.elem("MaxNumberOfMessagesPerSecond", strconv.Itoa(e.MaxNumberOfMessagesPerSecond))
	}
	x.elem("ApproximateNumberOfMessagesMoved", strconv.FormatInt(e.ApproximateNumberOfMessagesMoved, 10))
	x.elem("ApproximateNumberOfMessagesToMove", strconv.FormatInt(e.ApproximateNumberOfMessagesToMove, 10))
	x.optional("FailureReason", e.FailureReason)
	x.elem("StartedTimestamp", strconv.FormatInt(e.StartedTimestamp, 10))
}

// listMoveTasksOutput is ListMessageMoveTasks' output; in XML its Results
// are flattened as <ListMessageMoveTasksResultEntry> elements.
type listMoveTasksOutput struct {
	Results []moveTaskEntry `json:"Results,omitempty"`
}

func (o *listMoveTasksOutput) writeXML(x *xmlWriter) {
	for i := range o.Results {
		x.open("ListMessageMoveTasksResultEntry")
		o.Results[i].writeXML(x)
		x.close("ListMessageMoveTasksResultEntry")
	}
}
