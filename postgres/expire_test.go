package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
)

// Snapshot (what /metrics and the alarms read) applies retention to every
// queue, counts what expired, and moves the messages of a queue tagged
// tidemq:capture-expired into the queue the tag names instead of dropping
// them.
func TestSnapshotExpiresAndCaptures(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	b := open(t, dsn, clk)
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	short := map[string]string{tidemq.AttrMessageRetentionPeriod: "60"}
	for _, p := range []tidemq.CreateQueueParams{
		{Name: "drops", Attributes: short},
		{Name: "captures", Attributes: short, Tags: map[string]string{postgres.CaptureExpiredTag: "expired"}},
		{Name: "expired"},
	} {
		if _, err := b.CreateQueue(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"drops", "drops", "captures"} {
		if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{{ID: "0", Body: "old " + q}}}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(61 * time.Second)
	snaps := map[string]tidemq.QueueSnapshot{}
	for _, s := range b.Snapshot() {
		snaps[s.Name] = s
	}
	if s := snaps["drops"]; s.Visible != 0 || s.Stats.Expired != 2 {
		t.Errorf("drops after its retention: visible %d, expired %d; want 0 and 2", s.Visible, s.Stats.Expired)
	}
	if s := snaps["captures"]; s.Visible != 0 || s.Stats.Expired != 1 {
		t.Errorf("captures after its retention: visible %d, expired %d; want 0 and 1", s.Visible, s.Stats.Expired)
	}
	if s := snaps["expired"]; s.Visible != 1 || s.Stats.MovedIn != 1 {
		t.Errorf("the capture queue: visible %d, moved in %d; want 1 and 1", s.Visible, s.Stats.MovedIn)
	}
	m, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "expired", WaitTimeSeconds: ptr(0)})
	if err != nil || len(m) != 1 || m[0].Body != "old captures" {
		t.Fatalf("receive from the capture queue: %d messages, %v", len(m), err)
	}
	found := false
	for _, h := range m[0].History {
		found = found || h.Kind == tidemq.HistoryCaptured
	}
	if !found {
		t.Errorf("the captured message's history has no %q event: %+v", tidemq.HistoryCaptured, m[0].History)
	}
}

// A node's sweep drops expired messages of queues that nobody reads.
func TestSweepExpiresUnreadQueues(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	b, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn, Clock: clk, SweepInterval: 20 * time.Millisecond, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{tidemq.AttrMessageRetentionPeriod: "60"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "0", Body: "x"}}}); err != nil {
		t.Fatal(err)
	}
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	count := func() (n int) {
		if err := db.QueryRow(ctx, "SELECT count(*) FROM messages").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	time.Sleep(100 * time.Millisecond) // sweeps before the retention ends keep the message
	if n := count(); n != 1 {
		t.Fatalf("%d messages before the retention ended, want 1", n)
	}
	clk.Advance(61 * time.Second)
	if err := eventually(10*time.Second, func() error {
		if n := count(); n != 0 {
			return fmt.Errorf("%d messages left", n)
		}
		return nil
	}); err != nil {
		t.Fatalf("the sweep did not drop the expired message: %v", err)
	}
}
