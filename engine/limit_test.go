package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage/mem"
)

// bytesOf returns the queue's size accounting.
func (env *pagedEnv) bytesOf(queue string) int64 {
	env.e.mu.Lock()
	defer env.e.mu.Unlock()
	return env.e.queues[queue].bytes
}

// sendSized sends one message of a 90-byte body and one 10-byte
// attribute ("n", "String", "abc": 1 + 6 + 3 bytes), 100 bytes in all.
func (env *pagedEnv) sendSized(queue string) error {
	_, err := env.e.SendMessages(env.ctx, tidemq.SendMessagesParams{Queue: queue, Entries: []tidemq.SendEntry{{
		ID: "0", Body: strings.Repeat("x", 90),
		Attributes: map[string]tidemq.MessageAttributeValue{"n": {DataType: "String", StringValue: "abc"}},
	}}})
	return err
}

// --max-queue-bytes: a queue at its limit refuses sends with
// RequestThrottled (retryable) while receives, deletes and dead-letter
// moves go on; the count survives restarts (paged, from page headers or
// from every record) and drains to zero.
func TestMaxQueueBytes(t *testing.T) {
	env := &pagedEnv{t: t, ctx: t.Context(), clk: clocktest.New(time.Unix(1_700_000_000, 0)), store: mem.New(), maxBytes: 1000}
	env.open()
	t.Cleanup(func() { env.e.Close() })
	env.create("dlq", nil)
	env.create("q", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`})
	for i := 0; i < 10; i++ {
		if err := env.sendSized("q"); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if b := env.bytesOf("q"); b != 1000 {
		t.Fatalf("10 messages of 100 bytes count %d bytes", b)
	}
	err := env.sendSized("q")
	if !tidemq.HasCode(err, tidemq.ErrRequestThrottled) || !strings.Contains(err.Error(), "--max-queue-bytes") {
		t.Fatalf("a send to a full queue: %v", err)
	}
	if c := env.counts("q"); c != [3]int{10, 0, 0} {
		t.Fatalf("the refused send changed the queue: %v", c)
	}
	msgs := env.receive("q", 3, 1)
	env.delete("q", msgs[:2]...)
	if b := env.bytesOf("q"); b != 800 {
		t.Fatalf("after 2 deletes: %d bytes", b)
	}
	if err := env.sendSized("q"); err != nil {
		t.Fatalf("a send once consumers drained the queue: %v", err)
	}
	// The third received message is dead-lettered on its next receive:
	// the move is not refused even into a full dead-letter queue.
	for i := 0; i < 10; i++ {
		if err := env.sendSized("dlq"); err != nil {
			t.Fatal(err)
		}
	}
	env.clk.Advance(2 * time.Second)
	env.receive("q", 10, 30)
	if c := env.counts("dlq"); c[0] != 11 {
		t.Fatalf("the dead-letter move into a full queue: dlq counts %v", c)
	}
	want := map[string]int64{"q": env.bytesOf("q"), "dlq": env.bytesOf("dlq")}
	if want["dlq"] != 1100 {
		t.Fatalf("dlq: %d bytes", want["dlq"])
	}
	for _, restart := range []func(){env.restart, env.crash} {
		restart()
		for q, b := range want {
			if got := env.bytesOf(q); got != b {
				t.Fatalf("%s after a restart: %d bytes, want %d", q, got, b)
			}
		}
		if err := env.sendSized("dlq"); !tidemq.HasCode(err, tidemq.ErrRequestThrottled) {
			t.Fatalf("a send to the full dlq after a restart: %v", err)
		}
	}
	for _, q := range []string{"q", "dlq"} {
		env.clk.Advance(31 * time.Second)
		for {
			msgs := env.receive(q, 10, 30)
			if len(msgs) == 0 {
				break
			}
			env.delete(q, msgs...)
		}
		if b, c := env.bytesOf(q), env.counts(q); b != 0 || c != [3]int{0, 0, 0} {
			t.Fatalf("%s drained: %d bytes, counts %v", q, b, c)
		}
	}
}
