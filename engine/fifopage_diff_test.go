package engine

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// The differential test of FIFO paging (fifopage.go): the same random
// workload on a paging engine, with group pages of one or two messages,
// and on one that keeps everything in memory, with clean restarts and
// crashes (a new engine on the store without closing the old, as after
// kill -9). Every answer must be the same: what each receive delivers and
// in which order, counts, peeks, deletes by old handles, dead-letter moves,
// moves back, retention and purges.
//
// The paged side writes checkpoints (fifocheckpoint.go) at every start-up
// and Close and from the sweep, which the workload calls (the clock
// passes CheckpointInterval), so its crashes start from a checkpoint with
// pages dropped, added and read since. An older binary (blind to p/ keys
// and to the group index, as one before checkpoints and paging) runs on
// its store for a while, now and then.

// fifoSide is one of the two engines.
type fifoSide struct {
	store    storage.Store
	e        *Engine
	pageSize int
	handles  map[string]string // latest receipt handle by body
	old      map[string]string // an earlier handle by body, if any
	older    bool              // an older binary runs on the store
	// aheadMax and aheadTotalMax, when set, bound the read-aheads
	// (readahead.go) to a few records, so that they are dropped often.
	aheadMax, aheadTotalMax int
}

func (s *fifoSide) open(t *testing.T, clk *clocktest.Clock) {
	opts := Options{Store: s.store, Clock: clk, SweepInterval: -1, PageSize: s.pageSize}
	if s.older {
		opts.Store, opts.PageSize = blindStore{s.store}, 0
	}
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.aheadMax > 0 {
		e.ahead.max, e.ahead.totalMax = s.aheadMax, s.aheadTotalMax
	}
	s.e = e
}

// fifoDiff runs ops on both sides and compares what they answer.
type fifoDiff struct {
	t     *testing.T
	ctx   context.Context
	clk   *clocktest.Clock
	sides [2]*fifoSide
	seed  int64
	step  int
	log   []string
}

// TestFIFOPagedMatchesUnpaged runs random workloads (TIDEMQ_FIFO_DIFF_SEEDS
// of them, default 32: about a second; 12 missed a receipt handle's page-in
// that left its page in the checkpoint, which seed 19 catches) of 400 steps
// each.
func TestFIFOPagedMatchesUnpaged(t *testing.T) {
	seeds := 32
	if s := os.Getenv("TIDEMQ_FIFO_DIFF_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		seeds = 3
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		pageSize := 16 // groups of one message a page
		if seed%2 == 0 {
			pageSize = 32 // two
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runFIFODiff(t, seed, pageSize, 400) })
	}
}

// TestFIFOPagedMatchesUnpagedSmallReadAhead is TestFIFOPagedMatchesUnpaged
// with read-aheads bounded to a few records each and a few in all, so
// that the queues' read-aheads are dropped by their own scans and by each
// other's.
func TestFIFOPagedMatchesUnpagedSmallReadAhead(t *testing.T) {
	seeds := 16
	if testing.Short() {
		seeds = 3
	}
	for seed := int64(101); seed <= int64(100+seeds); seed++ {
		pageSize := 16 + 16*int(seed%2)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runFIFODiff(t, seed, pageSize, 400, 1500, 2500) })
	}
}

