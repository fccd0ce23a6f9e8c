package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/testlog"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// The tests of failure and recovery (recover.go; the panic tests are in
// lock_test.go). Each drives the
// recovery loop with the fake clock: it waits for the loop's timer (the
// signal that the loop is waiting), advances the clock by the expected
// delay, and reads the attempt's outcome from the onRecovery hook.

var errDiskFull = errors.New("no space left on device")

type recoveryEnv struct {
	e        *Engine
	clk      *clocktest.Clock
	logs     *testlog.Buffer
	attempts chan error
}

// openRecovery opens an engine on store whose recovery attempts the test
// reads from env.attempts.
func openRecovery(t *testing.T, store storage.Store) *recoveryEnv {
	t.Helper()
	env := &recoveryEnv{attempts: make(chan error, 10)}
	env.e, env.clk, env.logs = openLogged(t, store)
	env.e.onRecovery = func(err error) { env.attempts <- err }
	return env
}

// attempt lets the recovery loop's next attempt run, delay after the
// previous one, and returns its outcome.
func (env *recoveryEnv) attempt(t *testing.T, delay time.Duration) error {
	t.Helper()
	if !env.clk.WaitForTimers(1, 10*time.Second) {
		t.Fatal("the recovery loop is not waiting")
	}
	env.clk.Advance(delay - time.Nanosecond)
	select {
	case err := <-env.attempts:
		t.Fatalf("an attempt ran before its delay of %v: %v", delay, err)
	default:
	}
	env.clk.Advance(time.Nanosecond)
	select {
	case err := <-env.attempts:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no recovery attempt")
		return nil
	}
}

// bodies returns the bodies in queue (in flight too) with their receive
// counts, sorted.
func bodies(t *testing.T, e *Engine, queue string) []string {
	t.Helper()
	peek, err := e.PeekMessages(context.Background(), tidemq.PeekMessagesParams{Queue: queue, Max: new(100), IncludeInflight: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range peek {
		out = append(out, fmt.Sprintf("%s/%d", m.Body, m.ApproximateReceiveCount))
	}
	sort.Strings(out)
	return out
}

// TestRecoversFromStorageFailure: a commit fails (a full disk; the store
// stays broken until reopened). The failing send gets InternalFailure, a
// waiting long poll is answered empty, Healthy reports the error and every
// request is refused; the recovery loop retries after 1 s and 2 s, and
// once the disk has room the engine works again with every acknowledged
// send, receive and delete as it was.
func TestRecoversFromStorageFailure(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	env := openRecovery(t, store)
	e := env.e
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}))
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "idle"}))
	if err := send(t, e, "q", "m0", "m1", "m2", "m3", "m4"); err != nil {
		t.Fatal(err)
	}
	vt := 300
	got, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: new(2), VisibilityTimeout: &vt})
	if err != nil || len(got) != 2 {
		t.Fatal(got, err)
	}
	errs, err := e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ReceiptHandle: got[0].ReceiptHandle}}})
	if err != nil || errs[0] != nil {
		t.Fatal(errs, err)
	}
	before := bodies(t, e, "q")

	// A long poll waits on an empty queue.
	wait := 20
	polled := make(chan error, 1)
	go func() {
		msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "idle", WaitTimeSeconds: &wait})
		if err == nil && len(msgs) != 0 {
			err = fmt.Errorf("received %d messages", len(msgs))
		}
		polled <- err
	}()
	if !env.clk.WaitForTimers(1, 10*time.Second) {
		t.Fatal("the long poll is not waiting")
	}

	store.Fail(errDiskFull)
	if err := send(t, e, "q", "lost"); !tidemq.HasCode(err, tidemq.ErrInternalFailure) {
		t.Fatalf("send on a full disk: %v", err)
	}
	select {
	case err := <-polled:
		if err != nil {
			t.Fatalf("the waiting long poll: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting long poll was not answered")
	}
	if err := e.Healthy(); !errors.Is(err, errDiskFull) {
		t.Fatalf("Healthy = %v, want the storage error", err)
	}
	if _, err := e.GetQueue(ctx, tidemq.GetQueueParams{Name: "q"}); !tidemq.HasCode(err, tidemq.ErrInternalFailure) {
		t.Fatalf("GetQueue while failed: %v", err)
	}

	// The disk is still full: the attempt fails and the next waits longer.
	if err := env.attempt(t, time.Second); !errors.Is(err, errDiskFull) {
		t.Fatalf("first attempt = %v, want the storage error", err)
	}
	if e.Healthy() == nil {
		t.Fatal("healthy after a failed attempt")
	}
	store.Fail(nil)
	if err := env.attempt(t, 2*time.Second); err != nil {
		t.Fatalf("second attempt: %v", err)
	}

	if err := e.Healthy(); err != nil {
		t.Fatalf("Healthy after recovery: %v", err)
	}
	if after := bodies(t, e, "q"); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("after recovery the queue holds %v, before the failure %v", after, before)
	}
	// A handle given before the failure still works.
	errs, err = e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ReceiptHandle: got[1].ReceiptHandle}}})
	if err != nil || errs[0] != nil {
		t.Fatalf("delete with a handle from before the failure: %v %v", errs, err)
	}
	if err := send(t, e, "idle", "new"); err != nil {
		t.Fatalf("send after recovery: %v", err)
	}
	msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "idle"})
	if err != nil || len(msgs) != 1 || msgs[0].Body != "new" {
		t.Fatalf("receive after recovery: %v %v", msgs, err)
	}
	logs := env.logs.String()
	for _, want := range []string{"engine failed", "no space left on device", "engine recovery failed", "next_attempt_in=2s", "engine recovered", "down_for=3s"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
}

