package tidemq

import (
	"fmt"
	"testing"
)

func TestMoveTaskStep(t *testing.T) {
	task := func(status string, moved, toMove int64) *MessageMoveTask {
		return &MessageMoveTask{Status: status, ApproximateNumberOfMessagesMoved: moved, ApproximateNumberOfMessagesToMove: toMove}
	}
	tk := task(MoveTaskCancelling, 0, 5)
	if tk.StepCheck(true, true) || tk.Status != MoveTaskCancelled {
		t.Errorf("cancelling: %+v", tk)
	}
	tk = task(MoveTaskRunning, 0, 5)
	tk.DestinationARN = "arn"
	if tk.StepCheck(true, false) || tk.Status != MoveTaskFailed || tk.FailureReason != ErrQueueDoesNotExist.Code {
		t.Errorf("destination gone: %+v", tk)
	}
	tk = task(MoveTaskRunning, 3, 5)
	if !tk.StepCheck(true, false) {
		t.Errorf("no fixed destination needs none: %+v", tk)
	}
	if n := tk.StepSize(100); n != 2 {
		t.Errorf("StepSize = %d, want the 2 left", n)
	}
	tk.StepDone(2, nil, false)
	if tk.Status != MoveTaskCompleted || tk.ApproximateNumberOfMessagesMoved != 5 {
		t.Errorf("done: %+v", tk)
	}
	tk = task(MoveTaskRunning, 5, 5)
	if n := tk.StepSize(10); n != 0 || tk.Status != MoveTaskCompleted {
		t.Errorf("nothing left: %d %+v", n, tk)
	}
	tk = task(MoveTaskRunning, 0, 5)
	tk.StepDone(1, fmt.Errorf("wrapped: %w", ErrNoMoveSource), false)
	if tk.Status != MoveTaskFailed || tk.FailureReason != MoveTaskNoSource {
		t.Errorf("no source: %+v", tk)
	}
	tk = task(MoveTaskRunning, 0, 5)
	tk.StepDone(1, NonExistentQueue(), false)
	if tk.Status != MoveTaskFailed || tk.FailureReason != ErrQueueDoesNotExist.Code {
		t.Errorf("queue gone: %+v", tk)
	}
	tk = task(MoveTaskRunning, 0, 5)
	tk.StepDone(1, nil, true)
	if tk.Status != MoveTaskCompleted {
		t.Errorf("source emptied: %+v", tk)
	}
	tk = task(MoveTaskRunning, 0, 5)
	tk.StepDone(1, nil, false)
	if tk.Status != MoveTaskRunning {
		t.Errorf("more to move: %+v", tk)
	}
}
