package postgres_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
)

// eventually retries fn every 100 ms until it returns nil or the limit
// passes, and returns its last error.
func eventually(limit time.Duration, fn func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := fn()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// When PostgreSQL restarts, the nodes recover by themselves: while it is
// down Healthy says so and requests fail with an error (nothing hangs);
// once it is back, Healthy is nil again, requests succeed, the queue holds
// what was acknowledged, and the listener listens again, so that a send on
// one node wakes a long poll on the other.
func TestRecoversFromAPostgresRestart(t *testing.T) {
	if os.Getenv(pgtest.EnvDSN) != "" {
		t.Log("restarts a PostgreSQL of its own, not the shared one")
	}
	srv, err := pgtest.Start()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(func() { srv.Stop() })
	ctx := context.Background()
	a := open(t, srv.DSN, tidemq.SystemClock{})
	b := open(t, srv.DSN, tidemq.SystemClock{})
	t.Cleanup(func() { a.Close(); b.Close() })
	if _, err := a.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	send := func(n *postgres.Broker, body string) error {
		res, err := n.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "0", Body: body}}})
		if err == nil {
			err = res[0].Err
		}
		return err
	}
	if err := send(a, "before"); err != nil {
		t.Fatal(err)
	}

	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := a.Healthy(); err == nil {
		t.Error("Healthy = nil while PostgreSQL is down")
	}
	if err := send(a, "while down"); err == nil {
		t.Error("a send while PostgreSQL is down succeeded")
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}

	for _, n := range []*postgres.Broker{a, b} {
		if err := eventually(20*time.Second, n.Healthy); err != nil {
			t.Fatalf("Healthy 20 s after PostgreSQL came back: %v", err)
		}
	}
	if err := eventually(10*time.Second, func() error { return send(a, "after") }); err != nil {
		t.Fatalf("send after PostgreSQL came back: %v", err)
	}
	msgs, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: ptr(10), WaitTimeSeconds: ptr(0)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Body)
	}
	if len(got) != 2 || got[0] != "before" || got[1] != "after" {
		t.Fatalf("after the restart the queue held %v, want [before after]", got)
	}

	// The listener of b listens again: a send on a wakes a long poll on b.
	wantWoken(t, b, a, "wake", "after PostgreSQL restarted")
}