// TestRecoveryResumesMoveTask: a message move task running when the engine
// fails is resumed by the reload, from the progress it had made durable,
// and its old runner stops.
func TestRecoveryResumesMoveTask(t *testing.T) {
	ctx := context.Background()
	env := newTaskEnv(t, 3)
	defer env.e.Close()
	attempts := make(chan error, 10)
	env.e.onRecovery = func(err error) { attempts <- err }
	if _, err := env.e.StartMessageMoveTask(ctx, tidemq.StartMoveTaskParams{SourceARN: env.e.arn("dlq"), MaxNumberOfMessagesPerSecond: new(1)}); err != nil {
		t.Fatal(err)
	}
	if !env.clk.WaitForTimers(1, 10*time.Second) { // the runner waits after its first step
		t.Fatal("the task is not running")
	}
	if moved := env.task(t).ApproximateNumberOfMessagesMoved; moved != 1 {
		t.Fatalf("moved %d before the failure, want 1", moved)
	}
	env.store.Fail(errDiskFull)
	if _, err := env.e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "src", Entries: []tidemq.SendEntry{{Body: "x"}}}); err == nil {
		t.Fatal("send on a full disk succeeded")
	}
	env.store.Fail(nil)
	if !env.clk.WaitForTimers(2, 10*time.Second) { // the runner's and the recovery loop's
		t.Fatal("the recovery loop is not waiting")
	}
	env.clk.Advance(time.Second)
	select {
	case err := <-attempts:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no recovery attempt")
	}
	// The resumed runner moved the second message at once and waits.
	if !env.clk.WaitForTimers(1, 10*time.Second) {
		t.Fatal("the task was not resumed")
	}
	env.clk.Advance(time.Second)
	if status := env.waitEnd(t); status != tidemq.MoveTaskCompleted {
		t.Fatalf("task ended %s", status)
	}
	if task := env.task(t); task.ApproximateNumberOfMessagesMoved != 3 {
		t.Fatalf("task after recovery: %+v", task)
	}
	if d, s := env.depth(t, "dlq"), env.depth(t, "src"); d != 0 || s != 3 {
		t.Fatalf("dlq %d, src %d after the task; want 0 and 3", d, s)
	}
}
