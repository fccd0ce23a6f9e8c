package sns

import (
	"sync"

	"github.com/tidemq/tidemq"
)

// Concurrent fan-outs in one write. While maxCombinedWrites writes of
// deliverTogether are in the broker, further publishes wait, and the next
// write carries all of them at once: one commit, one pass of the engine's
// lock and one advance of each queue for several publishes, where each
// publish alone paid them all (a fan-out's store write costs about as
// much per commit as a SendMessage does, engine/tenmessages_bench_test.go).
// Each delivery keeps its own entry (envelope, MessageId, sender): what is
// combined is only the write.
//
// Invariants kept here:
//   - A publish returns only after the write that carried its deliveries
//     returned: durable if it succeeded.
//   - A combined write is all or nothing for every publish in it. If it is
//     refused, each of its publishes is written again alone, so that one
//     publish's refusal (a queue gone or full) never sends another publish
//     to the recorded path; a publish refused alone takes the recorded
//     path, as before (together.go).
//   - At most maxCombinedWrites combined writes are in the broker at once,
//     and one write carries at most maxCombinedDeliveries deliveries and
//     maxCombinedBytes of bodies (but always at least one publish whole).
//   - No caller writes for others after its own write: a caller that
//     finishes hands its turn to the first waiting publish, which writes
//     the next group (itself first); the turn is never left unused while
//     publishes wait.

const (
	maxCombinedWrites     = 2
	maxCombinedDeliveries = 100
	maxCombinedBytes      = 4 << 20
)

// combiner gathers the writes that wait for a turn.
type combiner struct {
	mu      sync.Mutex
	writing int              // writes holding a turn (gathering or in the broker)
	waiting []*combinedWrite // in arrival order
}

// combinedWrite is one publish's (or PublishBatch's) deliveries waiting to
// be written.
type combinedWrite struct {
	ps    []tidemq.SendMessagesParams
	bytes int
	done  chan writeOutcome // buffered: one outcome
}

type writeOutcome int

const (
	writeDone  writeOutcome = iota // written with the group
	writeAlone                     // the group was refused: write again alone
	writeLead                      // this write has the turn: gather and write
)

// sendTogether writes ps in one write of the broker, combined with other
// publishes' writes while earlier writes take every turn.
func (s *Service) sendTogether(ps []tidemq.SendMessagesParams) error {
	c := &s.combiner
	me := &combinedWrite{ps: ps}
	for _, p := range ps {
		for _, e := range p.Entries {
			me.bytes += len(e.Body)
		}
	}
	c.mu.Lock()
	if c.writing >= maxCombinedWrites {
		me.done = make(chan writeOutcome, 1)
		c.waiting = append(c.waiting, me)
		c.mu.Unlock()
		switch <-me.done {
		case writeDone:
			return nil
		case writeAlone:
			_, err := tidemq.SendToQueues(s.ctx, s.opt.Broker, ps)
			return err
		}
		c.mu.Lock() // writeLead: the turn was handed to me
	} else {
		c.writing++
	}
	group := append([]*combinedWrite{me}, c.takeLocked(len(me.ps), me.bytes)...)
	c.mu.Unlock()

	all := ps
	if len(group) > 1 {
		n := 0
		for _, w := range group {
			n += len(w.ps)
		}
		all = make([]tidemq.SendMessagesParams, 0, n)
		for _, w := range group {
			all = append(all, w.ps...)
		}
	}
	_, err := tidemq.SendToQueues(s.ctx, s.opt.Broker, all)

	c.mu.Lock()
	if len(c.waiting) > 0 {
		next := c.waiting[0]
		c.waiting[0] = nil
		c.waiting = c.waiting[1:]
		next.done <- writeLead // the turn passes on
	} else {
		c.writing--
	}
	c.mu.Unlock()
	outcome := writeDone
	if err != nil && len(group) > 1 {
		outcome = writeAlone
	}
	for _, w := range group[1:] {
		w.done <- outcome
	}
	if outcome == writeAlone {
		_, err = tidemq.SendToQueues(s.ctx, s.opt.Broker, ps)
	}
	return err
}

// takeLocked removes from c.waiting the writes that join a group of n
// deliveries and bytes of bodies so far: the first ones, while they fit
// the limits. The caller holds c.mu.
func (c *combiner) takeLocked(n, bytes int) []*combinedWrite {
	k := 0
	for _, w := range c.waiting {
		if n+len(w.ps) > maxCombinedDeliveries || bytes+w.bytes > maxCombinedBytes {
			break
		}
		n, bytes, k = n+len(w.ps), bytes+w.bytes, k+1
	}
	group := make([]*combinedWrite, k)
	copy(group, c.waiting[:k])
	c.waiting = append(c.waiting[:0], c.waiting[k:]...)
	return group
}
