package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/diskguard"
	"github.com/tidemq/tidemq/storage/mem"
)

// Below --min-free-disk, sends are refused with a retryable error while
// receives and deletes drain the queue; above it again, sends go on.
func TestSendsRefusedWhileTheDiskIsLow(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	g := diskguard.New(t.TempDir(), 512<<20, log)
	free := uint64(1 << 30)
	g.SetStatfs(func(string) (uint64, error) { return free, nil })
	g.Check()
	checkSendGuard(t, func(b tidemq.Broker) tidemq.Broker { return &diskGuarded{Broker: b, g: g} }, func(refuse bool) {
		free = 1 << 30
		if refuse {
			free = 100 << 20
		}
		g.Check()
	}, "disk is nearly full")
}

// checkSendGuard checks a broker wrapper that refuses sends while set(true)
// holds: ServiceUnavailable with a message containing want, while receives
// and deletes go on; sends again after set(false).
func checkSendGuard(t *testing.T, wrap func(tidemq.Broker) tidemq.Broker, set func(refuse bool), want string) {
	t.Helper()
	eng, err := engine.Open(engine.Options{Store: mem.New(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	b := wrap(eng)
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	send := func() error {
		_, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: "b"}}})
		return err
	}
	// A fan-out's send to several queues at once is refused the same way.
	together := func() error {
		_, err := tidemq.SendToQueues(ctx, b, []tidemq.SendMessagesParams{{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: "t"}}}})
		return err
	}
	if err := send(); err != nil {
		t.Fatalf("send before the mark: %v", err)
	}
	if err := together(); err != nil {
		t.Fatalf("SendToQueues before the mark: %v", err)
	}
	set(true)
	if err := send(); !tidemq.HasCode(err, tidemq.ErrServiceUnavailable) || !strings.Contains(err.Error(), want) {
		t.Fatalf("send past the mark = %v, want ServiceUnavailable saying %q", err, want)
	}
	if err := together(); !tidemq.HasCode(err, tidemq.ErrServiceUnavailable) || !strings.Contains(err.Error(), want) {
		t.Fatalf("SendToQueues past the mark = %v, want ServiceUnavailable saying %q", err, want)
	}
	msgs, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive past the mark: %v, %d messages", err, len(msgs))
	}
	if _, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: msgs[0].ReceiptHandle}}}); err != nil {
		t.Fatalf("delete past the mark: %v", err)
	}
	set(false)
	if err := send(); err != nil {
		t.Fatalf("send once back under the mark: %v", err)
	}
	if err := together(); err != nil {
		t.Fatalf("SendToQueues once back under the mark: %v", err)
	}
}
