package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/tidemq/tidemq"
)

// Visit reads the queues a page at a time and hands each once, across
// page boundaries, whatever the count's remainder.
func TestVisitPagesEveryQueueOnce(t *testing.T) {
	defer func(n int) { visitPage = n }(visitPage)
	visitPage = 3
	b := openInternal(t)
	ctx := context.Background()
	for n := 0; n <= 7; n++ {
		if n > 0 {
			if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: fmt.Sprintf("q%02d", n)}); err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]int{}
		if !b.Visit(func(s *tidemq.QueueSnapshot) { seen[s.Name]++ }) {
			t.Fatalf("%d queues: Visit = false", n)
		}
		if len(seen) != n {
			t.Errorf("%d queues: Visit saw %d: %v", n, len(seen), seen)
		}
		for name, k := range seen {
			if k != 1 {
				t.Errorf("%d queues: Visit handed %s %d times", n, name, k)
			}
		}
	}
}
