package engine

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
)

// pagedMix builds a state with every kind of message a page's range can
// hold besides its paged ones: in flight, delayed, paged in by an old
// receipt handle and made visible again, dead-lettered, and messages that
// expired while the engine was down.
func pagedMix(env *pagedEnv) {
	env.create("dlq", nil)
	env.create("q", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`})
	env.send("q", 0, 30)
	env.send("dlq", 500, 10)
	early := env.receive("q", 3, 10) // 0, 1, 2: dead-lettered on their next receive
	env.clk.Advance(11 * time.Second)
	if msgs := env.receive("q", 3, 1); len(msgs) == 0 {
		env.t.Fatal("nothing to receive")
	}
	_ = early
	env.send("dlq", 600, 10) // after the dead-lettered ones: pages of dlq
	// A delayed message inside the last page's range of q.
	if _, err := env.e.SendMessages(env.ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "d", Body: "delayed", DelaySeconds: new(30)}}}); err != nil {
		env.t.Fatal(err)
	}
	env.send("q", 100, 3)
	inflight := env.receive("q", 4, 300)
	lapsed := env.receive("q", 2, 5)
	env.clk.Advance(6 * time.Second)
	// Page q out entirely (two start-ups without headers: the first keeps
	// the lapsed messages in memory to write their history), then bring
	// a paged message into memory with its old handle (it is not in
	// flight, so the change is refused), and put a delayed message inside
	// the last page's range.
	env.crash()
	env.crash()
	env.e.ChangeMessageVisibility(env.ctx, tidemq.ChangeVisibilityParams{Queue: "q", Entries: []tidemq.ChangeVisibilityEntry{{ID: "0", ReceiptHandle: lapsed[0].ReceiptHandle, VisibilityTimeout: new(60)}}})
	env.send("q", 300, 1)
	if _, err := env.e.SendMessages(env.ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "d", Body: "delayed2", DelaySeconds: new(40)}}}); err != nil {
		env.t.Fatal(err)
	}
	env.send("q", 400, 2)
	vis, err := env.e.ChangeMessageVisibility(env.ctx, tidemq.ChangeVisibilityParams{Queue: "q", Entries: []tidemq.ChangeVisibilityEntry{{ID: "0", ReceiptHandle: inflight[0].ReceiptHandle, VisibilityTimeout: new(0)}}})
	if err != nil || vis[0] != nil {
		env.t.Fatal(err, vis)
	}
	env.send("q", 200, 9)
	env.receive("q", 2, 5) // their timeout runs out while the engine is down
}

// state is what a start-up must rebuild, read from the engine's indexes.
func (env *pagedEnv) state(queue string) []int {
	env.e.mu.Lock()
	defer env.e.mu.Unlock()
	q := env.e.queues[queue]
	return []int{q.nReady, q.nDelayed, q.nInflight, q.nDeadLettered, q.cold.n, int(q.nextSeq), int(q.bytes)}
}

// drainAll receives and deletes everything, moving the clock past every
// delay and visibility timeout, and returns the bodies in receive order.
func (env *pagedEnv) drainAll(queue string) []string {
	var out []string
	for i := 0; i < 100; i++ {
		msgs := env.receive(queue, 10, 30)
		if len(msgs) == 0 {
			if c := env.counts(queue); c == [3]int{0, 0, 0} {
				return out
			}
			env.clk.Advance(301 * time.Second)
			continue
		}
		for _, m := range msgs {
			out = append(out, m.Body+"#"+strconv.Itoa(m.ApproximateReceiveCount))
		}
		env.delete(queue, msgs...)
	}
	env.t.Fatal("the queue does not drain")
	return nil
}

// crashFull opens a new engine on the store, as crash does, without the
// last checkpoint: its canary is deleted, as an older binary's start-up
// deletes it, so the start-up reads every record.
func (env *pagedEnv) crashFull() {
	env.t.Helper()
	b := env.store.NewBatch()
	b.Delete(canaryKey())
	if _, err := b.Commit(); err != nil {
		env.t.Fatal(err)
	}
	env.open()
}

// same fails unless a and b hold the same state: counts (all but how many
// ready messages are paged, which depends on the start-up), next sequence
// and bytes, and the attributes' counts.
func same(t *testing.T, what string, a, b *pagedEnv, queues ...string) {
	t.Helper()
	for _, name := range queues {
		if x, y := a.state(name), b.state(name); !slices.Equal(x[:4], y[:4]) || !slices.Equal(x[5:], y[5:]) {
			t.Fatalf("%s: %s: ready, delayed, in flight, dead-lettered, paged, next sequence, bytes: %v, want %v", what, name, x, y)
		}
		if x, y := a.counts(name), b.counts(name); x != y {
			t.Fatalf("%s: %s: counts %v, want %v", what, name, x, y)
		}
	}
}

// crashBoth crashes ck (a start-up that may use its checkpoint) and full
// (one that reads every record), and fails unless ck's read at most half
// the records full's did, both hold the same state, and ck's counts are
// those of before.
func crashBoth(t *testing.T, ck, full *pagedEnv, before map[string][3]int, queues ...string) {
	t.Helper()
	ck.crash()
	full.crashFull()
	if c, f := ck.e.loadedRecords, full.e.loadedRecords; c*2 > f {
		t.Fatalf("a crash after a checkpoint read %d records, one without %d: the checkpoint was not used", c, f)
	}
	same(t, "after a crash", ck, full, queues...)
	for _, name := range queues {
		if c := ck.counts(name); c != before[name] {
			t.Fatalf("%s: counts %v after the crash, %v before", name, c, before[name])
		}
	}
}

// A start-up from a checkpoint (a clean shutdown's, then a start-up's)
// rebuilds the state a start-up that reads every record does, while
// reading only the records outside the checkpoint's pages.
func TestCheckpointRestartMatchesFullRead(t *testing.T) {
	clean, full := newPagedEnv(t), newPagedEnv(t)
	pagedMix(clean)
	pagedMix(full)
	clean.e.mu.Lock()
	inRange := 0
	for seq := range clean.e.queues["q"].msgs {
		if clean.e.queues["q"].cold.find(seq) >= 0 {
			inRange++
		}
	}
	clean.e.mu.Unlock()
	if inRange < 2 {
		t.Fatalf("%d messages in memory within q's pages: the test does not cover them", inRange)
	}
	clean.clk.Advance(10 * time.Second)
	full.clk.Advance(10 * time.Second)
	clean.restart()
	full.crashFull()
	if c, f := clean.e.loadedRecords, full.e.loadedRecords; c*2 > f {
		t.Fatalf("a start-up from a clean shutdown's checkpoint read %d records, one without %d: the checkpoint was not used", c, f)
	}
	same(t, "after a clean shutdown", clean, full, "q", "dlq")
	// The start-up wrote a checkpoint too: a crash now reads from it.
	clean.crash()
	if c, f := clean.e.loadedRecords, full.e.loadedRecords; c*2 > f {
		t.Fatalf("a start-up after a crash read %d records, one without a checkpoint %d", c, f)
	}
	same(t, "after a crash", clean, full, "q", "dlq")
	for _, name := range []string{"q", "dlq"} {
		a, b := clean.drainAll(name), full.drainAll(name)
		if !slices.Equal(a, b) || len(a) == 0 {
			t.Fatalf("%s drained in another order or with other receive counts:\n%v\n%v", name, a, b)
		}
	}
}

// A checkpoint page record survives its encoding, and a damaged one is
// refused.
func TestCheckpointPageCodec(t *testing.T) {
	pages := []ckPage{
		{page: page{lo: 3, hi: 9, n: 5, oldest: 77, bytes: 1234, dead: 2}, hot: []uint64{3, 5}},
		{page: page{lo: 12, hi: 20, n: 8, oldest: -4, bytes: 8}},
	}
	var got []ckPage
	for _, p := range pages {
		b := encodePage(p.page, p.hot)
		d, err := decodePage(p.lo, b)
		if err != nil || d.page != p.page || !slices.Equal(d.hot, p.hot) {
			t.Fatalf("%v %+v, want %+v", err, d, p)
		}
		got = append(got, *d)
		for i := 0; i < len(b); i++ {
			if _, err := decodePage(p.lo, b[:i]); err == nil {
				t.Fatalf("a record cut at %d decodes", i)
			}
		}
		if _, err := decodePage(p.lo, append(b, 0)); err == nil {
			t.Fatal("a record with trailing bytes decodes")
		}
	}
	if !covers(got, 4) || covers(got, 5) || covers(got, 3) || covers(got, 10) || covers(got, 20) || !covers(got, 19) {
		t.Fatal("covers")
	}
}

// tailScript runs, on env, a backlog, a checkpoint written by the sweep,
// and a tail of every kind of change after it: refills with deletes and
// visibility changes, messages made visible again, a paged message brought
// into memory and deleted by an old receipt handle, new sends paged after
// the checkpoint's pages, dead-letter moves, retention on a page, a purge.
// It returns the bodies whose deletes were acknowledged after the
// checkpoint, and the bodies received with a long visibility timeout.
func tailScript(env *pagedEnv) (deleted, inflight map[string]bool) {
	t := env.t
	deleted, inflight = map[string]bool{}, map[string]bool{}
	env.create("dlq", nil)
	env.create("q", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":2}`})
	env.create("purged", nil)
	env.create("short", map[string]string{"MessageRetentionPeriod": "60"})
	env.send("short", 9000, 20)
	env.clk.Advance(30 * time.Second)
	env.send("short", 9100, 20)
	env.send("q", 0, 100)
	env.send("purged", 5000, 30)
	// Two handles of messages that come back to the queue and are paged
	// by the start-up below.
	old := env.receive("q", 2, 5)
	env.clk.Advance(6 * time.Second)
	env.crash()
	// The checkpoint, written by the sweep.
	env.clk.Advance(DefaultCheckpointInterval)
	env.send("q", 100, 12) // a change, so that the sweep writes one
	env.e.Sweep()
	env.e.mu.Lock()
	if env.e.ck.changes != 0 || len(env.e.ck.drops) != 0 {
		t.Fatal("the sweep wrote no checkpoint")
	}
	env.e.mu.Unlock()
	// The tail. A paged message brought into memory by its old handle,
	// then deleted with it.
	env.delete("q", old[0])
	deleted[old[0].Body] = true
	if r, err := env.e.ChangeMessageVisibility(env.ctx, tidemq.ChangeVisibilityParams{Queue: "q", Entries: []tidemq.ChangeVisibilityEntry{{ID: "0", ReceiptHandle: old[1].ReceiptHandle, VisibilityTimeout: new(60)}}}); err == nil && r[0] == nil {
		inflight[old[1].Body] = true // the handle's receive is the message's last: the change holds
	}
	// Refills: received, some deleted, some made visible again, some
	// left in flight.
	got := env.receive("q", 10, 300)
	env.delete("q", got[:4]...)
	for _, m := range got[:4] {
		deleted[m.Body] = true
	}
	vis, err := env.e.ChangeMessageVisibility(env.ctx, tidemq.ChangeVisibilityParams{Queue: "q", Entries: []tidemq.ChangeVisibilityEntry{
		{ID: "0", ReceiptHandle: got[4].ReceiptHandle, VisibilityTimeout: new(0)},
		{ID: "1", ReceiptHandle: got[5].ReceiptHandle, VisibilityTimeout: new(7)}}})
	if err != nil || vis[0] != nil || vis[1] != nil {
		t.Fatal(err, vis)
	}
	for _, m := range got[6:] {
		inflight[m.Body] = true
	}
	// Received twice with a short timeout: the third receive moves them
	// to the dead-letter queue.
	for range 3 {
		for _, m := range env.receive("q", 5, 1) {
			if inflight[m.Body] {
				t.Fatalf("%s received while in flight", m.Body)
			}
		}
		env.clk.Advance(2 * time.Second)
	}
	more := env.receive("q", 6, 300)
	env.delete("q", more[:3]...)
	for _, m := range more[:3] {
		deleted[m.Body] = true
	}
	for _, m := range more[3:] {
		inflight[m.Body] = true
	}
	// New sends, paged after the checkpoint's pages.
	env.send("q", 200, 25)
	env.send("dlq", 700, 9)
	// Retention reads the first page of "short" (a receive advances it).
	env.clk.Advance(31 * time.Second)
	env.receive("short", 1, 300)
	// A purge, then new messages.
	if err := env.e.PurgeQueue(env.ctx, tidemq.PurgeQueueParams{Queue: "purged"}); err != nil {
		t.Fatal(err)
	}
	env.send("purged", 6000, 6)
	return deleted, inflight
}

