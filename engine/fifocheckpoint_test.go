package engine

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
)

// FIFO checkpoints (fifocheckpoint.go): a start-up from one reads what was
// in memory or changed since, not the group pages; and rebuilds what a
// start-up that reads every record does. fifopage_diff_test.go runs them
// through random workloads with crashes, sweeps and an older binary.

// readCounter is a store that counts the message records read from it.
type readCounter struct {
	storage.Store
	reads int
}

func (s *readCounter) count(k []byte) {
	if bytes.HasPrefix(k, []byte(prefixMessage)) && !bytes.Equal(k, canaryKey()) {
		s.reads++
	}
}

func (s *readCounter) Scan(prefix []byte, fn func(k, v []byte) error) error {
	return s.Store.Scan(prefix, func(k, v []byte) error { s.count(k); return fn(k, v) })
}

func (s *readCounter) ScanRange(start, end []byte, fn func(k, v []byte) error) error {
	return storage.ScanRange(s.Store, start, end, func(k, v []byte) error { s.count(k); return fn(k, v) })
}

func (s *readCounter) ReadEach(keys [][]byte, fn func(i int, v []byte) error) error {
	return storage.ReadEach(s.Store, keys, func(i int, v []byte) error { s.count(keys[i]); return fn(i, v) })
}

// sendGroup sends bodies first..first+n-1 to a FIFO queue's group, with
// the body as deduplication id.
func (env *pagedEnv) sendGroup(queue, group string, first, n int) {
	env.t.Helper()
	sendTens(env.t, env.e, queue, n, groupEntry(group, first))
}

// A restart, clean or after a crash, of a checkpointed FIFO backlog reads
// the messages that were in memory and the first page of each group (its
// window), not the group pages: a start-up that does not use the
// checkpoint reads every record.
func TestFIFOCheckpointSkipsGroupPages(t *testing.T) {
	env := newPagedEnv(t)
	rc := &readCounter{Store: env.store}
	env.store = rc
	env.restart()
	env.create("q.fifo", map[string]string{"FifoQueue": "true"})
	const groups, depth = 4, 200
	for g := range groups {
		env.sendGroup("q.fifo", "g"+strconv.Itoa(g), 0, depth)
	}
	inflight := env.receive("q.fifo", 3, 300)
	if len(inflight) == 0 {
		t.Fatal("nothing received")
	}
	env.delete("q.fifo", env.receive("q.fifo", 2, 30)...)
	before := env.counts("q.fifo")
	hot, paged := env.inMemory("q.fifo")
	if paged < groups*depth-20 {
		t.Fatalf("%d paged, %d in memory: the test tests nothing", paged, hot)
	}
	for _, how := range []string{"restart", "crash"} {
		rc.reads = 0
		if how == "restart" {
			env.restart()
		} else {
			env.crash()
		}
		// What was in memory, and each group's first page (its window,
		// read as the start-up's refill); a few more for a receive's walk.
		if limit := hot + 2*groups*max(testPageSize/16, 1) + 4; rc.reads > limit {
			t.Fatalf("%s: the start-up read %d message records of %d; want at most %d", how, rc.reads, groups*depth, limit)
		}
		if c := env.counts("q.fifo"); c != before {
			t.Fatalf("%s: counts %v, want %v", how, c, before)
		}
	}
	rc.reads = 0
	env.crashFull()
	if rc.reads < groups*depth-10 {
		t.Fatalf("a start-up without a checkpoint read %d message records: the count does not count", rc.reads)
	}
}

