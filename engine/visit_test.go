package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
)

// Visit hands out every queue's snapshot once, deadlines applied as
// Snapshot applies them, and skips the queues deleted while it runs.
func TestVisit(t *testing.T) {
	ctx := context.Background()
	e, clk := open(t)
	const n = 600 // more than two of Visit's chunks
	for i := range n {
		if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: fmt.Sprintf("q%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q123", Entries: []tidemq.SendEntry{{Body: "x", DelaySeconds: new(5)}}}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(6 * time.Second)
	seen := map[string]int{}
	if !e.Visit(func(s *tidemq.QueueSnapshot) {
		seen[s.Name]++
		if s.Name == "q123" && (s.Visible != 1 || s.Delayed != 0) {
			t.Errorf("q123: visible %d, delayed %d 6 s into a 5 s delay, want 1, 0", s.Visible, s.Delayed)
		}
	}) {
		t.Fatal("Visit refused")
	}
	if len(seen) != n {
		t.Fatalf("visited %d queues, want %d", len(seen), n)
	}
	for name, c := range seen {
		if c != 1 {
			t.Fatalf("%s visited %d times", name, c)
		}
	}
	// Delete every other queue at the first visit: at most the first
	// chunk, already copied, is handed out.
	visited := 0
	e.Visit(func(s *tidemq.QueueSnapshot) {
		if visited == 0 {
			for i := range n {
				if name := fmt.Sprintf("q%03d", i); name != s.Name {
					if err := e.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: name}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		visited++
	})
	if visited == 0 || visited > 256 {
		t.Fatalf("visited %d queues after the others were deleted at the first, want 1 to 256", visited)
	}
}
