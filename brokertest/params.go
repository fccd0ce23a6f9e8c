package brokertest

import (
	"time"

	"github.com/tidemq/tidemq"
)

// paramChecks cover the rules of the Broker's params that need no state:
// the bounds of optional numbers, required members, batch entry Ids. An
// AWS client sees each of them through a transport, word for word, so the
// checks pin the code and the whole message. They are judged before any
// queue is looked at: a request that breaks one fails the same way whether
// its queue exists or not.
func paramChecks() []check {
	return []check{
		{"MoveTaskRateAndMaxResults", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			for _, src := range []string{"dlq", "nosuchqueue"} {
				for _, rate := range []int{0, 501, -1} {
					_, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn(src), MaxNumberOfMessagesPerSecond: intp(rate)})
					e.wantExact(err, tidemq.ErrInvalidParameterValue,
						"Value "+itoa(rate)+" for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: Must be between 1 and 500.",
						"StartMessageMoveTask(%s) at %d messages per second", src, rate)
				}
				for _, max := range []int{0, 11, -1} {
					_, err := e.b.ListMessageMoveTasks(e.ctx, tidemq.ListMoveTasksParams{SourceARN: e.arn(src), MaxResults: intp(max)})
					e.wantExact(err, tidemq.ErrInvalidParameterValue,
						"Value "+itoa(max)+" for parameter MaxResults is invalid. Reason: Must be between 1 and 10, if provided.",
						"ListMessageMoveTasks(%s) with MaxResults %d", src, max)
				}
			}
			if tasks := e.listTasks("dlq", 10); len(tasks) != 0 {
				e.t.Fatalf("refused starts left tasks: %+v", tasks)
			}
			_, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{})
			e.wantExact(err, tidemq.ErrMissingParameter, "The request must contain the parameter SourceArn.", "StartMessageMoveTask without SourceArn")
			_, err = e.b.ListMessageMoveTasks(e.ctx, tidemq.ListMoveTasksParams{})
			e.wantExact(err, tidemq.ErrMissingParameter, "The request must contain the parameter SourceArn.", "ListMessageMoveTasks without SourceArn")
			_, err = e.b.CancelMessageMoveTask(e.ctx, tidemq.CancelMoveTaskParams{})
			e.wantExact(err, tidemq.ErrMissingParameter, "The request must contain the parameter TaskHandle.", "CancelMessageMoveTask without TaskHandle")
			// The bounds themselves are accepted.
			handle, err := e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq"), MaxNumberOfMessagesPerSecond: intp(500)})
			e.ok(err, "StartMessageMoveTask at 500 messages per second")
			if tasks := e.listTasks("dlq", 10); len(tasks) != 1 || tasks[0].MaxNumberOfMessagesPerSecond != 500 {
				e.t.Fatalf("ListMessageMoveTasks(MaxResults 10) after a start at 500 per second = %+v", tasks)
			}
			if tasks := e.listTasks("dlq", 1); len(tasks) != 1 {
				e.t.Fatalf("ListMessageMoveTasks(MaxResults 1) = %+v", tasks)
			}
			if _, err := e.b.CancelMessageMoveTask(e.ctx, tidemq.CancelMoveTaskParams{TaskHandle: handle}); err != nil &&
				!tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) { // the empty DLQ's task may have completed
				e.t.Fatalf("CancelMessageMoveTask: %s", describe(err))
			}
			e.waitTaskEnded("dlq")
			_, err = e.b.StartMessageMoveTask(e.ctx, tidemq.StartMoveTaskParams{SourceARN: e.arn("dlq"), MaxNumberOfMessagesPerSecond: intp(1)})
			e.ok(err, "StartMessageMoveTask at 1 message per second")
		}},
		{"ListQueuesMaxResults", func(e *env) {
			e.create("dlq", nil)
			for _, max := range []int{0, 1001, -1} {
				want := "Value " + itoa(max) + " for parameter MaxResults is invalid. Reason: MaxResults must be an integer between 1 and 1000."
				_, err := e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{MaxResults: intp(max)})
				e.wantExact(err, tidemq.ErrInvalidParameterValue, want, "ListQueues with MaxResults %d", max)
				for _, q := range []string{"dlq", "missing"} {
					_, err = e.b.ListDeadLetterSourceQueues(e.ctx, tidemq.ListDeadLetterSourceQueuesParams{Queue: q, MaxResults: intp(max)})
					e.wantExact(err, tidemq.ErrInvalidParameterValue, want, "ListDeadLetterSourceQueues(%s) with MaxResults %d", q, max)
				}
			}
			for _, max := range []int{1, 1000} {
				res, err := e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{MaxResults: intp(max)})
				e.ok(err, "ListQueues with MaxResults %d", max)
				if len(res.Names) != 1 || res.NextToken != "" {
					e.t.Fatalf("ListQueues with MaxResults %d = %v (token %q), want [dlq] and no token", max, res.Names, res.NextToken)
				}
				_, err = e.b.ListDeadLetterSourceQueues(e.ctx, tidemq.ListDeadLetterSourceQueuesParams{Queue: "dlq", MaxResults: intp(max)})
				e.ok(err, "ListDeadLetterSourceQueues with MaxResults %d", max)
			}
		}},
		{"ReceiveBounds", func(e *env) {
			e.create("q", nil)
			for _, q := range []string{"q", "missing"} {
				_, err := e.tryReceive(q, 11)
				e.wantExact(err, tidemq.ErrInvalidParameterValue,
					"Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", "ReceiveMessage(%s) of 11", q)
				_, err = e.tryReceive(q, 1, withVisibility(43201))
				e.wantExact(err, tidemq.ErrInvalidParameterValue,
					"Value 43201 for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= 43200, if provided.", "ReceiveMessage(%s) VisibilityTimeout 43201", q)
				_, err = e.tryReceive(q, 1, withWait(21))
				e.wantExact(err, tidemq.ErrInvalidParameterValue,
					"Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", "ReceiveMessage(%s) WaitTimeSeconds 21", q)
			}
			for _, n := range []int{1, 10} {
				_, err := e.tryReceive("q", 1, withMax(n), withVisibility(43200))
				e.ok(err, "ReceiveMessage of %d with VisibilityTimeout 43200", n)
			}
		}},
		{"QueueRequiredMembers", func(e *env) {
			e.create("q", nil)
			_, err := e.b.CreateQueue(e.ctx, tidemq.CreateQueueParams{})
			e.wantExact(err, tidemq.ErrMissingParameter, "The request must contain the parameter QueueName.", "CreateQueue without a name")
			_, err = e.b.GetQueue(e.ctx, tidemq.GetQueueParams{})
			e.wantExact(err, tidemq.ErrMissingParameter, "The request must contain the parameter QueueName.", "GetQueue without a name")
			for _, q := range []string{"q", "missing"} {
				e.wantExact(e.trySet(q, nil), tidemq.ErrMissingParameter, "The request must contain the parameter Attributes.",
					"SetQueueAttributes(%s) without attributes", q)
				e.wantExact(e.b.TagQueue(e.ctx, tidemq.TagQueueParams{Queue: q}), tidemq.ErrMissingParameter,
					"The request must contain the parameter Tags.", "TagQueue(%s) without tags", q)
				e.wantExact(e.b.UntagQueue(e.ctx, tidemq.UntagQueueParams{Queue: q}), tidemq.ErrMissingParameter,
					"The request must contain the parameter TagKeys.", "UntagQueue(%s) without keys", q)
				e.wantExact(e.b.RemovePermission(e.ctx, tidemq.RemovePermissionParams{Queue: q}), tidemq.ErrMissingParameter,
					"The request must contain the parameter Label.", "RemovePermission(%s) without a label", q)
				for _, tt := range []struct {
					p    tidemq.AddPermissionParams
					code *tidemq.ErrorCode
					want string
				}{
					{tidemq.AddPermissionParams{AccountIDs: []string{AccountID}, Actions: []string{"SendMessage"}},
						tidemq.ErrMissingParameter, "The request must contain the parameter Label."},
					{tidemq.AddPermissionParams{Label: "bad label", AccountIDs: []string{AccountID}, Actions: []string{"SendMessage"}},
						tidemq.ErrInvalidParameterValue, "Value bad label for parameter Label is invalid. Reason: Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length."},
					{tidemq.AddPermissionParams{Label: "l", Actions: []string{"SendMessage"}},
						tidemq.ErrMissingParameter, "The request must contain the parameter AWSAccountIds."},
					{tidemq.AddPermissionParams{Label: "l", AccountIDs: []string{AccountID}},
						tidemq.ErrMissingParameter, "The request must contain the parameter Actions."},
					// A missing member is reported before a bad label.
					{tidemq.AddPermissionParams{Label: "bad label", Actions: []string{"SendMessage"}},
						tidemq.ErrMissingParameter, "The request must contain the parameter AWSAccountIds."},
				} {
					tt.p.Queue = q
					e.wantExact(e.b.AddPermission(e.ctx, tt.p), tt.code, tt.want, "AddPermission(%s, %+v)", q, tt.p)
				}
			}
			// An empty list of attributes is refused once the queue is found.
			e.wantExact(e.trySet("q", map[string]string{}), tidemq.ErrMissingParameter, "The request must contain the parameter Attribute.1.Name.",
				"SetQueueAttributes with an empty list")
			e.wantCode(e.trySet("missing", map[string]string{}), tidemq.ErrQueueDoesNotExist, "SetQueueAttributes(missing) with an empty list")
		}},
		{"MessageRequiredMembers", func(e *env) {
			e.create("q", nil)
			e.create("f.fifo", nil)
			for _, q := range []string{"q", "f.fifo", "missing"} {
				_, err := e.b.SendMessages(e.ctx, tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{{}}, Client: client})
				e.wantExact(err, tidemq.ErrMissingParameter, "The request must contain the parameter MessageBody.", "SendMessage(%s) without a body", q)
				_, err = e.b.DeleteMessages(e.ctx, tidemq.DeleteMessagesParams{Queue: q, Entries: []tidemq.DeleteEntry{{}}})
				e.wantExact(err, tidemq.ErrMissingParameter, "The request must contain the parameter ReceiptHandle.", "DeleteMessage(%s) without a handle", q)
				_, err = e.b.ChangeMessageVisibility(e.ctx, tidemq.ChangeVisibilityParams{Queue: q,
					Entries: []tidemq.ChangeVisibilityEntry{{VisibilityTimeout: intp(1)}}})
				e.wantExact(err, tidemq.ErrMissingParameter, "The request must contain the parameter ReceiptHandle.",
					"ChangeMessageVisibility(%s) without a handle", q)
				_, err = e.b.ChangeMessageVisibility(e.ctx, tidemq.ChangeVisibilityParams{Queue: q,
					Entries: []tidemq.ChangeVisibilityEntry{{ReceiptHandle: "AQEBnotahandle"}}})
				e.wantExact(err, tidemq.ErrMissingParameter, "The request must contain the parameter VisibilityTimeout.",
					"ChangeMessageVisibility(%s) without a timeout", q)
			}
			// The timeout's bounds are the entry's.
			e.sendBody("q", "a")
			h := e.receiveOne("q").ReceiptHandle
			for _, v := range []int{-1, 43201} {
				e.wantExact(e.tryChange("q", h, v), tidemq.ErrInvalidParameterValue,
					"Value "+itoa(v)+" for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= 43200, if provided.",
					"ChangeMessageVisibility to %d", v)
			}
			// A batch entry without a timeout sets 0: visible again at once.
			res, err := e.b.ChangeMessageVisibility(e.ctx, tidemq.ChangeVisibilityParams{Queue: "q", Batch: true,
				Entries: []tidemq.ChangeVisibilityEntry{{ID: "a", ReceiptHandle: h}}})
			e.ok(err, "ChangeMessageVisibilityBatch with an entry without a timeout")
			if len(res) != 1 || res[0] != nil {
				e.t.Fatalf("ChangeMessageVisibilityBatch with an entry without a timeout: %v", res)
			}
			e.receiveOne("q")
		}},
		{"BatchOfOneIsABatch", func(e *env) {
			e.create("q", nil)
			const msg = "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long."
			for _, id := range []string{"", "bad id"} {
				_, err := e.b.SendMessages(e.ctx, tidemq.SendMessagesParams{Queue: "q", Batch: true, Entries: []tidemq.SendEntry{{ID: id, Body: "x"}}, Client: client})
				e.wantExact(err, tidemq.ErrInvalidBatchEntryID, msg, "SendMessageBatch of one entry with Id %q", id)
				_, err = e.b.DeleteMessages(e.ctx, tidemq.DeleteMessagesParams{Queue: "q", Batch: true, Entries: []tidemq.DeleteEntry{{ID: id, ReceiptHandle: "h"}}})
				e.wantExact(err, tidemq.ErrInvalidBatchEntryID, msg, "DeleteMessageBatch of one entry with Id %q", id)
				_, err = e.b.ChangeMessageVisibility(e.ctx, tidemq.ChangeVisibilityParams{Queue: "q", Batch: true,
					Entries: []tidemq.ChangeVisibilityEntry{{ID: id, ReceiptHandle: "h"}}})
				e.wantExact(err, tidemq.ErrInvalidBatchEntryID, msg, "ChangeMessageVisibilityBatch of one entry with Id %q", id)
			}
			_, err := e.b.SendMessages(e.ctx, tidemq.SendMessagesParams{Queue: "missing", Batch: true, Client: client})
			e.wantExact(err, tidemq.ErrEmptyBatchRequest, "There should be at least one entry in the request.", "SendMessageBatch(missing) without entries")
			e.wantCounts("q", 0, 0, 0, "after the refused batches")
		}},
		{"PeekMax", func(e *env) {
			e.create("q", nil)
			for i := 0; i < 12; i++ {
				e.sendBody("q", "m"+itoa(i))
			}
			for _, max := range []int{0, 1001} {
				_, err := e.b.PeekMessages(e.ctx, tidemq.PeekMessagesParams{Queue: "q", Max: intp(max)})
				e.wantExact(err, tidemq.ErrInvalidParameterValue,
					"Value "+itoa(max)+" for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 1000, if provided.", "PeekMessages with Max %d", max)
			}
			m, err := e.b.PeekMessages(e.ctx, tidemq.PeekMessagesParams{Queue: "q"})
			e.ok(err, "PeekMessages without Max")
			if len(m) != tidemq.DefaultPeekMessages {
				e.t.Fatalf("PeekMessages without Max returned %d messages, want %d", len(m), tidemq.DefaultPeekMessages)
			}
			if m := e.peek("q", 1000, false); len(m) != 12 {
				e.t.Fatalf("PeekMessages with Max 1000 returned %d messages, want 12", len(m))
			}
		}},
	}
}

// waitTaskEnded waits (in real time, bounded by the guard) until the newest
// move task of q is no longer active.
func (e *env) waitTaskEnded(q string) {
	e.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		tasks := e.listTasks(q, 1)
		if len(tasks) == 1 && tasks[0].Status != tidemq.MoveTaskRunning && tasks[0].Status != tidemq.MoveTaskCancelling {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the newest move task of %s did not end within %v of real time: %+v", q, guard, tasks)
		}
		e.advance(time.Second) // a task with a rate waits on the clock
	}
}
