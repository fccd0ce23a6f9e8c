// Package engine is tidemq's single-node broker: every SQS semantic over
// in-memory indexes, made durable through a storage.Store.
//
// # State
//
// All queues live in memory, indexed so that send, receive, delete and
// visibility changes cost O(log n) in queue depth: a standard queue keeps its
// visible messages in a heap ordered by sequence; a FIFO queue keeps one
// ordered list per message group plus a heap of the groups that can deliver
// now. Deadlines (delay, visibility, retention) sit in one timer heap per
// queue and are applied lazily, before any operation on the queue reads it,
// and by a periodic sweep; nothing ever scans all messages.
//
// The store holds the same state as records (see keys.go). Open rebuilds the
// indexes from it.
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
package engine
