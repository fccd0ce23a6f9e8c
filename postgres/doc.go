// Package postgres is a tidemq.Broker on PostgreSQL (pgx): several
// stateless tidemq nodes share one database and serve the same queues.
//
// # Schema
//
// Embedded, numbered migrations (migrations/*.sql, migrate.go), applied
// under an advisory lock at Open. A queue is a row of queues; a message a
// row of messages keyed by (queue_id, seq), seq coming from one sequence
// (it is the FIFO SequenceNumber too). A message's state is not stored:
// at a given now it is receivable when visible_at <= now, else in flight
// when it was ever received, else delayed; a send, a receive and a
// visibility change only set visible_at. The FIFO deduplication window,
// receive attempts, move tasks and the receipt-handle key (meta) have
// tables of their own.
//
// # Time
//
// Every instant is nanoseconds since the epoch from the injected Clock,
// passed to the queries as a parameter; the server's now() is never read,
// so tests drive a fake clock and nodes agree as far as their clocks do.
// A request reads the Clock once it holds its connection (or inside its
// transaction), right before the statement that uses it: the wait for a
// connection under load does not count against a visibility timeout.
//
// # Statements
//
// The data path is written as whole, batch-shaped statements, each one
// round trip after the queue's row was read (river's driver verbs are
// the model): a standard send inserts its messages from arrays
// (sendSQL), a standard receive picks, marks and returns its messages in
// one UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED) RETURNING
// (receiveSQL), a delete deletes a request's messages by handle from
// arrays (deleteSQL). A receive writes what it changes (receive count,
// times, deadline) and appends its event to a small jsonb array (events),
// never the whole story. FIFO sends and receives run in a transaction that
// locks the groups they touch, sent as one pipeline (the locks, then one
// statement: fifoSendSQL, fifoTakeReceiveSQL), so a lock is never held
// across a round trip to the node, nor across the commit's WAL flush,
// which a second transaction of the same pipeline waits for
// (queuelock.go).
//
// # Receives
//
// A standard receive takes messages that came back from in flight first,
// then the others, each kind in the order it became receivable, with FOR
// UPDATE SKIP LOCKED, so concurrent receives on any node take different
// messages without waiting for each other. On one node, the receives of
// a queue that arrive while one of its receive statements runs go
// together in the next (takes.go): each gets its share, in order, as if
// it had come alone; on a FIFO queue, each group's ready run goes whole
// to one of them. A FIFO receive locks the
// groups it serves, skipping those another receive holds (FIFO sends lock
// their groups too, waiting), and takes messages that are receivable
// and have no earlier message of their group that is not (a message waits
// while an earlier one of its group is in flight or delayed, not a later
// one): AWS's group rule, decided on what the previous receive committed;
// the groups are served in AWS's line (tidemq.GroupHead), which is the
// order of the two receive indexes: the pick walks them for group heads
// and stops at what it returns (receive.go). Dead-letter
// moves happen on the receive attempt after maxReceiveCount, as on SQS.
//
// # Retention
//
// A request never deletes expired messages: receives leave out the
// messages past their queue's retention, and the sweep (every node's,
// SweepInterval) deletes or captures them, counts them and forgets the
// deduplication entries and receive attempts whose five minutes are over.
// GetQueueAttributes, PeekMessages and Snapshot (what /metrics reads)
// apply a queue's retention before they count (one index probe when
// nothing is due), so what they report is exact.
//
// # Long polls
//
// See wake.go: local wakes after commit, NOTIFY to the other nodes after
// commit too, gathered by announce.go (never inside a write's transaction:
// PostgreSQL serialises the commits of transactions that NOTIFY), one
// LISTEN connection per node, and sleeping on the Clock until the
// queue's next deadline.
//
// # Invariants
//
//   - Durable before acknowledged: every call answers after its
//     transaction committed (with the server's synchronous_commit).
//   - Receives are state: receive count, first-receive time, visibility
//     deadline and history are written in the receive's transaction.
//   - A move (dead-letter, redrive, capture) deletes and inserts in one
//     transaction: never in both queues, never in neither.
//   - Every deadline reads the injected Clock.
//
// # Several nodes
//
// Everything a client can observe is in the database; what a node keeps
// for itself is its counters (Snapshot's Stats and LastReceive, since it
// started), its long polls, and the runners of the move tasks it started
// or resumed. Retention expiry needs no owner: every node sweeps, and the
// deletes of two sweeps do not overlap. What must run once across
// nodes (outside this package: triggers, alarm notifications, SNS
// redelivery) takes a lease (lease.go): a row (name, holder, expires,
// generation) taken and renewed with INSERT ... ON CONFLICT ... WHERE
// expires <= now OR holder = me, the times from the Clock like everything
// else here. A move task resumed by several nodes needs none: it is
// stepped by each in turn on its row lock, which keeps its count exact.
// KV (kv.go) holds what the nodes share besides queues: topics, the SNS
// outbox and triggers; RecordIDs (ids.go) numbers the outbox records. The
// registries in it change only through KV.Update, an advisory-locked
// read-modify-write that announces itself (NOTIFY) to KV.Watch on every
// node; KV.Lock holds a lock across work that is not one transaction (a
// FIFO topic's publish): kvupdate.go. A node checks at every health probe
// that its schema is still there, and re-creates it if not
// (schemacheck.go).
package postgres
