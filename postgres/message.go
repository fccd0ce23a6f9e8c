package postgres

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// message is a row of messages: the record every store keeps
// (tidemq.StoredMessage; its VisibleAt is also the end of the send delay)
// and the row's key. Its History is the story after the send: the history
// column's events, then the events column's.
type message struct {
	tidemq.StoredMessage
	queueID int64
	seq     int64
	// held: in flight under a receive whose end is not in history yet
	// (migrations/0006_receive_writes.sql).
	held bool
}

const messageCols = `queue_id, seq, message_id, body, attrs, sys_attrs, group_id, dedup_id, sender, sent_at,
	enqueued_at, visible_at, receive_count, first_receive, received_at, dlq_source, history, held, events`

// qualified prefixes each of the comma-separated columns cols with alias.
func qualified(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// storedEvent is a history event in the events column, written by SQL
// (receiveSQL) as well as by Go.
type storedEvent struct {
	T int64              `json:"t"`
	K string             `json:"k"`
	Q string             `json:"q"`
	C *tidemq.ClientInfo `json:"c,omitempty"`
	D string             `json:"d,omitempty"`
}

func scanMessage(row pgx.Row) (*message, error) {
	m := &message{}
	var attrs, sys, hist, events []byte
	if err := row.Scan(&m.queueID, &m.seq, &m.ID, &m.Body, &attrs, &sys, &m.Group, &m.DedupID, &m.Sender, &m.Sent,
		&m.Enqueued, &m.VisibleAt, &m.ReceiveCount, &m.FirstReceive, &m.ReceivedAt, &m.DLQSource, &hist, &m.held, &events); err != nil {
		return nil, err
	}
	var stored []storedEvent
	for _, f := range []struct {
		b []byte
		v any
	}{{attrs, &m.Attrs}, {sys, &m.SysAttrs}, {hist, &m.History}, {events, &stored}} {
		if len(f.b) > 0 {
			if err := json.Unmarshal(f.b, f.v); err != nil {
				return nil, fmt.Errorf("message %d/%d: %w", m.queueID, m.seq, err)
			}
		}
	}
	for _, e := range stored {
		ev := tidemq.HistoryEvent{Time: timeOf(e.T), Kind: e.K, Queue: e.Q, Detail: e.D}
		if e.C != nil {
			ev.Client = *e.C
		}
		m.AddHistory(ev)
	}
	return m, nil
}

func collectMessages(rows pgx.Rows) ([]*message, error) {
	defer rows.Close()
	var out []*message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func jsonOrNil(v any, empty bool) []byte {
	if empty {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// moveSQL deletes a message from its queue ($20, $21: queue id and seq)
// and inserts it as given (insertArgs), in one statement: a message that
// another transaction deleted meanwhile (a node's retention sweep) is not
// resurrected in the destination.
const moveSQL = `WITH gone AS (DELETE FROM messages WHERE queue_id = $20 AND seq = $21 RETURNING 1)
	INSERT INTO messages (` + messageCols + `, size)
	SELECT $1::bigint, $2::bigint, $3::text, $4::text, $5::bytea, $6::bytea, $7::text, $8::text, $9::text, $10::bigint,
		$11::bigint, $12::bigint, $13::integer, $14::bigint, $15::bigint, $16::text, $17::bytea, $18::boolean, NULL, $19::integer
	WHERE EXISTS (SELECT 1 FROM gone)`

// insertArgs are moveSQL's $1-$19: the row's columns as messageCols
// names them (events empty: the story is in history), then its size.
func (m *message) insertArgs() []any {
	return []any{m.queueID, m.seq, m.ID, m.Body, jsonOrNil(m.Attrs, len(m.Attrs) == 0),
		jsonOrNil(m.SysAttrs, len(m.SysAttrs) == 0), m.Group, m.DedupID, m.Sender, m.Sent, m.Enqueued, m.VisibleAt,
		m.ReceiveCount, m.FirstReceive, m.ReceivedAt, m.DLQSource, jsonOrNil(m.History, len(m.History) == 0), m.held,
		int32(tidemq.MessageSize(m.Body, m.Attrs))}
}

// updateStateSQL writes what a FIFO receive, a visibility change or a
// recorded failure changes, folding the whole story into history.
const updateStateSQL = `UPDATE messages SET visible_at = $3, receive_count = $4, first_receive = $5,
	received_at = $6, history = $7, held = $8, events = NULL WHERE queue_id = $1 AND seq = $2`

func (m *message) stateArgs() []any {
	return []any{m.queueID, m.seq, m.VisibleAt, m.ReceiveCount, m.FirstReceive, m.ReceivedAt,
		jsonOrNil(m.History, len(m.History) == 0), m.held}
}

// receivedManySQL writes what a FIFO receive changes in each of its
// messages, in one statement, and returns the seqs it wrote.
const receivedManySQL = `UPDATE messages m SET visible_at = u.v, receive_count = u.rc, first_receive = u.fr,
		received_at = u.ra, history = u.h, held = true, events = NULL
	FROM unnest($2::bigint[], $3::bigint[], $4::integer[], $5::bigint[], $6::bigint[], $7::bytea[]) AS u(seq, v, rc, fr, ra, h)
	WHERE m.queue_id = $1 AND m.seq = u.seq
	RETURNING m.seq`

func receivedManyArgs(qid int64, ms []*message) []any {
	seqs, vs, frs, ras := make([]int64, len(ms)), make([]int64, len(ms)), make([]int64, len(ms)), make([]int64, len(ms))
	rcs, hs := make([]int32, len(ms)), make([][]byte, len(ms))
	for i, m := range ms {
		seqs[i], vs[i], rcs[i], frs[i], ras[i] = m.seq, int64(m.VisibleAt), int32(m.ReceiveCount), int64(m.FirstReceive), int64(m.ReceivedAt)
		hs[i] = jsonOrNil(m.History, len(m.History) == 0)
	}
	return []any{qid, seqs, vs, rcs, frs, ras, hs}
}

// inflight reports whether m is in flight at now (nanoseconds).
func (m *message) inflight(now int64) bool {
	return m.ReceiveCount > 0 && m.VisibleAt > tidemq.Stamp(now)
}

// ready reports whether m is receivable at now (nanoseconds).
func (m *message) ready(now int64) bool { return m.VisibleAt <= tidemq.Stamp(now) }

// settle records, if it is not recorded yet, that m's visibility timeout
// ran out without a delete: the event the engine writes when the deadline
// passes is written here, by the first operation that finds it passed
// (its time is the deadline's).
func (m *message) settle(now int64, queue string) bool {
	if !m.held || m.VisibleAt > tidemq.Stamp(now) {
		return false
	}
	m.AddHistory(tidemq.ExpiredEvent(queue, timeOf(m.VisibleAt)))
	m.held = false
	return true
}

// expiredDetail is the detail of a visibility-expired event, which
// receiveSQL writes too.
const expiredDetail = tidemq.ExpiredDetail

// snapshot returns the message as a Broker hands it out.
func (m *message) snapshot(q *queue, handle string) *tidemq.Message {
	return m.Snapshot(q.name, q.fifo, uint64(m.seq), handle)
}
