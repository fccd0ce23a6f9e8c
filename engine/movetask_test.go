package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage/mem"
)

// taskEnv is a source queue with maxReceiveCount 1, its DLQ holding n dead
// letters, on a fake clock.
type taskEnv struct {
	e     *Engine
	clk   *clocktest.Clock
	store *mem.Store
	ended chan string
}

func newTaskEnv(t *testing.T, n int) *taskEnv {
	t.Helper()
	env := &taskEnv{clk: clocktest.New(time.Unix(1_700_000_000, 0)), store: mem.New(), ended: make(chan string, 10)}
	env.open(t)
	ctx := context.Background()
	must(t)(env.e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "dlq"}))
	must(t)(env.e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "src", Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`,
	}}))
	for i := 0; i < n; i++ {
		must(t)(env.e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "src", Entries: []tidemq.SendEntry{{Body: fmt.Sprint("m", i)}}}))
	}
	zero := 0
	for got := 0; got < n; {
		msgs, err := env.e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "src", MaxNumberOfMessages: new(10), VisibilityTimeout: &zero})
		if err != nil {
			t.Fatal(err)
		}
		got += len(msgs)
	}
	// The next receive moves them all to the DLQ.
	msgs, _ := env.e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "src", MaxNumberOfMessages: new(10)})
	if len(msgs) != 0 {
		t.Fatalf("expected every message dead-lettered, got %d back", len(msgs))
	}
	if d := env.depth(t, "dlq"); d != n {
		t.Fatalf("dlq depth %d, want %d", d, n)
	}
	return env
}

func (env *taskEnv) open(t *testing.T) {
	e, err := Open(Options{Store: env.store, Clock: env.clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.onTaskEnd = func(id, status string) { env.ended <- status }
	env.e = e
}

func (env *taskEnv) depth(t *testing.T, q string) int {
	t.Helper()
	a, err := env.e.GetQueueAttributes(context.Background(), tidemq.GetQueueAttributesParams{Queue: q, Names: []string{"ApproximateNumberOfMessages"}})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(a["ApproximateNumberOfMessages"], &n)
	return n
}

func (env *taskEnv) task(t *testing.T) tidemq.MessageMoveTask {
	t.Helper()
	l, err := env.e.ListMessageMoveTasks(context.Background(), tidemq.ListMoveTasksParams{SourceARN: env.e.arn("dlq")})
	if err != nil || len(l) == 0 {
		t.Fatalf("list: %v %v", l, err)
	}
	return l[0]
}

func (env *taskEnv) waitEnd(t *testing.T) string {
	t.Helper()
	select {
	case s := <-env.ended:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("task did not end")
		return ""
	}
}

// must fails the test on a call's error: must(t)(f()).
func must(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestMoveTaskBackToSourceAtRate(t *testing.T) {
	env := newTaskEnv(t, 5)
	defer env.e.Close()
	ctx := context.Background()
	handle, err := env.e.StartMessageMoveTask(ctx, tidemq.StartMoveTaskParams{SourceARN: env.e.arn("dlq"), MaxNumberOfMessagesPerSecond: new(2)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tidemq.ParseMoveTaskHandle(handle); !ok {
		t.Fatalf("handle %q is not in AWS's format", handle)
	}
	_, err = env.e.StartMessageMoveTask(ctx, tidemq.StartMoveTaskParams{SourceARN: env.e.arn("dlq")})
	if !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) {
		t.Fatalf("second task on the same source: %v", err)
	}
	for _, want := range []int64{2, 4} {
		if !env.clk.WaitForTimers(1, 5*time.Second) {
			t.Fatal("task never waited for its rate")
		}
		task := env.task(t)
		if task.ApproximateNumberOfMessagesMoved != want || task.Status != "RUNNING" || task.TaskHandle != handle {
			t.Fatalf("after a second: %+v, want %d moved", task, want)
		}
		env.clk.Advance(time.Second)
	}
	if s := env.waitEnd(t); s != "COMPLETED" {
		t.Fatalf("status %s", s)
	}
	task := env.task(t)
	if task.ApproximateNumberOfMessagesMoved != 5 || task.ApproximateNumberOfMessagesToMove != 5 || task.TaskHandle != "" || task.DestinationARN != "" {
		t.Fatalf("completed task: %+v", task)
	}
	if env.depth(t, "src") != 5 || env.depth(t, "dlq") != 0 {
		t.Fatalf("src %d dlq %d after redrive", env.depth(t, "src"), env.depth(t, "dlq"))
	}
	msgs, _ := env.e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "src"})
	if len(msgs) != 1 || msgs[0].DeadLetterQueueSourceARN != "" || msgs[0].ApproximateReceiveCount != 1 {
		t.Fatalf("redriven message: %+v", msgs)
	}
}

func TestMoveTaskCancelAndRestart(t *testing.T) {
	env := newTaskEnv(t, 6)
	ctx := context.Background()
	must(t)(env.e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "other"}))
	handle, err := env.e.StartMessageMoveTask(ctx, tidemq.StartMoveTaskParams{SourceARN: env.e.arn("dlq"), DestinationARN: env.e.arn("other"), MaxNumberOfMessagesPerSecond: new(2)})
	if err != nil {
		t.Fatal(err)
	}
	env.clk.WaitForTimers(1, 5*time.Second)
	// Restart mid-task: the task resumes from its recorded count.
	env.e.Close()
	env.open(t)
	defer env.e.Close()
	if !env.clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("resumed task never waited")
	}
	if task := env.task(t); task.Status != "RUNNING" || task.ApproximateNumberOfMessagesMoved != 4 || task.DestinationARN != env.e.arn("other") {
		t.Fatalf("after restart: %+v", task)
	}
	moved, err := env.e.CancelMessageMoveTask(ctx, tidemq.CancelMoveTaskParams{TaskHandle: handle})
	if err != nil || moved != 4 {
		t.Fatalf("cancel: %d %v", moved, err)
	}
	env.clk.Advance(time.Second)
	if s := env.waitEnd(t); s != "CANCELLED" {
		t.Fatalf("status %s", s)
	}
	if env.depth(t, "other") != 4 || env.depth(t, "dlq") != 2 {
		t.Fatalf("other %d dlq %d", env.depth(t, "other"), env.depth(t, "dlq"))
	}
	if _, err := env.e.CancelMessageMoveTask(ctx, tidemq.CancelMoveTaskParams{TaskHandle: handle}); !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) {
		t.Fatalf("cancel of a cancelled task: %v", err)
	}
	if _, err := env.e.CancelMessageMoveTask(ctx, tidemq.CancelMoveTaskParams{TaskHandle: "bm90IGEgaGFuZGxl"}); !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) {
		t.Fatalf("bad handle: %v", err)
	}
	unknown := tidemq.MoveTaskHandle{TaskID: "nope", SourceARN: env.e.arn("dlq")}.Encode()
	if _, err := env.e.CancelMessageMoveTask(ctx, tidemq.CancelMoveTaskParams{TaskHandle: unknown}); !tidemq.HasCode(err, tidemq.ErrResourceNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
}

func TestMoveTaskDestinationDeleted(t *testing.T) {
	env := newTaskEnv(t, 6)
	defer env.e.Close()
	ctx := context.Background()
	must(t)(env.e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "other"}))
	_, err := env.e.StartMessageMoveTask(ctx, tidemq.StartMoveTaskParams{SourceARN: env.e.arn("dlq"), DestinationARN: env.e.arn("other"), MaxNumberOfMessagesPerSecond: new(2)})
	if err != nil {
		t.Fatal(err)
	}
	env.clk.WaitForTimers(1, 5*time.Second)
	if err := env.e.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "other"}); err != nil {
		t.Fatal(err)
	}
	env.clk.Advance(time.Second)
	if s := env.waitEnd(t); s != "FAILED" {
		t.Fatalf("status %s", s)
	}
	task := env.task(t)
	if task.FailureReason != "AWS.SimpleQueueService.NonExistentQueue" || task.ApproximateNumberOfMessagesMoved != 2 {
		t.Fatalf("failed task: %+v", task)
	}
	if env.depth(t, "dlq") != 4 {
		t.Fatalf("dlq depth %d: messages lost", env.depth(t, "dlq"))
	}
}

func TestMoveTaskValidation(t *testing.T) {
	env := newTaskEnv(t, 1)
	defer env.e.Close()
	ctx := context.Background()
	cases := []struct {
		p    tidemq.StartMoveTaskParams
		code *tidemq.ErrorCode
	}{
		{tidemq.StartMoveTaskParams{SourceARN: env.e.arn("missing")}, tidemq.ErrResourceNotFound},
		{tidemq.StartMoveTaskParams{SourceARN: env.e.arn("src")}, tidemq.ErrInvalidParameterValue}, // not a DLQ
		{tidemq.StartMoveTaskParams{SourceARN: env.e.arn("dlq"), DestinationARN: env.e.arn("missing")}, tidemq.ErrResourceNotFound},
		{tidemq.StartMoveTaskParams{SourceARN: env.e.arn("dlq"), MaxNumberOfMessagesPerSecond: new(501)}, tidemq.ErrInvalidParameterValue},
		{tidemq.StartMoveTaskParams{}, tidemq.ErrMissingParameter},
	}
	for _, c := range cases {
		if _, err := env.e.StartMessageMoveTask(ctx, c.p); !tidemq.HasCode(err, c.code) {
			t.Errorf("%+v: got %v, want %s", c.p, err, c.code.Code)
		}
	}
}
