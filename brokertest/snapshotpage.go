package brokertest

import (
	"reflect"
	"time"

	"github.com/tidemq/tidemq"
)

// snapshotPageChecks pin tidemq.SnapshotPager (GET /tidemq/queues' pages):
// every driver pages its queues in byte order of their names, from after
// the name it is given, at most n, each snapshot the one Snapshot has;
// tidemq.QueueCounter (--max-queues) counts what the pages hold; and
// tidemq.Visitor hands out what Snapshot has.
func snapshotPageChecks() []check {
	return []check{
		{"SnapshotsAfterPagesInNameOrder", func(e *env) {
			p, ok := e.b.(tidemq.SnapshotPager)
			if !ok {
				e.t.Fatalf("%T is no tidemq.SnapshotPager: GET /tidemq/queues would snapshot every queue for a page", e.b)
			}
			// Byte order, not a locale's: upper case first, '-' before
			// '2' before '_'.
			names := []string{"Zed", "alpha", "alpha-2", "alpha2", "alpha_3", "target"}
			for _, n := range []string{"target", "alpha_3", "Zed", "alpha2", "alpha", "alpha-2"} {
				var attrs map[string]string
				if n == "alpha2" {
					attrs = map[string]string{tidemq.AttrRedrivePolicy: e.redrive("target", 3)}
				}
				e.create(n, attrs)
			}
			e.send("alpha", tidemq.SendEntry{Body: "later", DelaySeconds: intp(5)})
			e.advance(6 * time.Second) // the page applies the delay's end
			whole := map[string]tidemq.QueueSnapshot{}
			for _, s := range e.b.Snapshot() {
				whole[s.Name] = s
			}
			page := func(after string, n int) []string {
				snaps, err := p.SnapshotsAfter(after, n)
				e.ok(err, "SnapshotsAfter(%q, %d)", after, n)
				out := []string{}
				for _, s := range snaps {
					out = append(out, s.Name)
					w := whole[s.Name]
					w.OldestAgeSeconds = s.OldestAgeSeconds // the clock stood still, but PostgreSQL's age is its own
					if !reflect.DeepEqual(s, w) {
						e.t.Errorf("SnapshotsAfter(%q, %d) has %+v, Snapshot %+v", after, n, s, whole[s.Name])
					}
				}
				return out
			}
			var got []string
			for after := ""; ; {
				names := page(after, 2)
				got = append(got, names...)
				if len(names) < 2 {
					break
				}
				after = names[len(names)-1]
			}
			if !reflect.DeepEqual(got, names) {
				e.t.Errorf("pages of 2: %q, want %q", got, names)
			}
			for _, c := range []struct {
				after string
				n     int
				want  []string
			}{
				{"", 100, names},
				{"alpha-1", 2, []string{"alpha-2", "alpha2"}}, // after a name no queue has
				{"alpha_3", 1, []string{"target"}},
				{"target", 5, []string{}},
				{"", 0, []string{}},
			} {
				if got := page(c.after, c.n); !reflect.DeepEqual(got, c.want) {
					e.t.Errorf("SnapshotsAfter(%q, %d): %q, want %q", c.after, c.n, got, c.want)
				}
			}
			snaps, _ := p.SnapshotsAfter("alpha", 100)
			bySnap := map[string]tidemq.QueueSnapshot{}
			for _, s := range snaps {
				bySnap[s.Name] = s
			}
			if t := bySnap["target"]; !t.IsDeadLetterQueue || t.ARN != e.arn("target") {
				e.t.Errorf("SnapshotsAfter's target: %+v, want the dead-letter queue alpha2's RedrivePolicy names", t)
			}
			if a, _ := p.SnapshotsAfter("", 2); len(a) < 2 || a[1].Name != "alpha" || a[1].Visible != 1 || a[1].Delayed != 0 {
				e.t.Errorf("SnapshotsAfter's alpha 6 s into a 5 s delay: %+v, want 1 visible, 0 delayed", a)
			}
		}},
		{"SnapshotsAfterFollowsDeletesAndRestarts", func(e *env) {
			for _, n := range []string{"c", "a", "b", "d"} {
				e.create(n, nil)
			}
			e.ok(e.b.DeleteQueue(e.ctx, tidemq.DeleteQueueParams{Queue: "b"}), "DeleteQueue(b)")
			e.create("e", nil)
			want := []string{"a", "c", "d", "e"}
			names := func(when string) {
				snaps, err := e.b.(tidemq.SnapshotPager).SnapshotsAfter("", 10)
				e.ok(err, "SnapshotsAfter %s", when)
				got := []string{}
				for _, s := range snaps {
					got = append(got, s.Name)
				}
				if !reflect.DeepEqual(got, want) {
					e.t.Errorf("SnapshotsAfter %s: %q, want %q", when, got, want)
				}
				c, ok := e.b.(tidemq.QueueCounter)
				if !ok {
					e.t.Fatalf("%T is no tidemq.QueueCounter: --max-queues would snapshot every queue to count them", e.b)
				}
				if n, err := c.QueueCount(); err != nil || n != len(want) {
					e.t.Errorf("QueueCount %s = %d, %v; want %d", when, n, err, len(want))
				}
			}
			names("after a delete")
			if e.h.Reopen == nil {
				return
			}
			e.restart()
			names("after a restart")
		}},
		{"VisitSeesWhatSnapshotHas", func(e *env) {
			v, ok := e.b.(tidemq.Visitor)
			if !ok {
				e.t.Fatalf("%T is no tidemq.Visitor: the console's overview and the alarms would hold every queue's snapshot at once", e.b)
			}
			e.create("target", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("target", 3)})
			e.create("later", nil)
			e.send("src", tidemq.SendEntry{Body: "now"})
			e.send("later", tidemq.SendEntry{Body: "later", DelaySeconds: intp(5)})
			e.advance(6 * time.Second) // the visit applies the delay's end
			want := map[string]tidemq.QueueSnapshot{}
			for _, s := range e.b.Snapshot() {
				s.ARN = ""
				want[s.Name] = s
			}
			got := map[string]tidemq.QueueSnapshot{}
			if !v.Visit(func(s *tidemq.QueueSnapshot) {
				c := *s
				c.ARN = ""
				if _, dup := got[c.Name]; dup {
					e.t.Errorf("Visit handed %s twice", c.Name)
				}
				got[c.Name] = c
			}) {
				e.t.Fatal("Visit = false on a healthy broker")
			}
			if !reflect.DeepEqual(got, want) {
				e.t.Errorf("Visit saw %+v, Snapshot has %+v", got, want)
			}
			if l := got["later"]; l.Visible != 1 || l.Delayed != 0 || !got["target"].IsDeadLetterQueue {
				e.t.Errorf("Visit: later %+v (want 1 visible, 0 delayed), target %+v (want a dead-letter queue)", l, got["target"])
			}
		}},
	}
}
