package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// countingQuerier answers the in-flight count with n. Its first call
// waits for release, as a count that takes long does under load.
type countingQuerier struct {
	calls   atomic.Int32
	started chan struct{} // closed by the first call
	release chan struct{}
	n       int
}

func (c *countingQuerier) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if c.calls.Add(1) == 1 {
		close(c.started)
		<-c.release
	}
	return countRow{c.n}
}

func (c *countingQuerier) Query(context.Context, string, ...any) (pgx.Rows, error) {
	panic("not used")
}

type countRow struct{ n int }

func (r countRow) Scan(dest ...any) error {
	*dest[0].(*int) = r.n
	return nil
}

// A node counts a queue's messages in flight once every inflightRecount
// receives; the receives that arrive while that count runs use the
// estimate instead of counting too. (Under 16 clients each of them
// started its own count, 60–77 counts of 20 ms in 8 s of a receive
// benchmark where 13 were due.) Near the cap every receive counts.
func TestInflightCountedOnceWhileCounting(t *testing.T) {
	b := &Broker{inflight: map[int64]inflightCheck{}}
	q := &queue{id: 1}
	now := time.Unix(1_700_000_000, 0)
	b.inflight[q.id] = inflightCheck{count: 5, receives: inflightRecount - 1}
	fake := &countingQuerier{started: make(chan struct{}), release: make(chan struct{}), n: 7}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := b.inflightRoom(context.Background(), fake, q, now); err != nil {
			t.Error(err)
		}
	}()
	<-fake.started // the due receive is counting
	limit := b.inflightCaps.Cap(false)
	for i := range 20 {
		room, err := b.inflightRoom(context.Background(), fake, q, now)
		if err != nil {
			t.Fatal(err)
		}
		if room != limit-5 {
			t.Fatalf("receive %d while counting: room %d, want the estimate's %d", i, room, limit-5)
		}
	}
	if n := fake.calls.Load(); n != 1 {
		t.Fatalf("%d counts for 21 receives, one of them due, want 1", n)
	}
	close(fake.release)
	wg.Wait()
	if room, _ := b.inflightRoom(context.Background(), fake, q, now); room != limit-7 {
		t.Fatalf("after the count: room %d, want %d", room, limit-7)
	}

	// Near the cap, every receive counts.
	b.inflight[q.id] = inflightCheck{count: limit - inflightNear}
	fake.n = limit - inflightNear
	for range 3 {
		if _, err := b.inflightRoom(context.Background(), fake, q, now); err != nil {
			t.Fatal(err)
		}
	}
	if n := fake.calls.Load(); n != 1+3 {
		t.Fatalf("%d counts after 3 receives near the cap, want %d", n, 1+3)
	}
}
