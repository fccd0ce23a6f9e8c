package brokertest

import (
	"encoding/base64"
	"encoding/json"
	"runtime"
	"time"

	"github.com/tidemq/tidemq"
)

// moveTaskChecks cover StartMessageMoveTask, ListMessageMoveTasks and
// CancelMessageMoveTask (reference §6). A task runs in the background, so
// the checks watch it through ListMessageMoveTasks (bounded by the
// real-time guard) and, for a task with a rate, drive it with the fake
// clock.
func moveTaskChecks() []check {
	return []check{
		{"StartValidation", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.create("plain", nil)
			_, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("plain")})
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, "Source queue must be configured as a Dead Letter Queue.",
				"StartMessageMoveTask from a queue that is no DLQ")
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("nosuchqueue")})
			e.wantCode(err, tidemq.ErrResourceNotFound, "StartMessageMoveTask from a queue that does not exist")
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq"), DestinationARN: e.arn("nosuchqueue")})
			e.wantCode(err, tidemq.ErrResourceNotFound, "StartMessageMoveTask to a queue that does not exist")
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq"), MaxNumberOfMessagesPerSecond: intp(501)})
			e.wantClientError(err, "StartMessageMoveTask with MaxNumberOfMessagesPerSecond 501")
			if tasks := e.listTasks("dlq", 10); len(tasks) != 0 {
				e.t.Fatalf("refused starts left tasks: %+v", tasks)
			}
		}},
		{"TaskHandles", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			_, err := e.b.CancelMessageMoveTask(e.ctx, tidemq.CancelMoveTaskParams{TaskHandle: "not a handle"})
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, "Value for parameter TaskHandle is invalid.", "CancelMessageMoveTask(garbage)")
			unknown := base64.StdEncoding.EncodeToString([]byte(`{"taskId":"00000000-0000-0000-0000-000000000000","sourceArn":"` + e.arn("dlq") + `"}`))
			_, err = e.b.CancelMessageMoveTask(e.ctx, tidemq.CancelMoveTaskParams{TaskHandle: unknown})
			e.wantMessage(err, tidemq.ErrResourceNotFound, "Task does not exist.", "CancelMessageMoveTask of an unknown task")
			handle, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq")})
			e.ok(err, "StartMessageMoveTask")
			raw, err := base64.StdEncoding.DecodeString(handle)
			var h struct {
				TaskID    string `json:"taskId"`
				SourceARN string `json:"sourceArn"`
			}
			if err != nil || json.Unmarshal(raw, &h) != nil || h.TaskID == "" || h.SourceARN != e.arn("dlq") {
				e.t.Fatalf("task handle %q is not base64 of {\"taskId\":…,\"sourceArn\":\"%s\"}", handle, e.arn("dlq"))
			}
		}},
		{"ErrorWordingAsAWS", func(e *env) {
			// The messages AWS answers with (LocalStack's AWS-validated
			// test_sqs_move_task snapshots).
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			_, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("nosuchqueue")})
			e.wantExact(err, tidemq.ErrResourceNotFound, "The resource that you specified for the SourceArn parameter doesn't exist.",
				"StartMessageMoveTask from a queue that does not exist")
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq"), DestinationARN: e.arn("nosuchqueue")})
			e.wantExact(err, tidemq.ErrResourceNotFound, "The resource that you specified for the DestinationArn parameter doesn't exist.",
				"StartMessageMoveTask to a queue that does not exist")
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("src")})
			e.wantExact(err, tidemq.ErrInvalidParameterValue, "Source queue must be configured as a Dead Letter Queue.",
				"StartMessageMoveTask from a queue that is no DLQ")
			_, err = e.b.ListMessageMoveTasks(e.ctx, tidemq.ListMoveTasksParams{SourceARN: e.arn("nosuchqueue")})
			e.wantExact(err, tidemq.ErrResourceNotFound, "The resource that you specified for the SourceArn parameter doesn't exist.",
				"ListMessageMoveTasks of a queue that does not exist")
			_, err = e.b.CancelMessageMoveTask(e.ctx, tidemq.CancelMoveTaskParams{TaskHandle: "not a handle"})
			e.wantExact(err, tidemq.ErrInvalidParameterValue, "Value for parameter TaskHandle is invalid.", "CancelMessageMoveTask(garbage)")
			handle := func(source string) string {
				return base64.StdEncoding.EncodeToString([]byte(`{"taskId":"00000000-0000-0000-0000-000000000000","sourceArn":"` + source + `"}`))
			}
			_, err = e.b.CancelMessageMoveTask(e.ctx, tidemq.CancelMoveTaskParams{TaskHandle: handle(e.arn("nosuchqueue"))})
			e.wantExact(err, tidemq.ErrResourceNotFound, "The resource that you specified for the SourceArn parameter doesn't exist.",
				"CancelMessageMoveTask with a handle whose source queue does not exist")
			_, err = e.b.CancelMessageMoveTask(e.ctx, tidemq.CancelMoveTaskParams{TaskHandle: handle(e.arn("dlq"))})
			e.wantExact(err, tidemq.ErrResourceNotFound, "Task does not exist.", "CancelMessageMoveTask of an unknown task")
			// Two messages at one per second of the (fake) clock: the task
			// is still running after its first step.
			e.sendBody("src", "m1")
			e.sendBody("src", "m2")
			e.deadLetter("src", 2)
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq"), MaxNumberOfMessagesPerSecond: intp(1)})
			e.ok(err, "StartMessageMoveTask")
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq")})
			e.wantExact(err, tidemq.ErrInvalidParameterValue,
				"There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
				"a second StartMessageMoveTask")
		}},
		{"MessageWithoutSourceIsCouldNotDetermineMessageSource", func(e *env) {
			// A message sent straight to the DLQ has no source: a task
			// without a DestinationArn fails with FailureReason
			// CouldNotDetermineMessageSource and leaves it in the DLQ; a
			// task with a destination moves it.
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.create("target", nil)
			e.sendBody("dlq", "sent directly")
			_, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq")})
			e.ok(err, "StartMessageMoveTask back to sources")
			task := e.waitTask("dlq", tidemq.MoveTaskFailed)
			if task.FailureReason != tidemq.MoveTaskNoSource || task.ApproximateNumberOfMessagesMoved != 0 {
				e.t.Fatalf("task: FailureReason %q, moved %d; want %s, 0", task.FailureReason, task.ApproximateNumberOfMessagesMoved, tidemq.MoveTaskNoSource)
			}
			e.wantCounts("dlq", 1, 0, 0, "after the failed task")
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq"), DestinationARN: e.arn("target")})
			e.ok(err, "StartMessageMoveTask to a destination")
			e.waitTask("dlq", tidemq.MoveTaskCompleted)
			e.wantCounts("target", 1, 0, 0, "after the task with a destination")
		}},
		{"RedrivesToEachMessagesSource", func(e *env) {
			e.create("dlq", nil)
			e.create("src1", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.create("src2", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.sendBody("src1", "a")
			e.sendBody("src1", "b")
			e.sendBody("src2", "c")
			e.sendBody("src2", "d")
			e.deadLetter("src1", 2)
			e.deadLetter("src2", 2)
			startedAt := e.now()
			_, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq")})
			e.ok(err, "StartMessageMoveTask without a destination")
			task := e.waitTask("dlq", tidemq.MoveTaskCompleted)
			if task.ApproximateNumberOfMessagesToMove != 4 || task.ApproximateNumberOfMessagesMoved != 4 {
				e.t.Errorf("completed task: to move %d, moved %d, want 4 and 4", task.ApproximateNumberOfMessagesToMove,
					task.ApproximateNumberOfMessagesMoved)
			}
			if task.DestinationARN != "" || task.MaxNumberOfMessagesPerSecond != 0 || task.TaskHandle != "" || task.FailureReason != "" {
				e.t.Errorf("completed task without destination or rate: %+v", task)
			}
			if task.SourceARN != e.arn("dlq") || task.StartedTimestamp.UnixMilli() != startedAt.UnixMilli() {
				e.t.Errorf("completed task: source %q, started %v, want %q and %v", task.SourceARN, task.StartedTimestamp, e.arn("dlq"), startedAt)
			}
			e.wantCounts("dlq", 0, 0, 0, "the DLQ after the task")
			if got := sortedBodies(e.peek("src1", 10, true)); !equalStrings(got, []string{"a", "b"}) {
				e.t.Errorf("src1 got back %v, want [a b]", got)
			}
			if got := sortedBodies(e.peek("src2", 10, true)); !equalStrings(got, []string{"c", "d"}) {
				e.t.Errorf("src2 got back %v, want [c d]", got)
			}
			// Back in its source a message is no dead letter: no
			// DeadLetterQueueSourceArn, its receives counted afresh.
			for _, m := range append(e.peek("src1", 10, true), e.peek("src2", 10, true)...) {
				if m.DeadLetterQueueSourceARN != "" || m.ApproximateReceiveCount != 0 {
					e.t.Errorf("redriven %q: DeadLetterQueueSourceARN %q, receive count %d; want none and 0", m.Body,
						m.DeadLetterQueueSourceARN, m.ApproximateReceiveCount)
				}
			}
		}},
		{"FIFORedriveLeavesGroupBehindMessageWithoutSource", func(e *env) {
			// A FIFO dead letter whose source queue is gone stays in the
			// DLQ, and the rest of its group stays behind it (a group
			// keeps its order), while other groups move back.
			fifo := map[string]string{tidemq.AttrContentBasedDeduplication: "true"}
			withRedrive := map[string]string{tidemq.AttrContentBasedDeduplication: "true", tidemq.AttrRedrivePolicy: e.redrive("d.fifo", 1)}
			e.create("d.fifo", fifo)
			for _, q := range []string{"a.fifo", "b.fifo", "c.fifo"} {
				e.create(q, withRedrive)
			}
			for _, m := range []struct{ q, body, group string }{{"a.fifo", "a1", "g"}, {"b.fifo", "b1", "g"}, {"c.fifo", "c1", "h"}} {
				e.send(m.q, tidemq.SendEntry{Body: m.body, MessageGroupID: m.group})
				e.deadLetter(m.q, 1)
			}
			e.ok(e.b.DeleteQueue(e.ctx, tidemq.DeleteQueueParams{Queue: "a.fifo"}), "DeleteQueue(a.fifo)")
			res, err := e.b.MoveMessages(e.ctx, tidemq.MoveMessagesParams{Source: "d.fifo"})
			e.ok(err, "MoveMessages(d.fifo) back to the sources")
			if res.Moved != 1 || res.Remaining != 2 {
				e.t.Fatalf("redrive with a1's source gone: moved %d, left %d; want 1 (c1) and 2 (a1, b1 behind it)", res.Moved, res.Remaining)
			}
			e.wantCounts("b.fifo", 0, 0, 0, "b.fifo, whose message waits behind a1 in group g")
			e.wantCounts("c.fifo", 1, 0, 0, "c.fifo, whose message is of another group")
		}},
		{"RedrivesToADestination", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.create("elsewhere", nil)
			sent := e.sendBody("src", "a")
			e.deadLetter("src", 1)
			_, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq"), DestinationARN: e.arn("elsewhere")})
			e.ok(err, "StartMessageMoveTask to elsewhere")
			task := e.waitTask("dlq", tidemq.MoveTaskCompleted)
			if task.DestinationARN != e.arn("elsewhere") || task.ApproximateNumberOfMessagesMoved != 1 {
				e.t.Errorf("completed task: %+v", task)
			}
			e.wantCounts("dlq", 0, 0, 0, "the DLQ")
			e.wantCounts("src", 0, 0, 0, "the source")
			e.wantCounts("elsewhere", 1, 0, 0, "the destination")
			// A redriven message is a new message (SQS's developer guide):
			// a new MessageId, no DeadLetterQueueSourceArn.
			if m := e.receiveOne("elsewhere"); m.DeadLetterQueueSourceARN != "" || m.MessageID == sent.MessageID || m.MessageID == "" || m.Body != "a" {
				e.t.Errorf("moved to a destination: DeadLetterQueueSourceARN %q, MessageId %q (sent as %q); want none and a new id",
					m.DeadLetterQueueSourceARN, m.MessageID, sent.MessageID)
			}
		}},
		{"OneActiveTaskPerSourceAndCancel", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			for _, b := range []string{"a", "b", "c", "d", "e"} {
				e.sendBody("src", b)
			}
			e.deadLetter("src", 5)
			base := e.clk.Timers()
			handle, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq"), MaxNumberOfMessagesPerSecond: intp(1)})
			e.ok(err, "StartMessageMoveTask at 1 message per second")
			// The task waits on the clock between messages.
			if !e.clk.WaitForTimers(base+1, guard) {
				e.t.Fatal("a task with a rate of 1 message per second did not wait on the clock")
			}
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq")})
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, "There is already a task running.", "second StartMessageMoveTask")
			running := e.listTasks("dlq", 1)
			if len(running) != 1 || running[0].Status != tidemq.MoveTaskRunning || running[0].TaskHandle != handle ||
				running[0].MaxNumberOfMessagesPerSecond != 1 || running[0].ApproximateNumberOfMessagesToMove != 5 {
				e.t.Fatalf("ListMessageMoveTasks while running: %+v, want one RUNNING task with its handle, rate 1, 5 to move", running)
			}
			if running[0].ApproximateNumberOfMessagesMoved >= 5 {
				e.t.Fatalf("a task at 1 message per second moved %d messages before the clock moved", running[0].ApproximateNumberOfMessagesMoved)
			}
			moved, err := e.b.CancelMessageMoveTask(e.ctx, tidemq.CancelMoveTaskParams{TaskHandle: handle})
			e.ok(err, "CancelMessageMoveTask")
			e.advance(time.Second) // let the task see the cancellation
			task := e.waitTask("dlq", tidemq.MoveTaskCancelled)
			if task.ApproximateNumberOfMessagesMoved < moved || task.ApproximateNumberOfMessagesMoved >= 5 || task.TaskHandle != "" {
				e.t.Fatalf("cancelled task: %+v (cancel reported %d moved)", task, moved)
			}
			// Moves made are not undone, and nothing was lost.
			inDLQ, inSrc := e.counts("dlq"), e.counts("src")
			if int64(inSrc.visible) != task.ApproximateNumberOfMessagesMoved || inDLQ.visible+inSrc.visible != 5 {
				e.t.Fatalf("after cancel: DLQ %v, source %v, task moved %d", inDLQ, inSrc, task.ApproximateNumberOfMessagesMoved)
			}
			_, err = e.b.CancelMessageMoveTask(e.ctx, tidemq.CancelMoveTaskParams{TaskHandle: handle})
			e.wantClientError(err, "CancelMessageMoveTask of a cancelled task")
			// A new task may start once none is active.
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq")})
			e.ok(err, "StartMessageMoveTask after the cancelled one")
			e.waitTask("dlq", tidemq.MoveTaskCompleted)
			e.wantCounts("dlq", 0, 0, 0, "the DLQ after the second task")
			e.wantCounts("src", 5, 0, 0, "the source after the second task")
		}},
		{"ListIsNewestFirst", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.create("a", nil)
			e.create("b", nil)
			for _, dst := range []string{"a", "b"} {
				_, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq"), DestinationARN: e.arn(dst)})
				e.ok(err, "StartMessageMoveTask to %s", dst)
				e.waitTask("dlq", tidemq.MoveTaskCompleted)
				e.advance(time.Second)
			}
			one, err := e.b.ListMessageMoveTasks(e.ctx, tidemq.ListMoveTasksParams{SourceARN: e.arn("dlq")})
			e.ok(err, "ListMessageMoveTasks without MaxResults")
			if len(one) != 1 || one[0].DestinationARN != e.arn("b") {
				e.t.Fatalf("ListMessageMoveTasks without MaxResults = %+v, want only the newest (to b)", one)
			}
			both := e.listTasks("dlq", 10)
			if len(both) != 2 || both[0].DestinationARN != e.arn("b") || both[1].DestinationARN != e.arn("a") {
				e.t.Fatalf("ListMessageMoveTasks(10) = %+v, want the task to b, then the one to a", both)
			}
			_, err = e.b.ListMessageMoveTasks(e.ctx, tidemq.ListMoveTasksParams{SourceARN: e.arn("dlq"), MaxResults: intp(11)})
			e.wantClientError(err, "ListMessageMoveTasks with MaxResults 11")
			_, err = e.b.ListMessageMoveTasks(e.ctx, tidemq.ListMoveTasksParams{SourceARN: e.arn("nosuchqueue")})
			e.wantCode(err, tidemq.ErrResourceNotFound, "ListMessageMoveTasks of a queue that does not exist")
		}},
	}
}

// listTasks lists the move tasks of a queue.
func (e *env) listTasks(q string, max int) []tidemq.MessageMoveTask {
	e.t.Helper()
	tasks, err := e.b.ListMessageMoveTasks(e.ctx, tidemq.ListMoveTasksParams{SourceARN: e.arn(q), MaxResults: intp(max)})
	e.ok(err, "ListMessageMoveTasks(%s)", q)
	return tasks
}

// waitTask waits (in real time, bounded by the guard) until the newest move
// task of q has the given status, and returns it. A task ends by itself in
// the background; this only gives its goroutine time to run.
func (e *env) waitTask(q, status string) tidemq.MessageMoveTask {
	e.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		tasks := e.listTasks(q, 1)
		if len(tasks) == 1 && tasks[0].Status == status {
			return tasks[0]
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the newest move task of %s did not reach %s within %v of real time: %+v", q, status, guard, tasks)
		}
		runtime.Gosched()
	}
}
