package engine

// A queue's sequence counter (the c/ key) is the sequence its next
// message may take after a restart: every sequence the queue has handed
// out is below it, so none is used twice, even for messages long deleted
// (a receipt handle names its message by sequence). Writing it with every
// send cost a key in every send's batch. A standard queue writes it ahead
// instead, seqBlock sequences past the one it needs, and writes it again
// only once its sends pass that: a restart skips the sequences reserved
// and never handed out (gaps in a standard queue's sequences mean
// nothing), and never reuses one. A FIFO queue writes its exact next
// sequence, as before: its sequences are its messages' SequenceNumbers.
//
// Invariant: q.seqLimit is the counter as the store has it (or will,
// once the batches already committed are durable), and q.nextSeq <=
// q.seqLimit after every operation that hands out sequences. Batches are
// durable in commit order, so a message whose batch is durable has its
// sequence below a counter that is durable too. A commit that fails makes
// the engine read everything again from the store (recover.go), where
// load sets seqLimit to the counter the store really has.

// seqBlock is how far ahead a standard queue's counter is written.
const seqBlock = 1024

// reserveSeqs writes q's counter into t if q's sends have passed the
// counter the store has: to q.nextSeq on a FIFO queue, seqBlock past it on
// a standard one. Every write of the counter goes through it.
func (q *queue) reserveSeqs(t *txn) {
	if q.nextSeq <= q.seqLimit {
		return
	}
	q.seqLimit = q.nextSeq
	if !q.fifo {
		q.seqLimit += seqBlock
	}
	t.b.Set(idKey(prefixCounter, q.id), uint64Value(q.seqLimit))
}
