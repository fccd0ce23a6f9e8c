// Package engine is tidemq's single-node broker: every SQS semantic over
// in-memory indexes, made durable through a storage.Store.
//
// # State
//
// Every queue's working set lives in memory, indexed so that send, receive,
// delete and visibility changes cost O(log n) in queue depth: a standard
// queue keeps its visible messages in a heap ordered by sequence; a FIFO
// queue keeps one ordered list per message group plus a heap of the groups
// that can deliver now. Deadlines (delay, visibility, retention) sit in one
// timer heap per queue and are applied lazily, before any operation on the
// queue reads it, and by a periodic sweep; nothing ever scans all messages.
// The sweep visits only the queues that hold something a deadline can
// change (Engine.busy, queue.markBusy), not every queue: a server with
// 100,000 idle queues does no work per queue each second.
//
// The store holds every message as records (see keys.go); memory holds the
// working set, and with paging (Options.PageSize) a queue's backlog stays
// only in the store.
//
// # Memory: the backlog on disk, the working set in memory
//
// A standard queue of a paging engine keeps in memory what receives need
// next, and nothing per message for the rest (page.go):
//
//   - In memory: every message in flight, delayed, or pending (its batch
//     not yet synced), with its timers; a message that became ready again
//     (a visibility timeout ran out, or was set to 0); and a window of
//     ready messages: at most one page (PageSize messages) on the send
//     side, plus the page read last on the receive side.
//   - On disk only: the other ready messages, as pages. A page is a range
//     of sequences [lo, hi) with two numbers, how many paged messages it
//     holds and the earliest enqueue time among them; a page's messages are
//     the records of the range that are not in memory. Pages are disjoint
//     and in sequence order, and hold up to PageSize messages each, so
//     memory per paged message is a page header's share: 1/PageSize of
//     32 bytes.
//   - Page-out: a message is paged when it is published (its batch is
//     durable) ready to receive while the queue already has pages or a
//     full page of ready messages in memory. It is appended to the last
//     page, or starts one, and its memory is dropped. Nothing else is ever
//     paged out: a message that was in memory stays there until it leaves.
//   - Refill: receives (and moves, and move tasks) take the ready message
//     with the lowest sequence, as they always did; when the first page
//     begins below the lowest ready sequence in memory (or nothing is ready
//     in memory), that page is read in whole (one range scan of m/ and one
//     of s/) first. So delivery order is exactly what it was without
//     paging, and a refill costs one read per PageSize messages.
//   - Counts stay O(1): a paged message counts as ready (nReady, and
//     nDeadLettered when it was dead-lettered), and backlog.n counts the
//     paged ones. A paged message only leaves through a page-in (counted
//     back into memory), retention, purge or queue deletion, each of which
//     adjusts the counters, so ApproximateNumberOfMessages stays visible +
//     paged exactly, and visible + delayed + in flight is the depth.
//   - By handle: a receipt handle whose message is not in memory but lies
//     in a page's range is looked up in the store (a point read) and the
//     message is brought into memory, so an old handle deletes or changes
//     the visibility of a paged message as it would in memory.
//   - Retention: a page whose earliest enqueue time is past the retention
//     period is read, its expired messages dropped (or captured) and its
//     numbers recomputed; other pages are not read. Dead-lettered messages
//     keep their enqueue time, so pages are not in age order; the earliest
//     over all pages is kept to know, in O(1), when to look.
//   - Peek reads pages in order of their earliest message and stops at the
//     first that cannot hold an older message than those it has.
//   - Reads within one operation: the records of messages this operation
//     removed are deleted by its batch, which reads do not see before it
//     commits; backlog.gone lists them (when they lie in a page's range)
//     until it does, and page reads skip them.
//   - Restart builds only the working set, after a clean shutdown or a
//     crash alike. A checkpoint (checkpoint.go), written at every start-up,
//     at Close and by the sweep every CheckpointInterval while the backlog
//     changes, lists every paged queue's pages and the sequences it held in
//     memory within them. A page read into memory (a refill, a receipt
//     handle, retention) leaves the checkpoint in the next batch that
//     commits, before anything that depends on the read can be on disk, so
//     the pages a start-up finds are exact. Load installs them without
//     reading their messages, reads the listed sequences, and reads every
//     other record as if there were no checkpoint: it keeps the receive
//     states (s/, written only for received or moved messages) of
//     messages in flight, walks the message records outside the pages,
//     decoding only the three fields that say whether a message is
//     delayed, when it was enqueued and whether it was dead-lettered, and
//     pages every ready one again, in sequence order between the installed
//     pages, without building it in memory. So start-up reads what was
//     sent, received or in memory since the last checkpoint, not the
//     backlog; without a checkpoint (none written yet, or its canary gone
//     because an older binary ran on the store) it reads every record
//     once, with no memory per message.
//   - A read error while paging panics under the lock: the engine fails and
//     reloads its state from the store (# Failure), as for a failed write.
//
// A FIFO queue is paged per message group (fifopage.go), the same way:
//
//   - In memory, per group: its messages in flight, delayed or pending,
//     and a window of ready messages, at most one group page
//     (PageSize/16 messages, 256 by default) before later ones stay on
//     disk. A group's pages hold its later ready messages, as ranges of
//     sequences with the same numbers as a standard page; every page of a
//     group lies after the group's first live message in memory.
//   - The body is written once: each FIFO message of a paging engine has
//     an index key g/<qid><len><group><seq> with an empty value, written
//     in the batch that writes the message and deleted with it. A group's
//     page read scans its index keys in the page's range and reads the
//     m/ and s/ records of those sequences with one forward iterator
//     (storage.ReadEach).
//   - Refill: as soon as a paged message of a group could come before
//     every live message of the group in memory (its window drained, or a
//     receive walked to its end), the group's first page is read in
//     (fifoIndex.refresh, and the receive walk). So order within a group,
//     the group rules (a message waits while an earlier one is in
//     flight), the line of groups (tidemq.GroupHead) and deduplication
//     (its w/ records and window are not paged) are what they are
//     without paging.
//   - Counts, receipt handles, retention (per group page, the earliest
//     over all groups kept exactly), peek, purge, queue deletion,
//     dead-letter moves in and out (a move writes the destination's
//     index key in its batch) and move tasks work as for a standard
//     queue.
//   - Restart builds only the working set from a checkpoint too
//     (fifocheckpoint.go). A FIFO queue's checkpoint is a head, its next
//     sequence then (hi) and the sequences it held in memory, and its
//     groups' pages: every record below hi was in memory, or is in a
//     listed page, or in a page listed as dropped. A group page read into
//     memory (a refill, a receipt handle, retention) is replaced by a
//     dropped record in the next batch that commits. Load skips the
//     queue's records below hi, installs the pages, reads the listed
//     sequences and the dropped pages' messages (through the group index)
//     into memory, and reads the records from hi on as without a
//     checkpoint. So a FIFO start-up reads what was in memory, sent or
//     read since the last checkpoint, not the backlog; without one (none
//     yet, its canary gone, or one of checkpointVersion 3 or older) it
//     reads every record once, decoding only what paging needs.
//   - The group index is trusted only when the checkpoint's canary is
//     there (no other binary ran since the last start-up, checkpoint.go);
//     otherwise load deletes every g/ key and writes them again from the
//     message records, in a batch committed before any page is read. A
//     binary before FIFO paging ignores g/ keys (its FIFO queues are all in
//     memory) and removes the canary, so nothing is lost or duplicated
//     either way.
//   - Memory grows with the number of groups that hold messages (a group
//     keeps up to a window in memory), not with their depth.
//
// Options.PageSize 0 turns paging off (the in-memory store has nothing to
// gain from it).
//
// # Locking
//
// One mutex, Engine.mu, guards every queue and message. It is never held
// while waiting for an fsync: an operation mutates memory and builds a batch
// under the lock, commits the batch under the lock (which fixes its place in
// the log, so disk order is lock order), releases the lock, and only then
// waits for durability. Long polls wait without the lock. Every call takes
// the lock through a hold that records whether it holds it, so that a panic
// under the lock releases it instead of wedging the engine (lock.go).
//
// # Failure
//
// A failed commit or fsync (a full disk), or a panic under the lock, fails
// the engine: it refuses all work and Healthy reports why, while a
// background loop reopens the store and reloads the state from it, with the
// load that Open uses, until it succeeds (recover.go).
//
// # Invariants
//
//   - Durable before acknowledged: no operation returns before its batch is
//     synced (unless the store is storage/mem, which is in memory on purpose).
//   - A sent message becomes receivable only after its batch is synced, and
//     messages of one queue become receivable in sequence order (txn.go).
//   - Receives are state: receive count, first-receive time, visibility
//     deadline and history are written before the receive answers.
//   - Nothing leaves a queue uncounted: delete, purge, dead-letter move, move
//     and retention expiry each bump their counter (Stats).
//   - A dead-letter move is one batch: the message is never in both queues
//     nor in neither.
//   - Every deadline reads the injected Clock.
//   - queue.bytes is the size of every live message of the queue, paged
//     ones included: add and remove keep it, load rebuilds it (from page
//     headers, a FIFO group's pages included, or from every record);
//     Options.MaxQueueBytes refuses sends
//     on it, never a move.
package engine
