package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

func open(t *testing.T) (*engine.Engine, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, clk
}

func TestSmokeStandardAndFIFO(t *testing.T) {
	ctx := context.Background()
	e, clk := open(t)
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "dlq"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "hello"}}})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	if err != nil || len(msgs) != 1 || msgs[0].Body != "hello" || msgs[0].ApproximateReceiveCount != 1 {
		t.Fatalf("receive: %v %+v", err, msgs)
	}
	clk.Advance(31 * time.Second)
	msgs, _ = e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	if len(msgs) != 0 {
		t.Fatalf("message should have moved to the DLQ, got %+v", msgs)
	}
	msgs, _ = e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "dlq"})
	if len(msgs) != 1 || msgs[0].ApproximateReceiveCount != 2 || msgs[0].DeadLetterQueueSourceARN == "" {
		t.Fatalf("dlq receive: %+v", msgs)
	}

	_, err = e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "f.fifo", Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	var entries []tidemq.SendEntry
	for i, g := range []string{"a", "a", "b", "a"} {
		entries = append(entries, tidemq.SendEntry{ID: string(rune('0' + i)), Body: g + string(rune('0'+i)), MessageGroupID: g, MessageDeduplicationID: string(rune('0' + i))})
	}
	if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Entries: entries, Batch: true}); err != nil {
		t.Fatal(err)
	}
	msgs, _ = e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "f.fifo", MaxNumberOfMessages: new(10)})
	var got []string
	for _, m := range msgs {
		got = append(got, m.Body)
	}
	if len(got) != 4 || got[0] != "a0" || got[1] != "a1" || got[2] != "a3" || got[3] != "b2" {
		t.Fatalf("fifo receive order = %v", got)
	}
	msgs, _ = e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "f.fifo", MaxNumberOfMessages: new(10)})
	if len(msgs) != 0 {
		t.Fatalf("groups should be locked, got %d", len(msgs))
	}
}

func TestLongPollWakesOnSend(t *testing.T) {
	ctx := context.Background()
	e, clk := open(t)
	e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"})
	wait := 20
	done := make(chan []*tidemq.Message, 1)
	go func() {
		msgs, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", WaitTimeSeconds: &wait})
		done <- msgs
	}()
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("receive never waited")
	}
	e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "x"}}})
	select {
	case msgs := <-done:
		if len(msgs) != 1 {
			t.Fatalf("got %d messages", len(msgs))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("long poll not woken by send")
	}
}

func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	e, clk := open(t)
	e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "dlq"})
	e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":3}`,
	}})
	five := 5
	e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "a"}}})
	clk.Advance(10 * time.Second)
	e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: "b"}, {ID: "2", Body: "c", DelaySeconds: &five}}, Batch: true})
	e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	snap := e.Snapshot()
	if len(snap) != 2 || snap[0].Name != "dlq" || !snap[0].IsDeadLetterQueue || snap[1].IsDeadLetterQueue {
		t.Fatalf("snapshot: %+v", snap)
	}
	q := snap[1]
	if q.Visible != 1 || q.InFlight != 1 || q.Delayed != 1 || q.OldestAgeSeconds != 10 || q.MaxReceiveCount != 3 ||
		q.Stats.Sent != 3 || q.Stats.Received != 1 || q.LastReceiveUnixMilli != clk.Now().UnixMilli() {
		t.Fatalf("queue snapshot: %+v", q)
	}
}

func TestExpiryIsCountedAndCanBeCaptured(t *testing.T) {
	ctx := context.Background()
	e, clk := open(t)
	short := map[string]string{"MessageRetentionPeriod": "60"}
	e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "graveyard"})
	e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "kept", Attributes: short, Tags: map[string]string{engine.CaptureExpiredTag: "graveyard"}})
	e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "dropped", Attributes: short})
	for _, q := range []string{"kept", "dropped"} {
		e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{{Body: "old " + q}}})
	}
	clk.Advance(59 * time.Second)
	if got := e.Sweep(); len(got) != 0 {
		t.Fatalf("expired before the retention period: %v", got)
	}
	clk.Advance(2 * time.Second)
	got := e.Sweep()
	if got["kept"] != 1 || got["dropped"] != 1 || len(got) != 2 {
		t.Fatalf("sweep counted %v", got)
	}
	if got := e.Sweep(); len(got) != 0 {
		t.Fatalf("second sweep counted again: %v", got)
	}
	msgs, _ := e.PeekMessages(ctx, tidemq.PeekMessagesParams{Queue: "graveyard"})
	if len(msgs) != 1 || msgs[0].Body != "old kept" {
		t.Fatalf("graveyard holds %+v", msgs)
	}
	last := msgs[0].History[len(msgs[0].History)-1]
	if last.Kind != tidemq.HistoryCaptured || last.Queue != "kept" {
		t.Fatalf("story of a captured message ends with %+v", last)
	}
	for _, s := range e.Snapshot() {
		want := map[string]uint64{"kept": 1, "dropped": 1, "graveyard": 0}[s.Name]
		if s.Stats.Expired != want {
			t.Errorf("%s: Expired = %d, want %d", s.Name, s.Stats.Expired, want)
		}
	}
	if d, _ := e.PeekMessages(ctx, tidemq.PeekMessagesParams{Queue: "dropped", IncludeInflight: true}); len(d) != 0 {
		t.Fatalf("dropped queue still holds %d", len(d))
	}
}
