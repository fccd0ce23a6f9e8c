package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// Above --max-memory, sends are refused with a retryable error while
// receives and deletes drain the queue; below it again, sends go on.
func TestSendsRefusedWhileMemoryIsHigh(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := engine.Open(engine.Options{Store: mem.New(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	rss := uint64(100 << 20)
	g := &memGuard{max: 512 << 20, read: func() uint64 { return rss }, log: log}
	g.check()
	b := &memGuarded{Broker: eng, g: g}
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	send := func() error {
		_, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: "b"}}})
		return err
	}
	if err := send(); err != nil {
		t.Fatalf("send at 100 MiB: %v", err)
	}
	rss = 600 << 20
	g.check()
	if err := send(); !tidemq.HasCode(err, tidemq.ErrServiceUnavailable) || !strings.Contains(err.Error(), "--max-memory") {
		t.Fatalf("send at 600 MiB = %v, want ServiceUnavailable naming --max-memory", err)
	}
	msgs, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive while memory is high: %v, %d messages", err, len(msgs))
	}
	if _, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: msgs[0].ReceiptHandle}}}); err != nil {
		t.Fatalf("delete while memory is high: %v", err)
	}
	rss = 200 << 20
	g.check()
	if err := send(); err != nil {
		t.Fatalf("send once memory is back: %v", err)
	}
	if residentBytes() == 0 {
		t.Fatal("the process's resident memory reads 0")
	}
}
