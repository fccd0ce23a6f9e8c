package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
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
	eng, err := engine.Open(engine.Options{Store: mem.New(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	g := diskguard.New(t.TempDir(), 512<<20, log)
	free := uint64(1 << 30)
	g.SetStatfs(func(string) (uint64, error) { return free, nil })
	g.Check()
	b := &diskGuarded{Broker: eng, g: g}
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	send := func() error {
		_, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: "b"}}})
		return err
	}
	if err := send(); err != nil {
		t.Fatalf("send with 1 GiB free: %v", err)
	}
	free = 100 << 20
	g.Check()
	var te *tidemq.Error
	if err := send(); !errors.As(err, &te) || te.Code != tidemq.ErrServiceUnavailable {
		t.Fatalf("send with 100 MiB free = %v, want ServiceUnavailable", err)
	}
	msgs, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive while the disk is low: %v, %d messages", err, len(msgs))
	}
	if _, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: msgs[0].ReceiptHandle}}}); err != nil {
		t.Fatalf("delete while the disk is low: %v", err)
	}
	free = 1 << 30
	g.Check()
	if err := send(); err != nil {
		t.Fatalf("send once space is back: %v", err)
	}
}
