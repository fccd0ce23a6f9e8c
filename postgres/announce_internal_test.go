package postgres

import (
	"strings"
	"testing"
)

// One round names every changed queue before any queue to wake, so that
// a node drops a changed queue's cached row before a wake makes its long
// polls look again (queuecache.go).
func TestAnnouncementsPutChangesFirst(t *testing.T) {
	for range 20 { // map order varies from run to run
		a := &announcer{}
		a.pending = map[string]struct{}{}
		for _, n := range []string{"a", "b", changedPrefix + "a", "c", changedPrefix + "c", "d"} {
			a.pending[n] = struct{}{}
		}
		names := a.take()
		if len(names) != 6 {
			t.Fatalf("took %v", names)
		}
		for i, n := range names {
			if changed := strings.HasPrefix(n, changedPrefix); changed != (i < 2) {
				t.Fatalf("order %v: the changes do not come first", names)
			}
		}
		if a.take() != nil {
			t.Fatal("a second take found names again")
		}
	}
}
