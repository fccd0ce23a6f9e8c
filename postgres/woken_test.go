package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/postgres"
)

// wantWoken starts a long poll of queue q on poller, sends body to q
// through sender once the poll waits, and fails t unless the poll returns
// that message within 3 s of the send (another node's send reaches the
// poll through the poller's LISTEN connection). what says after what.
func wantWoken(t *testing.T, poller, sender *postgres.Broker, body, what string) {
	t.Helper()
	ctx := context.Background()
	done := make(chan []*tidemq.Message, 1)
	go func() {
		m, _ := poller.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", WaitTimeSeconds: ptr(20)})
		done <- m
	}()
	time.Sleep(500 * time.Millisecond) // the poll waits
	sent := time.Now()
	res, err := sender.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "0", Body: body}}})
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-done:
		if len(m) != 1 || m[0].Body != body {
			t.Fatalf("%s: the long poll returned %d messages, want the one sent on the other node", what, len(m))
		}
		if d := time.Since(sent); d > 3*time.Second {
			t.Errorf("%s: the long poll was woken %v after the send on the other node", what, d)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: a send on one node did not wake the long poll on the other", what)
	}
}
