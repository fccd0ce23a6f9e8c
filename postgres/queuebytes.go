package postgres

import "github.com/tidemq/tidemq"

// --max-queue-bytes (Options.MaxQueueBytes) on PostgreSQL, as the engine
// keeps it (engine/send.go, full): a send to a queue whose messages add up
// to the limit or more is refused whole with RequestThrottled
// (tidemq.QueueFull), which SDKs retry; the send that reaches the limit is
// accepted whole, so a queue passes it by at most one request. Receives,
// deletes and dead-letter moves are never refused, so consumers drain it.
//
// The size of a queue's messages is a counter (queue_depth.bytes, kept by
// the statement triggers of every insert and delete,
// migrations/0013_queue_bytes.sql), so the check costs no scan, and it is
// part of the send's own statement, so it costs no round trip either:
//
//   - A standard send goes with its node's group commit (commit.go); the
//     group's statement (commitLimitedSQL) counts its requests in the order
//     they arrived, each against the queue's bytes when the statement
//     started plus those of the requests of the group before it to the
//     same queue (queueBytesSQL), and leaves out those it refuses. So a
//     node's sends are counted as the engine counts them, one after the
//     other.
//   - A FIFO send checks the queue's bytes in its statement
//     (fifoSendLimitedSQL).
//
// The slack, documented in the README: the check reads what was committed
// when its statement started, so sends of several nodes (or FIFO sends
// of different groups, which do not wait for each other) at the same
// instant can each pass the limit by one request; deletes in the same
// group statement are not counted until it commits; and a send to
// several queues (SendToQueues) refused for one of them still counts
// against the others within its group statement.

// queueBytesSQL is the check of commitLimitedSQL, as its CTEs r and f:
// r is each request's bytes ($16: its place in the group) by queue, f the
// requests refused, with the queue and the bytes it held before them (the
// counter plus the earlier requests of the group), at or over $17.
const queueBytesSQL = `r AS (
		SELECT req, qid, sum(size)::bigint AS bytes FROM s GROUP BY req, qid),
	f AS (
		SELECT req, qid, bytes FROM (
			SELECT r.req, r.qid, coalesce(d.bytes, 0) + coalesce(sum(r.bytes) OVER (PARTITION BY r.qid ORDER BY r.req
				ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::bigint AS bytes
			FROM r LEFT JOIN (SELECT queue_id, sum(bytes)::bigint AS bytes FROM queue_depth
				WHERE queue_id = ANY(ARRAY(SELECT DISTINCT qid FROM r)) GROUP BY queue_id) d ON d.queue_id = r.qid) x
		WHERE bytes >= $17)`

// queueFull is the refusal of a send to queue, which held bytes.
func (b *Broker) queueFull(queue string, bytes int64) error {
	return tidemq.QueueFull(queue, bytes, b.maxQueueBytes)
}
