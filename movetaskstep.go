package tidemq

import (
	"errors"
	"time"
)

// A message move task's life, the same on every store: a broker finds the
// task's queues and moves the messages; the rules for when the task may
// start, may be cancelled, and how each step ends it are here.

// ErrNoMoveSource is a mover's error for a message that has no source
// queue to go back to (sent straight to the dead-letter queue); it fails
// a task with MoveTaskNoSource.
var ErrNoMoveSource = errors.New("message has no dead-letter source")

// Active reports whether the task is still running (RUNNING or CANCELLING).
func (t *MessageMoveTask) Active() bool {
	return t.Status == MoveTaskRunning || t.Status == MoveTaskCancelling
}

// CheckStart applies StartMessageMoveTask's rules, in AWS's order, to what
// the broker found: the source queue, the destination (when p names one),
// whether some queue's redrive policy targets the source, and whether a
// task of the source is active.
func (p *StartMoveTaskParams) CheckStart(srcFound, dstFound, isDLQ, running bool) error {
	switch {
	case !srcFound:
		return MoveTaskSourceNotFound()
	case p.DestinationARN != "" && !dstFound:
		return MoveTaskDestinationNotFound()
	case !isDLQ:
		return NotADeadLetterQueue()
	case running:
		return MoveTaskAlreadyRunning()
	}
	return nil
}

// Rate is the task's rate: 0 leaves the pace to the broker.
func (p *StartMoveTaskParams) Rate() int {
	if p.MaxNumberOfMessagesPerSecond == nil {
		return 0
	}
	return *p.MaxNumberOfMessagesPerSecond
}

// CheckCancel applies CancelMessageMoveTask's rules to what the broker
// found for handle h: whether the source queue exists, and the task (nil
// when there is none, or it is of another source).
func CheckCancel(h MoveTaskHandle, srcFound bool, t *MessageMoveTask) error {
	switch {
	case !srcFound: // AWS's answer for a handle of a queue that is gone
		return MoveTaskSourceNotFound()
	case t == nil || t.SourceARN != h.SourceARN:
		return MoveTaskNotFound()
	case t.Status != MoveTaskRunning:
		return MoveTaskNotRunning(t.Status)
	}
	return nil
}

// Listed is the task as ListMessageMoveTasks shows it: with its handle
// while it runs.
func (t MessageMoveTask) Listed(id string) MessageMoveTask {
	if t.Status == MoveTaskRunning {
		t.TaskHandle = MoveTaskHandle{TaskID: id, SourceARN: t.SourceARN}.Encode()
	}
	return t
}

// StepCheck begins a step of an active task: a task being cancelled is
// CANCELLED, and one whose source (or fixed destination) is gone FAILED.
// It reports whether the step goes on to move messages.
func (t *MessageMoveTask) StepCheck(srcFound, dstFound bool) bool {
	switch {
	case t.Status == MoveTaskCancelling:
		t.end(MoveTaskCancelled, "")
	case !srcFound || (t.DestinationARN != "" && !dstFound):
		t.end(MoveTaskFailed, ErrQueueDoesNotExist.Code)
	default:
		return true
	}
	return false
}

// StepSize is how many messages the step moves: at most chunk, and never
// past the count taken when the task started. 0 completes the task (an
// empty dead-letter queue at the start, or done).
func (t *MessageMoveTask) StepSize(chunk int) int {
	left := t.ApproximateNumberOfMessagesToMove - t.ApproximateNumberOfMessagesMoved
	if left <= 0 {
		t.end(MoveTaskCompleted, "")
		return 0
	}
	return int(min(int64(chunk), left))
}

// StepDone records a step that moved n messages and ended with err (the
// mover's: ErrNoMoveSource, a catalogue error, or nil); srcEmpty is
// whether the source has no receivable message left. A failed move fails
// the task with the error's code; a task that has moved its count, or
// emptied its source, is COMPLETED.
func (t *MessageMoveTask) StepDone(n int, err error, srcEmpty bool) {
	t.ApproximateNumberOfMessagesMoved += int64(n)
	switch {
	case errors.Is(err, ErrNoMoveSource):
		t.end(MoveTaskFailed, MoveTaskNoSource)
	case err != nil:
		t.end(MoveTaskFailed, AsError(err).Code.Code)
	case t.ApproximateNumberOfMessagesMoved >= t.ApproximateNumberOfMessagesToMove || srcEmpty:
		t.end(MoveTaskCompleted, "")
	}
}

func (t *MessageMoveTask) end(status, reason string) {
	t.Status, t.FailureReason = status, reason
}

// PaceMoveTask runs a task's steps until step reports that the task
// ended or closing is closed: each step moves chunk messages, or, for a
// task with a rate, rate messages and then waits a second of clock. A step
// that reports again (it failed and has waited before a retry) runs again
// at once.
func PaceMoveTask(clock Clock, closing <-chan struct{}, rate, chunk int, step func(n int) (ended, again bool)) {
	if rate > 0 {
		chunk = rate
	}
	for {
		select {
		case <-closing:
			return
		default:
		}
		ended, again := step(chunk)
		if ended {
			return
		}
		if again || rate <= 0 {
			continue
		}
		timer := clock.NewTimer(time.Second)
		select {
		case <-timer.C():
		case <-closing:
			timer.Stop()
			return
		}
	}
}
