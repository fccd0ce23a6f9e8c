package postgres

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
)

// sizedAttrs are message attributes of every kind, their names and
// values multi-byte in places, so that a size counted in characters, or
// a binary value counted as its base64, would differ from SQS's.
var sizedAttrs = []map[string]tidemq.MessageAttributeValue{
	nil,
	{"n": {DataType: "String", StringValue: "abc"}},
	{"größe": {DataType: "String.unicode", StringValue: "ünïcødé ✓"}, "num": {DataType: "Number", StringValue: "12.5"}},
	{"bin": {DataType: "Binary", BinaryValue: []byte{0, 1, 2, 255, 254}}, "gz": {DataType: "Binary.gz", BinaryValue: []byte("zzzzzz")}},
	{"s": {DataType: "String", StringValue: strings.Repeat("é", 100)}},
}

// rowSizes returns each message row's size column and what
// tidemq.MessageSize says of its body and attributes.
func rowSizes(t *testing.T, pool *pgxpool.Pool) (got, want []int) {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT size, body, attrs FROM messages ORDER BY queue_id, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var size int
		var body string
		var attrs []byte
		if err := rows.Scan(&size, &body, &attrs); err != nil {
			t.Fatal(err)
		}
		var a map[string]tidemq.MessageAttributeValue
		if len(attrs) > 0 {
			if err := json.Unmarshal(attrs, &a); err != nil {
				t.Fatal(err)
			}
		}
		got, want = append(got, size), append(want, tidemq.MessageSize(body, a))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got, want
}