// fifoTail builds a FIFO backlog, checkpoints it (a clean restart), and
// changes it without a checkpoint since: group pages read by receives,
// deleted and in-flight messages, a group's pages expired by retention,
// sends after the checkpoint, a dead-letter move into a FIFO queue, and
// a move back; and in r.fifo, only a group's pages expired. It returns the bodies deleted.
func fifoTail(env *pagedEnv) map[string]bool {
	env.create("dlq.fifo", map[string]string{"FifoQueue": "true"})
	env.create("q.fifo", map[string]string{"FifoQueue": "true", "MessageRetentionPeriod": "300",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq.fifo","maxReceiveCount":"1"}`})
	env.create("r.fifo", map[string]string{"FifoQueue": "true", "MessageRetentionPeriod": "300"})
	env.sendGroup("q.fifo", "old", 0, 40)
	env.sendGroup("r.fifo", "x", 0, 30)
	env.clk.Advance(200 * time.Second)
	env.sendGroup("r.fifo", "y", 0, 30)
	for _, g := range []string{"a", "b", "c"} {
		env.sendGroup("q.fifo", g, 0, 30)
	}
	env.sendGroup("q.fifo", "deep", 0, 300) // mostly untouched by the tail
	env.restart()                           // a clean shutdown's checkpoint, then a start-up's
	deleted := map[string]bool{}
	// Receives read group pages in; some are deleted, some stay in flight
	// (one of them past its maxReceiveCount: dead-lettered on its next
	// receive), some come back.
	for range 3 {
		msgs := env.receive("q.fifo", 10, 20)
		var del []*tidemq.Message
		for _, m := range msgs {
			if m.MessageGroupID == "a" {
				del = append(del, m)
				deleted[m.Body] = true
			}
		}
		if len(del) > 0 {
			env.delete("q.fifo", del...)
		}
	}
	env.sendGroup("q.fifo", "b", 30, 5)
	env.sendGroup("q.fifo", "d", 0, 5)
	env.clk.Advance(21 * time.Second) // the received ones come back
	for range 5 {
		env.receive("q.fifo", 10, 120) // some dead-lettered into dlq.fifo
	}
	if c := env.counts("dlq.fifo"); c == [3]int{} {
		env.t.Fatal("nothing dead-lettered: the test does not cover it")
	}
	// Retention: what is left of the group "old" (its pages among them)
	// passes its 300 seconds; the next operation on q.fifo drops them
	// (a sweep would write a checkpoint too).
	env.clk.Advance(90 * time.Second)
	if _, err := env.e.MoveMessages(env.ctx, tidemq.MoveMessagesParams{Source: "dlq.fifo", Max: 1}); err != nil {
		env.t.Fatal(err)
	}
	env.sendGroup("q.fifo", "c", 30, 3)
	// r.fifo: the group x, all but its window paged, expires whole.
	env.sendGroup("r.fifo", "y", 30, 2)
	if c := env.counts("r.fifo"); c != [3]int{32, 0, 0} {
		env.t.Fatalf("r.fifo: counts %v, want 32 ready", c)
	}
	return deleted
}

// A crash after a FIFO checkpoint and a tail of changes rebuilds the state
// a start-up that reads every record does, reading less: nothing
// acknowledged is lost, no deleted message comes back, in-flight ones stay
// in flight (the counts are those before the crash), the deduplication window holds.
func TestFIFOCheckpointCrashAfterTail(t *testing.T) {
	ck, full := newPagedEnv(t), newPagedEnv(t)
	deleted := fifoTail(ck)
	fifoTail(full)
	queues := []string{"q.fifo", "dlq.fifo", "r.fifo"}
	before := map[string][3]int{}
	for _, name := range queues {
		before[name] = ck.counts(name)
	}
	if before["q.fifo"][1] == 0 {
		t.Fatalf("counts %v: the tail does not cover in-flight messages", before)
	}
	crashBoth(t, ck, full, before, queues...)
	// Sends of the last 5 minutes are still deduplicated.
	for _, env := range []*pagedEnv{ck, full} {
		env.sendGroup("q.fifo", "d", 0, 5)
		env.sendGroup("q.fifo", "c", 30, 3)
	}
	same(t, "after duplicate sends", ck, full, queues...)
	if c := ck.counts("q.fifo"); c != before["q.fifo"] {
		t.Fatalf("q.fifo: counts %v after duplicate sends, %v before", c, before["q.fifo"])
	}
	for _, name := range []string{"r.fifo", "q.fifo", "dlq.fifo"} { // r.fifo before draining moves the clock
		a, b := ck.drainAll(name), full.drainAll(name)
		if !slices.Equal(a, b) || len(a) == 0 {
			t.Fatalf("%s drained in another order or with other receive counts:\n%v\n%v", name, a, b)
		}
		for _, s := range a {
			body, _, _ := strings.Cut(s, "#")
			if deleted[body] {
				t.Fatalf("%s: deleted message %s came back", name, body)
			}
		}
	}
}

// A FIFO checkpoint's records survive their encoding, and damaged ones
// are refused.
func TestFIFOCheckpointCodec(t *testing.T) {
	f, err := decodeFIFOHead(encodeFIFOHead(100, []uint64{3, 4, 99}))
	if err != nil || f.hi != 100 || !slices.Equal(f.hot, []uint64{3, 4, 99}) {
		t.Fatalf("head: %+v %v", f, err)
	}
	for _, bad := range [][]byte{encodeFIFOHead(10, []uint64{3, 10}), append(encodeFIFOHead(10, nil), 0), {0x80}} {
		if _, err := decodeFIFOHead(bad); err == nil {
			t.Fatalf("head %x decoded", bad)
		}
	}
	p := page{lo: 10, hi: 50, n: 7, oldest: 12345, bytes: 700, dead: 2, states: true}
	for _, dropped := range []bool{false, true} {
		got, err := decodeGroupPage(10, encodeGroupPage(p, "grp", dropped))
		want := ckGroupPage{page: p, group: "grp", dropped: dropped}
		if dropped {
			want.page = page{lo: 10, hi: 50, states: true}
		}
		if err != nil || fmt.Sprint(*got) != fmt.Sprint(want) {
			t.Fatalf("dropped %v: %+v %v, want %+v", dropped, got, err, want)
		}
	}
	for _, bad := range []page{{lo: 10, hi: 10, n: 1}, {lo: 10, hi: 12, n: 3}, {lo: 10, hi: 12, n: 1, dead: 2}} {
		if _, err := decodeGroupPage(10, encodeGroupPage(bad, "g", false)); err == nil {
			t.Fatalf("page %+v decoded", bad)
		}
	}
	if err := checkFIFO(1, &ckFIFO{hi: 20, pages: []ckGroupPage{{page: page{lo: 1, hi: 9}, group: "a"}, {page: page{lo: 5, hi: 12}, group: "a"}}}); err == nil {
		t.Fatal("overlapping pages of a group accepted")
	}
	if err := checkFIFO(1, &ckFIFO{hi: 20, pages: []ckGroupPage{{page: page{lo: 1, hi: 9}, group: "a"}, {page: page{lo: 5, hi: 12}, group: "b"}}}); err != nil {
		t.Fatal(err)
	}
	if err := checkFIFO(1, &ckFIFO{hi: 10, pages: []ckGroupPage{{page: page{lo: 1, hi: 11}, group: "a"}}}); err == nil {
		t.Fatal("a page past the head accepted")
	}
}

// Retention reads a group's due pages (expireGroups) only when they are
// older than the group's messages in memory, which a group's order
// (enqueue times grow with sequences, and a move resets them) leaves to a
// clock that stepped back. Whatever reaches it, each page it reads leaves
// the checkpoint, as a dropped record in the next batch.
func TestFIFOCheckpointRetentionDropsPages(t *testing.T) {
	env := newPagedEnv(t)
	env.create("q.fifo", map[string]string{"FifoQueue": "true", "MessageRetentionPeriod": "300"})
	env.sendGroup("q.fifo", "x", 0, 30)
	env.restart() // a checkpoint with x's pages
	env.e.mu.Lock()
	defer env.e.mu.Unlock()
	q := env.e.queues["q.fifo"]
	g := q.groups.groups["x"]
	pages := slices.Clone(g.cold.pages)
	if len(pages) < 10 || len(env.e.ck.drops) != 0 {
		t.Fatalf("%d pages, %d drops: the test tests nothing", len(pages), len(env.e.ck.drops))
	}
	// The engine is not used after this: its batch is never committed.
	env.e.expireGroups(q, env.clk.Now().Add(time.Hour), env.e.begin(), nil)
	if len(env.e.ck.drops) != len(pages) {
		t.Fatalf("retention read %d pages and dropped %d", len(pages), len(env.e.ck.drops))
	}
	for i, d := range env.e.ck.drops {
		p, err := decodeGroupPage(pages[i].lo, d.v)
		if !bytes.Equal(d.k, pageKey(q.id, pages[i].lo)) || err != nil || !p.dropped || p.group != "x" || p.hi != pages[i].hi {
			t.Fatalf("drop %d: %x %+v %v, want page [%d, %d) of x dropped", i, d.k, p, err, pages[i].lo, pages[i].hi)
		}
	}
}

// A message sent after a checkpoint extends its group's last page in
// memory; at a start-up, the last installed page may come before a page
// dropped since, and extending it must not hide the dropped page's
// messages, which load reads into memory.
func TestFIFOCheckpointTailPastDroppedPage(t *testing.T) {
	env := newFIFOEnv(t) // group pages of 2
	if _, err := env.e.CreateQueue(env.ctx, tidemq.CreateQueueParams{Name: "q.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		t.Fatal(err)
	}
	env.send("x", 0, 6)
	msgs, err := env.e.ReceiveMessages(env.ctx, tidemq.ReceiveMessagesParams{Queue: "q.fifo", MaxNumberOfMessages: new(10), VisibilityTimeout: new(30)})
	if err != nil || len(msgs) != 6 {
		t.Fatal(err, len(msgs))
	}
	env.clk.Advance(31 * time.Second)
	// Start-ups without a checkpoint page them all again (the second: the
	// first keeps those whose timeout ran out while it was down): x-0 and
	// x-1 in memory, pages [x-2, x-3] and [x-4, x-5].
	for range 2 {
		b := env.store.NewBatch()
		b.Delete(canaryKey())
		if _, err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		env.open(fifoPageSize)
	}
	pageIn := func(m *tidemq.Message) { // an old handle brings a paged message into memory
		env.e.ChangeMessageVisibility(env.ctx, tidemq.ChangeVisibilityParams{Queue: "q.fifo", Entries: []tidemq.ChangeVisibilityEntry{{ID: "0", ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: new(60)}}})
	}
	pageIn(msgs[3])           // the first page keeps x-2 only
	env.restart(fifoPageSize) // a checkpoint: pages [x-2] of 1, [x-4, x-5]
	pageIn(msgs[5])           // the second page is dropped
	env.send("x", 6, 1)       // extends the last page in memory
	env.open(fifoPageSize)    // a crash
	if hot, paged := env.inMemory(); hot+paged != 7 {
		t.Fatalf("after the crash: %d in memory, %d paged; want 7 in all", hot, paged)
	}
	got := env.drain()
	wantInOrder(t, got["x"], "x", 0, 7)
}