// A crash after a checkpoint and a tail of changes rebuilds the state a
// start-up that reads every record does, reading less: nothing acknowledged
// is lost, no deleted message comes back, in-flight ones stay in flight.
func TestCheckpointCrashAfterTail(t *testing.T) {
	ck, full := newPagedEnv(t), newPagedEnv(t)
	deleted, inflight := tailScript(ck)
	tailScript(full)
	queues := []string{"q", "dlq", "purged", "short"}
	before := map[string][3]int{}
	for _, name := range queues {
		before[name] = ck.counts(name)
	}
	crashBoth(t, ck, full, before, queues...)
	if c := ck.counts("q"); c[1] != len(inflight) {
		t.Fatalf("q: %d in flight after the crash, want %d", c[1], len(inflight))
	}
	for _, name := range queues {
		a, b := ck.drainAll(name), full.drainAll(name)
		if !slices.Equal(a, b) {
			t.Fatalf("%s drained in another order or with other receive counts:\n%v\n%v", name, a, b)
		}
		for _, s := range a {
			if body, _, _ := strings.Cut(s, "#"); deleted[body] && name == "q" {
				t.Fatalf("%s: deleted message %s came back", name, body)
			}
		}
	}
}

// blindStore is a store as a binary without checkpoints sees it: it
// neither reads nor writes p/ keys.
type blindStore struct{ storage.Store }

