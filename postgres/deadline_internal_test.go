package postgres

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
)

// A receive's visibility deadline counts from when it held its
// connection, not from when it asked for one: under load the wait for a
// connection must not eat into the client's visibility timeout (issue 21:
// a message came back after 724 ms of a 1 s timeout). The node here has
// one connection, which the test holds while the receive waits for it and
// the clock moves on 10 s.
func TestVisibilityDeadlineCountsFromTheConnection(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		name := map[bool]string{false: "standard", true: "fifo"}[fifo]
		t.Run(name, func(t *testing.T) {
			dsn, _ := pgtest.Schema(t)
			u, err := url.Parse(dsn)
			if err != nil {
				t.Fatal(err)
			}
			v := u.Query()
			v.Set("pool_max_conns", "1")
			u.RawQuery = v.Encode()
			clk := clocktest.New(time.Unix(1_700_000_000, 0))
			b, err := Open(context.Background(), Options{DSN: u.String(), Clock: clk, SweepInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			ctx := context.Background()
			qn, attrs := "q", map[string]string{tidemq.AttrVisibilityTimeout: "30"}
			if fifo {
				qn, attrs[tidemq.AttrFifoQueue], attrs[tidemq.AttrContentBasedDeduplication] = "q.fifo", "true", "true"
			}
			if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: qn, Attributes: attrs}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: qn, Entries: []tidemq.SendEntry{{ID: "0", Body: "m", MessageGroupID: "g"}}}); err != nil {
				t.Fatal(err)
			}
			conn, err := b.pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			start := clk.Now()
			type result struct {
				ms  []*tidemq.Message
				err error
			}
			done := make(chan result, 1)
			go func() {
				zero := 0
				ms, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: qn, WaitTimeSeconds: &zero})
				done <- result{ms, err}
			}()
			select {
			case r := <-done:
				t.Fatalf("the receive did not wait for the connection: %v, %v", r.ms, r.err)
			case <-time.After(300 * time.Millisecond): // it waits for the connection by now
			}
			clk.Advance(10 * time.Second)
			conn.Release()
			r := <-done
			if r.err != nil || len(r.ms) != 1 {
				t.Fatalf("receive: %v, %v", r.ms, r.err)
			}
			var visibleAt int64
			if err := b.pool.QueryRow(ctx, `SELECT visible_at FROM messages`).Scan(&visibleAt); err != nil {
				t.Fatal(err)
			}
			want := start.Add(10*time.Second + 30*time.Second)
			if got := timeOf(visibleAt); !got.Equal(want) {
				t.Fatalf("visible again at %v after the start, want %v (30 s from when the receive held its connection)",
					got.Sub(start), want.Sub(start))
			}
		})
	}
}
