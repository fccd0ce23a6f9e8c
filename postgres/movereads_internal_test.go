package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/tidemq/tidemq"
)

// A move reads each candidate once, whatever stays (moveSome): the
// messages it leaves where they are are left out of its next rounds'
// candidates, so a move of N messages reads O(N) rows in its one
// transaction. Before, each round asked for as many more candidates as had
// stayed, so the run that stayed came back every round: O(N²/100) rows,
// seconds per thousand messages while holding the locks. The count of rows
// is the broker's own (candidatesRead), not a time.
func TestMoveReadsEachCandidateOnce(t *testing.T) {
	ctx := context.Background()
	fifo := map[string]string{tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true"}

	t.Run("FIFO destination group busy", func(t *testing.T) {
		b := openInternal(t)
		for _, name := range []string{"a.fifo", "b.fifo"} {
			if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name, Attributes: fifo}); err != nil {
				t.Fatal(err)
			}
		}
		// 500 messages of group g first in line, then 100 of each of
		// five other groups.
		groups := []string{"g", "g", "g", "g", "g", "h0", "h1", "h2", "h3", "h4"}
		n := 0
		for _, g := range groups {
			for i := 0; i < 10; i++ {
				var es []tidemq.SendEntry
				for j := 0; j < 10; j++ {
					es = append(es, tidemq.SendEntry{ID: fmt.Sprint(j), Body: fmt.Sprintf("m%d", n), MessageGroupID: g})
					n++
				}
				sendAll(t, b, "a.fifo", es)
			}
		}
		dst, err := b.queueFor(ctx, nil, "b.fifo")
		if err != nil {
			t.Fatal(err)
		}
		tx := holdGroup(t, b, dst, "g")
		defer tx.Rollback(ctx)
		before := b.candidatesRead.Load()
		res, err := b.MoveMessages(ctx, tidemq.MoveMessagesParams{Source: "a.fifo", Destination: "b.fifo"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Moved != 500 || res.Remaining != 500 {
			t.Fatalf("with b.fifo's group g busy, the move moved %d and left %d, want 500 and 500", res.Moved, res.Remaining)
		}
		if read := b.candidatesRead.Load() - before; read > 2*int64(n) {
			t.Fatalf("a move of %d messages read %d candidate rows, want at most %d", n, read, 2*n)
		}
	})

	t.Run("source queue gone", func(t *testing.T) {
		b := openInternal(t)
		for _, q := range []tidemq.CreateQueueParams{
			{Name: "dlq"},
			{Name: "src", Attributes: map[string]string{tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`}},
		} {
			if _, err := b.CreateQueue(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		const n = 300
		for i := 0; i < n/10; i++ {
			var es []tidemq.SendEntry
			for j := 0; j < 10; j++ {
				es = append(es, tidemq.SendEntry{ID: fmt.Sprint(j), Body: fmt.Sprintf("m%d", i*10+j)})
			}
			sendAll(t, b, "src", es)
		}
		// A first receive counts each message once; the second moves it
		// to dlq.
		for got := 0; got < n; {
			got += len(receiveFrom(t, b, "src", 0))
		}
		for len(receiveFrom(t, b, "src", 0)) > 0 {
		}
		if err := b.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "src"}); err != nil {
			t.Fatal(err)
		}
		before := b.candidatesRead.Load()
		res, err := b.MoveMessages(ctx, tidemq.MoveMessagesParams{Source: "dlq"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Moved != 0 || res.Remaining != n {
			t.Fatalf("with src gone, a redrive moved %d and left %d, want 0 and %d", res.Moved, res.Remaining, n)
		}
		if read := b.candidatesRead.Load() - before; read > 2*n {
			t.Fatalf("a redrive of %d messages read %d candidate rows, want at most %d", n, read, 2*n)
		}
	})
}

// sendAll sends es to queue, and fails t on any error.
func sendAll(t *testing.T, b *Broker, queue string, es []tidemq.SendEntry) {
	t.Helper()
	res, err := b.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: queue, Entries: es})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
}