func (s blindStore) Scan(prefix []byte, fn func(k, v []byte) error) error {
	return s.Store.Scan(prefix, func(k, v []byte) error {
		if bytes.HasPrefix(k, []byte(prefixHeaders)) {
			return nil
		}
		return fn(k, v)
	})
}

func (s blindStore) NewBatch() storage.Batch { return blindBatch{s.Store.NewBatch()} }
func (s blindStore) Close() error            { return nil }

type blindBatch struct{ storage.Batch }

func (b blindBatch) Set(k, v []byte) {
	if !bytes.HasPrefix(k, []byte(prefixHeaders)) {
		b.Batch.Set(k, v)
	}
}

// A binary without checkpoints (before page headers) that runs on the
// store after a checkpoint, receiving, deleting and sending, leaves the
// checkpoint's pages stale: the next start-up must not trust them. Its
// start-up deletes the canary, as every version's load deletes the records
// of a queue it does not know, and without the canary the checkpoint is
// not used.
func TestCheckpointNotTrustedAfterOlderBinary(t *testing.T) {
	env := newPagedEnv(t)
	env.create("q", nil)
	env.send("q", 0, 100)
	env.restart() // a clean shutdown's checkpoint, then a start-up's
	env.e.Close()
	// The older binary: every message in memory, blind to p/.
	old, err := Open(Options{Store: blindStore{env.store}, Clock: env.clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	env.e = old
	for range 4 {
		env.delete("q", env.receive("q", 10, 30)...)
	}
	env.send("q", 100, 5)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := storage.Has(env.store, []byte(prefixHeaders)); !ok {
		t.Fatal("no checkpoint left: the test tests nothing")
	}
	env.open()
	if c := env.counts("q"); c != [3]int{65, 0, 0} {
		t.Fatalf("counts %v after the older binary deleted 40 of 100 and sent 5; want 65 ready", c)
	}
	got := env.drainAll("q")
	if len(got) != 65 || got[0] != "40#1" || got[64] != "104#1" {
		t.Fatalf("drained %d messages, %v ... ; want 40 to 104", len(got), got[:min(len(got), 3)])
	}
}

// A damaged checkpoint costs only the time it saves: the engine starts,
// warns, and reads every message, which are all there.
func TestDamagedCheckpointReadsEveryMessage(t *testing.T) {
	env := newPagedEnv(t)
	env.create("q", nil)
	env.send("q", 0, 100)
	env.restart() // a clean shutdown's checkpoint, then a start-up's
	env.e.Close()
	var pageKeys [][]byte
	if err := env.store.Scan([]byte(prefixHeaders), func(k, v []byte) error {
		if len(k) == len(prefixHeaders)+16 {
			pageKeys = append(pageKeys, bytes.Clone(k))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(pageKeys) == 0 {
		t.Fatal("no checkpoint page: the test tests nothing")
	}
	b := env.store.NewBatch()
	b.Set(pageKeys[0], []byte{0xff}) // does not decode
	d, err := b.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	env.open() // fails the test if Open refuses
	if c := env.counts("q"); c != [3]int{100, 0, 0} {
		t.Fatalf("counts %v after a start-up past a damaged checkpoint; want 100 ready", c)
	}
	if got := env.drainAll("q"); len(got) != 100 {
		t.Fatalf("drained %d messages, want 100", len(got))
	}
}
