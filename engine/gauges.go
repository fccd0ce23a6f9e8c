package engine

import "github.com/tidemq/tidemq"

// gauges are what a pass over every queue reads of each: its message
// counts, its counters and what makes it a dead-letter queue. They are
// kept apart from the queue (which embeds a pointer to them, so q.nReady
// is q.gauges.nReady), in the engine's gaugeTable: a pass over 100,000
// queues (Summary, each /metrics scrape) reads them in order, a few MB
// side by side, where reading them in the queues themselves took a cache
// miss or two a queue (the queue struct, its name) and most of a scrape's
// time.
type gauges struct {
	nReady, nDelayed, nInflight int
	// nDeadLettered counts the live messages that were dead-lettered into
	// this queue (they carry DeadLetterQueueSourceArn): such a queue is a
	// dead-letter queue even when its source queue is gone (snapshot.go).
	nDeadLettered int
	// stats are the queue's counters; nil until the first (q.count).
	stats *tidemq.QueueStats
	// owner is the queue; nil while the slot is free.
	owner *queue
	// redrivesTo is the name of the queue of this engine that the
	// queue's RedrivePolicy names ("" for none, or another region's or
	// account's), set with the policy (applyAttributes).
	redrivesTo string
	// namedDLQ: the queue's name says it is a dead-letter queue
	// (tidemq.NamedLikeDeadLetterQueue), set when the queue is made.
	namedDLQ bool
	// targeted is the pass (gaugeTable.pass) that found the queue named
	// by a RedrivePolicy (markTargets).
	targeted uint64
}

// depth is the queue's visible, in-flight and delayed messages.
func (g *gauges) depth() int { return g.nReady + g.nInflight + g.nDelayed }

// deadLetterQueue reports whether the queue is a dead-letter queue: a
// RedrivePolicy names it (targeted), it holds dead-lettered messages, or
// its name says so.
func (g *gauges) deadLetterQueue(targeted bool) bool {
	return targeted || g.nDeadLettered > 0 || g.namedDLQ
}

// isDeadLetterQueue is deadLetterQueue with the targets that pass p
// marked (markTargets).
func (g *gauges) isDeadLetterQueue(p uint64) bool { return g.deadLetterQueue(g.targeted == p) }

// gaugeChunk is how many slots a chunk of the table holds.
const gaugeChunk = 1024

// gaugeTable holds the gauges of an engine's queues in chunks that never
// move (a queue keeps a pointer to its slot), freed slots reused.
// Invariant: the slots with an owner are exactly those of e.queues
// (addQueue and removeQueue keep it, resetState empties the table).
type gaugeTable struct {
	chunks [][]gauges
	used   int // slots handed out in the last chunk
	free   []*gauges
	// pass numbers the passes that mark the queues RedrivePolicies name
	// (markTargets), so that no mark needs clearing.
	pass uint64
}

// add moves g (a queue's gauges before it joined the engine) into a slot
// of the table and returns the slot.
func (t *gaugeTable) add(g *gauges) *gauges {
	var slot *gauges
	if n := len(t.free); n > 0 {
		slot, t.free = t.free[n-1], t.free[:n-1]
	} else {
		if len(t.chunks) == 0 || t.used == gaugeChunk {
			t.chunks = append(t.chunks, make([]gauges, gaugeChunk))
			t.used = 0
		}
		slot = &t.chunks[len(t.chunks)-1][t.used]
		t.used++
	}
	*slot = *g
	return slot
}

// remove frees slot and returns a copy of its gauges, for the queue that
// leaves the engine (an operation under way may still count on it).
func (t *gaugeTable) remove(slot *gauges) *gauges {
	g := *slot
	*slot = gauges{}
	t.free = append(t.free, slot)
	return &g
}

// each calls fn with every queue's gauges, in the table's order.
func (t *gaugeTable) each(fn func(g *gauges)) {
	for _, c := range t.chunks {
		for i := range c {
			if c[i].owner != nil {
				fn(&c[i])
			}
		}
	}
}

// deadLetterTargets returns the names of this engine's queues that some
// queue's RedrivePolicy names (by name: a queue keeps no ARN).
func (e *Engine) deadLetterTargets() map[string]bool {
	dlqs := make(map[string]bool)
	e.gauges.each(func(g *gauges) {
		if g.redrivesTo != "" {
			dlqs[g.redrivesTo] = true
		}
	})
	return dlqs
}

// markTargets marks the gauges of the queues in dlqs (deadLetterTargets)
// with a new pass, and returns it: isDeadLetterQueue(pass) then tells a
// dead-letter queue without looking up its name.
func (e *Engine) markTargets(dlqs map[string]bool) uint64 {
	e.gauges.pass++
	for name := range dlqs {
		if q := e.queues[name]; q != nil {
			q.targeted = e.gauges.pass
		}
	}
	return e.gauges.pass
}