// runFIFODiff runs a workload; ahead, when given, are the paged side's
// read-ahead bounds (aheadMax, aheadTotalMax).
func runFIFODiff(t *testing.T, seed int64, pageSize, steps int, ahead ...int) {
	d := &fifoDiff{t: t, ctx: context.Background(), clk: clocktest.New(time.Unix(1_700_000_000, 0)), seed: seed}
	for i, ps := range []int{pageSize, 0} {
		d.sides[i] = &fifoSide{store: mem.New(), pageSize: ps, handles: map[string]string{}, old: map[string]string{}}
		if i == 0 && len(ahead) == 2 {
			d.sides[i].aheadMax, d.sides[i].aheadTotalMax = ahead[0], ahead[1]
		}
		d.sides[i].open(t, d.clk)
	}
	t.Cleanup(func() {
		for _, s := range d.sides {
			s.e.Close()
		}
	})
	rng := rand.New(rand.NewSource(seed))
	d.create("dlq.fifo", map[string]string{"FifoQueue": "true", "MessageRetentionPeriod": "600"})
	d.create("src.fifo", map[string]string{"FifoQueue": "true", "MessageRetentionPeriod": "120",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq.fifo","maxReceiveCount":"3"}`})
	groups := 2 + rng.Intn(5)
	next := 0
	var bodies []string
	for d.step = 0; d.step < steps; d.step++ {
		switch r := rng.Intn(100); {
		case r < 35: // a batch of sends, some of them duplicates
			var entries []tidemq.SendEntry
			for j := 0; j < 1+rng.Intn(10); j++ {
				body := "m" + strconv.Itoa(next)
				if len(bodies) > 0 && rng.Intn(10) == 0 {
					body = bodies[rng.Intn(len(bodies))]
				} else {
					next++
					bodies = append(bodies, body)
				}
				entries = append(entries, tidemq.SendEntry{ID: strconv.Itoa(j), Body: body,
					MessageGroupID: "g" + strconv.Itoa(rng.Intn(groups)), MessageDeduplicationID: body})
			}
			d.send("src.fifo", entries)
		case r < 60:
			d.receive(pick(rng, "src.fifo", "dlq.fifo", 5), 1+rng.Intn(10), rng.Intn(40))
		case r < 72:
			d.deleteSome(rng, pick(rng, "src.fifo", "dlq.fifo", 5))
		case r < 78:
			d.release(rng, pick(rng, "src.fifo", "dlq.fifo", 5))
		case r < 88:
			d.clk.Advance(time.Duration(rng.Intn(45)) * time.Second)
			if rng.Intn(2) == 0 {
				d.do("sweep", func(s *fifoSide) string { return fmt.Sprint(s.e.Sweep()) })
			}
		case r < 91:
			d.do("restart", func(s *fifoSide) string {
				if err := s.e.Close(); err != nil {
					t.Fatal(err)
				}
				s.open(t, d.clk)
				return ""
			})
		case r < 94:
			d.do("crash", func(s *fifoSide) string { s.open(t, d.clk); return "" })
		case r == 94:
			// An older binary takes over the paged side's store (a clean
			// shutdown, or a crash), or gives it back.
			crash := rng.Intn(2) == 0
			d.do("older binary", func(s *fifoSide) string {
				if !crash {
					if err := s.e.Close(); err != nil {
						t.Fatal(err)
					}
				}
				if s.pageSize != 0 { // the other side restarts alike
					s.older = !s.older
				}
				s.open(t, d.clk)
				return ""
			})

		case r < 96:
			n := 1 + rng.Intn(5)
			d.do("move back", func(s *fifoSide) string {
				res, err := s.e.MoveMessages(d.ctx, tidemq.MoveMessagesParams{Source: "dlq.fifo", Max: n})
				if err != nil {
					return err.Error()
				}
				return fmt.Sprint(res.Moved, res.Remaining)
			})
		case r < 97:
			d.do("purge", func(s *fifoSide) string {
				return fmt.Sprint(s.e.PurgeQueue(d.ctx, tidemq.PurgeQueueParams{Queue: "src.fifo"}))
			})
		default:
			d.peek(pick(rng, "src.fifo", "dlq.fifo", 5))
		}
		d.counts("src.fifo")
		d.counts("dlq.fifo")
	}
	// Drain both: the same messages, in the same order.
	for i := 0; i < 2000; i++ {
		d.clk.Advance(time.Minute)
		if d.receive("src.fifo", 10, 0) == "" && d.receive("dlq.fifo", 10, 0) == "" {
			break
		}
	}
}

// handleText is a receipt handle in an error: the two sides' differ.
var handleText = regexp.MustCompile(`Value \S+ for|handle "[^"]*"`)

func pick(rng *rand.Rand, a, b string, inA int) string {
	if rng.Intn(inA+1) < inA {
		return a
	}
	return b
}

// do runs fn on both sides and fails when they answer differently.
func (d *fifoDiff) do(what string, fn func(s *fifoSide) string) string {
	d.t.Helper()
	var out [2]string
	for i, s := range d.sides {
		out[i] = handleText.ReplaceAllString(fn(s), "<handle>")
	}
	d.log = append(d.log, fmt.Sprintf("%d %s: %s", d.step, what, out[1]))
	if out[0] != out[1] {
		if len(d.log) > 15 {
			d.log = d.log[len(d.log)-15:]
		}
		if os.Getenv("TIDEMQ_FIFO_DIFF_DUMP") != "" {
			for _, s := range d.sides {
				d.t.Log(dumpFIFO(s.e))
			}
		}
		d.t.Fatalf("seed %d step %d: %s differs\npaged:   %s\nunpaged: %s\nlast steps:\n%s", d.seed, d.step, what, out[0], out[1], strings.Join(d.log, "\n"))
	}
	return out[0]
}

func (d *fifoDiff) create(name string, attrs map[string]string) {
	d.do("create "+name, func(s *fifoSide) string {
		_, err := s.e.CreateQueue(d.ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs})
		return fmt.Sprint(err)
	})
}

func (d *fifoDiff) send(queue string, entries []tidemq.SendEntry) {
	d.do("send", func(s *fifoSide) string {
		res, err := s.e.SendMessages(d.ctx, tidemq.SendMessagesParams{Queue: queue, Entries: entries, Batch: true})
		if err != nil {
			return err.Error()
		}
		var b strings.Builder
		for _, r := range res {
			fmt.Fprintf(&b, "%s %v;", r.SequenceNumber, r.Err)
		}
		return b.String()
	})
}

func (d *fifoDiff) receive(queue string, max, vt int) string {
	return d.do("receive "+queue, func(s *fifoSide) string {
		msgs, err := s.e.ReceiveMessages(d.ctx, tidemq.ReceiveMessagesParams{Queue: queue, MaxNumberOfMessages: &max, VisibilityTimeout: &vt})
		if err != nil {
			return err.Error()
		}
		var b strings.Builder
		for _, m := range msgs {
			if h := s.handles[m.Body]; h != "" {
				s.old[m.Body] = h
			}
			s.handles[m.Body] = m.ReceiptHandle
			fmt.Fprintf(&b, "%s/%s/%s/%d;", m.Body, m.MessageGroupID, m.SequenceNumber, m.ApproximateReceiveCount)
		}
		return b.String()
	})
}

// deleteSome deletes a few messages by their latest (or an older) handle.
func (d *fifoDiff) deleteSome(rng *rand.Rand, queue string) {
	bodies := d.handled(rng)
	useOld := rng.Intn(4) == 0
	d.do("delete "+queue, func(s *fifoSide) string {
		var entries []tidemq.DeleteEntry
		for i, body := range bodies {
			h := s.handles[body]
			if useOld && s.old[body] != "" {
				h = s.old[body]
			}
			entries = append(entries, tidemq.DeleteEntry{ID: strconv.Itoa(i), ReceiptHandle: h})
		}
		if len(entries) == 0 {
			return ""
		}
		errs, err := s.e.DeleteMessages(d.ctx, tidemq.DeleteMessagesParams{Queue: queue, Entries: entries})
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(errs)
	})
}

// release sets the visibility of a few received messages to 0.
func (d *fifoDiff) release(rng *rand.Rand, queue string) {
	bodies := d.handled(rng)
	d.do("release "+queue, func(s *fifoSide) string {
		var entries []tidemq.ChangeVisibilityEntry
		for i, body := range bodies {
			entries = append(entries, tidemq.ChangeVisibilityEntry{ID: strconv.Itoa(i), ReceiptHandle: s.handles[body], VisibilityTimeout: new(0)})
		}
		if len(entries) == 0 {
			return ""
		}
		errs, err := s.e.ChangeMessageVisibility(d.ctx, tidemq.ChangeVisibilityParams{Queue: queue, Entries: entries, Batch: true})
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(errs)
	})
}

// handled picks up to 4 bodies that have a receipt handle.
func (d *fifoDiff) handled(rng *rand.Rand) []string {
	var all []string
	for body := range d.sides[1].handles {
		all = append(all, body)
	}
	slices.Sort(all)
	var out []string
	for i := 0; i < 1+rng.Intn(4) && len(all) > 0; i++ {
		out = append(out, all[rng.Intn(len(all))])
	}
	return out
}

func (d *fifoDiff) peek(queue string) {
	d.do("peek "+queue, func(s *fifoSide) string {
		msgs, err := s.e.PeekMessages(d.ctx, tidemq.PeekMessagesParams{Queue: queue, Max: new(7)})
		if err != nil {
			return err.Error()
		}
		var b strings.Builder
		for _, m := range msgs {
			fmt.Fprintf(&b, "%s;", m.Body)
		}
		return b.String()
	})
}

func (d *fifoDiff) counts(queue string) {
	d.do("counts "+queue, func(s *fifoSide) string {
		a, err := s.e.GetQueueAttributes(d.ctx, tidemq.GetQueueAttributesParams{Queue: queue, Names: []string{tidemq.AttrAll}})
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(a[tidemq.AttrApproximateNumberOfMessages], " ", a[tidemq.AttrApproximateNumberOfMessagesNotVisible], " ",
			a[tidemq.AttrApproximateNumberOfMessagesDelayed])
	})
}

// dumpFIFO describes every FIFO group of e, for a failure's report.
func dumpFIFO(e *Engine) string {
	var b strings.Builder
	for _, q := range e.queues {
		fmt.Fprintf(&b, "%s ready=%d inflight=%d cold=%d\n", q.name, q.nReady, q.nInflight, q.cold.n)
		for id, g := range q.groups.groups {
			fmt.Fprintf(&b, "  %s hot=%d inflight=%d avail=%d pages=%v:", id, g.hot, g.inflight, g.availIndex, g.cold.pages)
			for _, m := range g.msgs[g.head:] {
				fmt.Fprintf(&b, " %d/%s/%d", m.seq, m.Body, m.state)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
