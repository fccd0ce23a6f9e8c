package tidemq

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

// Message move task statuses.
const (
	MoveTaskRunning    = "RUNNING"
	MoveTaskCompleted  = "COMPLETED"
	MoveTaskCancelling = "CANCELLING"
	MoveTaskCancelled  = "CANCELLED"
	MoveTaskFailed     = "FAILED"
)

// MoveTaskNoSource is the FailureReason of a task without a DestinationArn
// that meets a message it cannot return to a source: one sent straight to
// the dead-letter queue (it has no DeadLetterQueueSourceArn), as AWS's DLQ
// redrive troubleshooting guide describes.
const MoveTaskNoSource = "CouldNotDetermineMessageSource"

// MessageMoveTask is a redrive from a dead-letter queue, as
// ListMessageMoveTasks reports it.
type MessageMoveTask struct {
	// TaskHandle is set only while the task is RUNNING.
	TaskHandle string
	Status     string
	SourceARN  string
	// DestinationARN is "" when each message goes back to its own source.
	DestinationARN string
	// MaxNumberOfMessagesPerSecond is 0 when the rate was left to the broker.
	MaxNumberOfMessagesPerSecond      int
	ApproximateNumberOfMessagesMoved  int64
	ApproximateNumberOfMessagesToMove int64
	// FailureReason is an error code, set only when Status is FAILED:
	// AWS.SimpleQueueService.NonExistentQueue when a destination is gone,
	// MoveTaskNoSource when a message has no source to go back to.
	FailureReason    string
	StartedTimestamp time.Time
}

// StartMoveTaskParams are the inputs of StartMessageMoveTask.
type StartMoveTaskParams struct {
	SourceARN      string
	DestinationARN string
	// MaxNumberOfMessagesPerSecond nil lets the broker choose.
	MaxNumberOfMessagesPerSecond *int
}

// ListMoveTasksParams are the inputs of ListMessageMoveTasks.
type ListMoveTasksParams struct {
	SourceARN  string
	MaxResults *int // nil means 1
}

// CancelMoveTaskParams are the inputs of CancelMessageMoveTask.
type CancelMoveTaskParams struct {
	TaskHandle string
}

// MoveTaskHandle is what a task handle encodes: AWS's handles are base64 of
// this JSON object.
type MoveTaskHandle struct {
	TaskID    string `json:"taskId"`
	SourceARN string `json:"sourceArn"`
}

// Encode renders the handle.
func (h MoveTaskHandle) Encode() string {
	b, _ := json.Marshal(h)
	return base64.StdEncoding.EncodeToString(b)
}

// ParseMoveTaskHandle decodes a task handle; it reports false for anything
// that is not one.
func ParseMoveTaskHandle(s string) (MoveTaskHandle, bool) {
	var h MoveTaskHandle
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &h) != nil || h.TaskID == "" || h.SourceARN == "" {
		return h, false
	}
	return h, true
}
