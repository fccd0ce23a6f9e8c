package engine

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
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

// A start-up from page headers (a clean shutdown) rebuilds exactly the
// state a start-up that reads every record does, while reading only what
// was in memory; the next start-up after it, headers gone, reads all.
func TestPageHeadersRestartMatchesFullRead(t *testing.T) {
	clean, crashed := newPagedEnv(t), newPagedEnv(t)
	pagedMix(clean)
	pagedMix(crashed)
	hot, _ := clean.inMemory("q")
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
	crashed.clk.Advance(10 * time.Second)
	clean.restart()
	crashed.crash()
	if h, _ := clean.inMemory("q"); h != hot {
		t.Fatalf("after a clean restart %d messages of q in memory, %d before: the headers were not used", h, hot)
	}
	if h, _ := crashed.inMemory("q"); h >= hot {
		t.Fatalf("after a crash %d messages of q in memory, as many as before (%d): the test does not tell the two apart", h, hot)
	}
	for _, name := range []string{"q", "dlq"} {
		if a, b := clean.state(name), crashed.state(name); !slices.Equal(a[:4], b[:4]) || !slices.Equal(a[5:], b[5:]) {
			t.Fatalf("%s: ready, delayed, in flight, dead-lettered, paged, next sequence, bytes: %v from headers, %v from every record", name, a, b)
		}
		if a, b := clean.counts(name), crashed.counts(name); a != b {
			t.Fatalf("%s: counts %v from headers, %v from every record", name, a, b)
		}
	}
	// The headers are gone: a crash now reads every record and still agrees.
	clean.crash()
	for _, name := range []string{"q", "dlq"} {
		if a, b := clean.state(name), crashed.state(name); !slices.Equal(a[:4], b[:4]) || !slices.Equal(a[5:], b[5:]) {
			t.Fatalf("%s after a second start-up: %v, want %v", name, a, b)
		}
		a, b := clean.drainAll(name), crashed.drainAll(name)
		if !slices.Equal(a, b) || len(a) == 0 {
			t.Fatalf("%s drained in another order or with other receive counts:\n%v\n%v", name, a, b)
		}
	}
}

// The headers record survives its encoding, and a damaged one is refused.
func TestPageHeadersCodec(t *testing.T) {
	h := &queueHeaders{pages: []page{{lo: 3, hi: 9, n: 5, oldest: 77}, {lo: 12, hi: 20, n: 8, oldest: -4}}, hot: []uint64{5, 14}, nextSeq: 21, dead: 2}
	b := encodeHeaders(h)
	got, err := decodeHeaders(b)
	if err != nil || !slices.Equal(got.pages, h.pages) || !slices.Equal(got.hot, h.hot) || got.nextSeq != 21 || got.dead != 2 {
		t.Fatalf("%v %+v", err, got)
	}
	if !got.inPage(4) || got.inPage(5) || got.inPage(10) || got.inPage(20) || !got.inPage(19) {
		t.Fatal("inPage")
	}
	for i := 1; i < len(b); i++ {
		if h, err := decodeHeaders(b[:i]); err == nil && slices.Equal(h.pages, got.pages) && slices.Equal(h.hot, got.hot) {
			t.Fatalf("a record cut at %d decodes whole", i)
		}
	}
}