// queueBytes returns the bytes counter of each queue by name.
func queueBytes(t *testing.T, pool *pgxpool.Pool) map[string]int64 {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT q.name, coalesce((SELECT sum(bytes) FROM queue_depth d WHERE d.queue_id = q.id), 0)::bigint,
		coalesce((SELECT sum(size) FROM messages m WHERE m.queue_id = q.id), 0)::bigint FROM queues q`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var counted, table int64
		if err := rows.Scan(&name, &counted, &table); err != nil {
			t.Fatal(err)
		}
		if counted != table {
			t.Errorf("queue %s: its counter says %d bytes, its rows %d", name, counted, table)
		}
		out[name] = counted
	}
	return out
}

// Migration 0013 backfills the size of the messages already there and
// their queues' bytes counters, and its size column counts a message as
// tidemq.MessageSize (the engine's count) does, attributes of every kind
// included; the broker's sends then keep the counters.
func TestQueueBytesMigrationBackfills(t *testing.T) {
	ctx := context.Background()
	_, pool := pgtest.SchemaPool(t)
	if err := migrateTo(ctx, pool, 12); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for qi, name := range []string{"a", "b", "empty"} {
		var id int64
		if err := pool.QueryRow(ctx, `INSERT INTO queues (name, fifo, attrs, created, modified) VALUES ($1, false, '{}', 0, 0) RETURNING id`,
			name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if name == "empty" {
			continue
		}
		for i, a := range sizedAttrs {
			body := strings.Repeat("ü", 10*(qi+1)) + strconv.Itoa(i)
			if _, err := pool.Exec(ctx, `INSERT INTO messages (queue_id, seq, message_id, body, attrs, sender, sent_at, enqueued_at, visible_at)
				VALUES ($1, nextval('message_seq'), $2, $3, $4, 's', 1, 1, 1)`, id, name+strconv.Itoa(i), body, jsonOrNil(a, len(a) == 0)); err != nil {
				t.Fatal(err)
			}
			want[name] += int64(tidemq.MessageSize(body, a))
		}
	}
	if err := migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	got, wantSizes := rowSizes(t, pool)
	for i := range got {
		if got[i] != wantSizes[i] {
			t.Errorf("row %d: size %d, tidemq.MessageSize %d", i, got[i], wantSizes[i])
		}
	}
	if b := queueBytes(t, pool); b["a"] != want["a"] || b["b"] != want["b"] || b["empty"] != 0 {
		t.Fatalf("backfilled bytes %v, want %v", b, want)
	}
	// The broker's sends (group commit and FIFO) count the same.
	br, err := Open(ctx, Options{Pool: pool, Clock: clocktest.New(time.Unix(1_700_000_000, 0)), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	for _, p := range []tidemq.CreateQueueParams{{Name: "s"}, {Name: "f.fifo", Attributes: map[string]string{
		tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true"}}} {
		if _, err := br.CreateQueue(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for i, a := range sizedAttrs {
		for _, q := range []string{"s", "f.fifo"} {
			e := tidemq.SendEntry{ID: "0", Body: "sent " + strconv.Itoa(i), Attributes: a}
			if q == "f.fifo" {
				e.MessageGroupID = "g"
			}
			res, err := br.SendMessages(ctx, tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{e}})
			if err == nil {
				err = res[0].Err
			}
			if err != nil {
				t.Fatal(err)
			}
			want[q] += int64(tidemq.MessageSize(e.Body, a))
		}
	}
	got, wantSizes = rowSizes(t, pool)
	for i := range got {
		if got[i] != wantSizes[i] {
			t.Errorf("row %d after sends: size %d, tidemq.MessageSize %d", i, got[i], wantSizes[i])
		}
	}
	if b := queueBytes(t, pool); b["a"] != want["a"] || b["s"] != want["s"] || b["f.fifo"] != want["f.fifo"] {
		t.Fatalf("bytes after sends %v, want %v", b, want)
	}
}

// The group commit counts its sends in the order they arrived, each
// against the bytes before it: of ten waiting requests of 100 bytes to a
// queue with a limit of 250, one statement writes the first three and
// refuses the others with RequestThrottled; a request to another queue
// in the same group is written.
func TestGroupCommitCountsQueueBytesInOrder(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	ctx := context.Background()
	b, err := Open(ctx, Options{DSN: dsn, Clock: clocktest.New(time.Unix(1_700_000_000, 0)), SweepInterval: -1, MaxQueueBytes: 250})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	var qs []*queue
	for _, name := range []string{"q", "other"} {
		if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name}); err != nil {
			t.Fatal(err)
		}
		q, err := b.getQueue(ctx, b.pool, name, false)
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	// No committer runs yet: the requests wait in the channel.
	b.group.once.Do(func() {
		b.group.reqs = make(chan *writeReq, 64)
		b.group.stopped = make(chan struct{})
	})
	reqs := make([]*writeReq, 11)
	for i := range reqs {
		q := qs[0]
		if i == 5 {
			q = qs[1]
		}
		reqs[i] = &writeReq{done: make(chan error, 1), send: &sendRows{qid: q.id, sender: "s", ids: []string{"id" + strconv.Itoa(i)},
			bodies: []string{strings.Repeat("x", 100)}, attrs: [][]byte{nil}, sys: [][]byte{nil}, delays: []int64{0},
			sizes: []int{100}, notify: q.name}}
		b.group.reqs <- reqs[i]
	}
	b.group.running.Add(1)
	b.wg.Add(1)
	go b.commitLoop()
	accepted := 0
	for i, r := range reqs {
		if err := <-r.done; err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		wantFull := i >= 3 && i != 5 // 0, 1, 2 to q (0, 100, 200 bytes before), 5 to other
		if (r.full != nil) != wantFull || (r.full == nil) != (r.send.written == 1) {
			t.Fatalf("request %d: refused %v, written %d", i, r.full, r.send.written)
		}
		if r.full != nil && !tidemq.HasCode(r.full, tidemq.ErrRequestThrottled) {
			t.Fatalf("request %d refused with %v", i, r.full)
		}
		if r.full == nil {
			accepted++
		}
	}
	if !strings.Contains(reqs[3].full.Error(), "holds 300 bytes") || !strings.Contains(reqs[10].full.Error(), "holds 900 bytes") {
		t.Fatalf("the refusals' bytes: %q, %q", reqs[3].full, reqs[10].full)
	}
	if s := b.group.statements.Load(); s != 1 {
		t.Fatalf("%d statements for the waiting requests, want 1", s)
	}
	if got := queueBytes(t, b.pool); got["q"] != 300 || got["other"] != 100 || accepted != 4 {
		t.Fatalf("after the group: bytes %v, %d accepted", got, accepted)
	}
}

// The node writes each message's size (migrations/0018): its sends and its
// dead-letter moves. A row that a node of an older version inserts
// without it (NULL, during a rolling upgrade) counts in queue_depth as the
// generated column counted it, when it is inserted and when it is
// deleted, so the bytes stay exact whichever node wrote a row.
func TestMessageSizeWrittenByTheNode(t *testing.T) {
	ctx := context.Background()
	_, pool := pgtest.SchemaPool(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	br, err := Open(ctx, Options{Pool: pool, Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	dlqARN := tidemq.QueueARN(br.region, br.acct, "dlq")
	for _, p := range []tidemq.CreateQueueParams{{Name: "dlq"}, {Name: "s", Attributes: map[string]string{
		tidemq.AttrRedrivePolicy: tidemq.RedrivePolicy{DeadLetterTargetARN: dlqARN, MaxReceiveCount: 1}.String()}}} {
		if _, err := br.CreateQueue(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{}
	for i, a := range sizedAttrs {
		e := tidemq.SendEntry{ID: "0", Body: "sent " + strconv.Itoa(i), Attributes: a}
		res, err := br.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "s", Entries: []tidemq.SendEntry{e}})
		if err == nil {
			err = res[0].Err
		}
		if err != nil {
			t.Fatal(err)
		}
		want["s"] += int64(tidemq.MessageSize(e.Body, a))
	}
	var nulls int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE size IS NULL`).Scan(&nulls); err != nil || nulls != 0 {
		t.Fatalf("%d rows the node sent without a size (%v)", nulls, err)
	}
	// Received once, then due again: every message moves to dlq, and
	// takes its size along.
	one := 1
	for moved, rounds := 0, 0; moved < len(sizedAttrs); rounds++ {
		if rounds > 10*len(sizedAttrs) {
			t.Fatalf("%d of %d messages moved to dlq", moved, len(sizedAttrs))
		}
		msgs, err := br.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "s", MaxNumberOfMessages: &one})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			clk.Advance(time.Minute)
			var left int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM messages m JOIN queues q ON q.id = m.queue_id WHERE q.name = 's'`).Scan(&left); err != nil {
				t.Fatal(err)
			}
			moved = len(sizedAttrs) - left
		}
	}
	want["dlq"], want["s"] = want["s"], 0
	got, wantSizes := rowSizes(t, pool) // a NULL size fails its Scan
	for i := range got {
		if got[i] != wantSizes[i] {
			t.Errorf("row %d after the moves: size %d, tidemq.MessageSize %d", i, got[i], wantSizes[i])
		}
	}
	if b := queueBytes(t, pool); b["s"] != 0 || b["dlq"] != want["dlq"] {
		t.Fatalf("bytes after the moves %v, want %v", b, want)
	}
	// An older node's insert, without the column.
	body, a := "from an older node", sizedAttrs[1]
	if _, err := pool.Exec(ctx, `INSERT INTO messages (queue_id, seq, message_id, body, attrs, sender, sent_at, enqueued_at, visible_at)
		SELECT id, nextval('message_seq'), 'old', $1, $2, 's', 1, 1, 1 FROM queues WHERE name = 's'`, body, jsonOrNil(a, false)); err != nil {
		t.Fatal(err)
	}
	counted := func() int64 {
		var n int64
		if err := pool.QueryRow(ctx, `SELECT coalesce(sum(d.bytes), 0)::bigint FROM queue_depth d JOIN queues q ON q.id = d.queue_id
			WHERE q.name = 's'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n, w := counted(), int64(tidemq.MessageSize(body, a)); n != w {
		t.Fatalf("an older node's row counts %d bytes, want %d", n, w)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM messages WHERE message_id = 'old'`); err != nil {
		t.Fatal(err)
	}
	if n := counted(); n != 0 {
		t.Fatalf("%d bytes once the older node's row is deleted, want 0", n)
	}
}
