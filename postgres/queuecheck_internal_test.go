package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
)

// Migration 0016 drops the foreign key from messages to queues: an
// insert's queue is checked by its counter row's upsert (queue_depth keeps
// its key), and triggers on queues delete a deleted queue's messages.
// These tests hold that to what the key did.

// insertOneSQL inserts one message into queue $1.
const insertOneSQL = `INSERT INTO messages (queue_id, seq, message_id, body, sender, sent_at, enqueued_at, visible_at)
	VALUES ($1, nextval('message_seq'), 'm', 'body', 's', 1, 1, 1)`

func queueCheckSchema(t *testing.T) *pgxpool.Pool {
	t.Helper()
	_, pool := pgtest.SchemaPool(t)
	if err := migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

func newQueueRow(t *testing.T, pool *pgxpool.Pool, name string) int64 {
	t.Helper()
	var id int64
	if err := pool.QueryRow(context.Background(), `INSERT INTO queues (name, fifo, attrs, created, modified) VALUES ($1, false, '{}', 0, 0) RETURNING id`,
		name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func rowsOfQueue(t *testing.T, pool *pgxpool.Pool, id int64) (messages, counters int) {
	t.Helper()
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM messages WHERE queue_id = $1), (SELECT count(*) FROM queue_depth WHERE queue_id = $1)`,
		id).Scan(&messages, &counters); err != nil {
		t.Fatal(err)
	}
	return messages, counters
}

// waitForLockWait waits until a statement of this database that contains
// marker waits for a lock.
func waitForLockWait(t *testing.T, pool *pgxpool.Pool, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND strpos(query, $1) > 0`, marker).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no statement with %q waits for a lock after 10 s", marker)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A message for a queue that does not exist is refused with the foreign
// key's error, which the write paths take for "deleted meanwhile", and a
// statement of several queues is refused whole when one is missing.
func TestInsertIntoAMissingQueueFailsLikeTheForeignKey(t *testing.T) {
	ctx := context.Background()
	pool := queueCheckSchema(t)
	id := newQueueRow(t, pool, "q")
	if _, err := pool.Exec(ctx, insertOneSQL, id+1000); !isForeignKeyViolation(err) {
		t.Fatalf("insert into a missing queue: %v, want a foreign key violation", err)
	}
	_, err := pool.Exec(ctx, `INSERT INTO messages (queue_id, seq, message_id, body, sender, sent_at, enqueued_at, visible_at)
		SELECT q, nextval('message_seq'), 'm', 'body', 's', 1, 1, 1 FROM unnest($1::bigint[]) AS q`, []int64{id, id, id + 1000})
	if !isForeignKeyViolation(err) {
		t.Fatalf("insert into an existing and a missing queue: %v, want a foreign key violation", err)
	}
	if m, _ := rowsOfQueue(t, pool, id); m != 0 {
		t.Fatalf("the refused statement left %d messages", m)
	}
	if _, err := pool.Exec(ctx, insertOneSQL, id); err != nil {
		t.Fatal(err)
	}
	if m, c := rowsOfQueue(t, pool, id); m != 1 || c != 1 {
		t.Fatalf("after one insert: %d messages, %d counter rows; want 1 and 1", m, c)
	}
}

// DeleteQueue takes the queue's messages with it, standard and FIFO, and
// a queue of the same name created again starts empty.
func TestDeletedQueueTakesItsMessages(t *testing.T) {
	ctx := context.Background()
	pool := queueCheckSchema(t)
	br, err := Open(ctx, Options{Pool: pool, Clock: clocktest.New(time.Unix(1_700_000_000, 0)), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	other := newQueueRow(t, pool, "other")
	if _, err := pool.Exec(ctx, insertOneSQL, other); err != nil {
		t.Fatal(err)
	}
	for _, p := range []tidemq.CreateQueueParams{{Name: "s"}, {Name: "f.fifo", Attributes: map[string]string{
		tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true"}}} {
		if _, err := br.CreateQueue(ctx, p); err != nil {
			t.Fatal(err)
		}
		var id int64
		if err := pool.QueryRow(ctx, `SELECT id FROM queues WHERE name = $1`, p.Name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		var entries []tidemq.SendEntry
		for _, body := range []string{"a", "b", "c"} {
			e := tidemq.SendEntry{ID: body, Body: body}
			if p.Name == "f.fifo" {
				e.MessageGroupID = "g"
			}
			entries = append(entries, e)
		}
		if _, err := br.SendMessages(ctx, tidemq.SendMessagesParams{Queue: p.Name, Entries: entries}); err != nil {
			t.Fatal(err)
		}
		if m, _ := rowsOfQueue(t, pool, id); m != 3 {
			t.Fatalf("%s: %d messages before the delete, want 3", p.Name, m)
		}
		if err := br.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: p.Name}); err != nil {
			t.Fatal(err)
		}
		if m, c := rowsOfQueue(t, pool, id); m != 0 || c != 0 {
			t.Fatalf("%s deleted: %d messages and %d counter rows left", p.Name, m, c)
		}
		if _, err := br.CreateQueue(ctx, p); err != nil {
			t.Fatal(err)
		}
		a, err := br.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: p.Name, Names: []string{tidemq.AttrApproximateNumberOfMessages}})
		if err != nil {
			t.Fatal(err)
		}
		if n := a[tidemq.AttrApproximateNumberOfMessages]; n != "0" {
			t.Fatalf("%s created again holds %s messages", p.Name, n)
		}
	}
	if m, _ := rowsOfQueue(t, pool, other); m != 1 {
		t.Fatalf("another queue's message was deleted with them: %d left", m)
	}
}

// The two orders of an insert and its queue's deletion, as the foreign
// key ordered them: a DELETE waits for an insert that checked the queue
// and then takes its messages too; an insert that comes after a DELETE
// waits for it and fails.
func TestQueueDeleteAndInsertRace(t *testing.T) {
	ctx := context.Background()
	pool := queueCheckSchema(t)

	// The insert's counter row is new (its key check locks the queue's
	// row) or was there already (the insert holds its row lock, which the
	// queue's cascade must wait for).
	for _, counted := range []bool{false, true} {
		name := map[bool]string{false: "insert first, new counter row", true: "insert first, counter row there"}[counted]
		t.Run(name, func(t *testing.T) {
			id := newQueueRow(t, pool, name)
			conn, err := pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Release()
			if counted {
				if _, err := conn.Exec(ctx, insertOneSQL, id); err != nil {
					t.Fatal(err)
				}
				if m, c := rowsOfQueue(t, pool, id); m != 1 || c != 1 {
					t.Fatalf("%d messages, %d counter rows; want 1 and 1", m, c)
				}
			}
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, insertOneSQL, id); err != nil {
				t.Fatal(err)
			}
			deleted := deleteQueueBehind(t, pool, id, name)
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-deleted; err != nil {
				t.Fatal(err)
			}
			if m, c := rowsOfQueue(t, pool, id); m != 0 || c != 0 {
				t.Fatalf("the insert committed before the delete left %d messages and %d counter rows", m, c)
			}
		})
	}

	t.Run("delete first", func(t *testing.T) {
		id, tx, inserted := insertAfterDelete(t, pool, "delete first")
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-inserted; !isForeignKeyViolation(err) {
			t.Fatalf("insert after the delete: %v, want a foreign key violation", err)
		}
		if m, c := rowsOfQueue(t, pool, id); m != 0 || c != 0 {
			t.Fatalf("%d messages and %d counter rows of the deleted queue", m, c)
		}
	})

	t.Run("delete rolled back", func(t *testing.T) {
		id, tx, inserted := insertAfterDelete(t, pool, "delete rolled back")
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-inserted; err != nil {
			t.Fatalf("insert after a rolled-back delete: %v", err)
		}
		if m, c := rowsOfQueue(t, pool, id); m != 1 || c != 1 {
			t.Fatalf("%d messages and %d counter rows, want 1 and 1", m, c)
		}
	})
}

// insertAfterDelete creates a queue named name, deletes it in tx (left
// open), and starts an insert into it, which it waits to see waiting for
// a lock; the insert's result comes on inserted.
func insertAfterDelete(t *testing.T, pool *pgxpool.Pool, name string) (id int64, tx pgx.Tx, inserted chan error) {
	t.Helper()
	ctx := context.Background()
	id = newQueueRow(t, pool, name)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, `DELETE FROM queues WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	marker := "/* " + name + " */"
	inserted = make(chan error, 1)
	go func() {
		_, err := pool.Exec(ctx, insertOneSQL+" "+marker, id)
		inserted <- err
	}()
	waitForLockWait(t, pool, marker)
	return id, tx, inserted
}

// deleteQueueBehind starts a DELETE of queue id, marked with name, and
// waits to see it waiting for a lock (a transaction of the caller's that
// holds one); the DELETE's result comes on deleted.
func deleteQueueBehind(t *testing.T, pool *pgxpool.Pool, id int64, name string) (deleted chan error) {
	t.Helper()
	marker := "/* " + name + " */"
	deleted = make(chan error, 1)
	go func() {
		_, err := pool.Exec(context.Background(), `DELETE FROM queues WHERE id = $1 `+marker, id)
		deleted <- err
	}()
	waitForLockWait(t, pool, marker)
	return deleted
}

// The size column inlines tidemq_message_size (0017): PostgreSQL expands
// it into the expression, and its body names tidemq_attrs_size bound at
// creation, so that it works with an empty search_path, as pg_dump's
// restore runs when it creates messages. TestQueueBytesMigrationBackfills
// checks what it counts.
func TestMessageSizeIsInlined(t *testing.T) {
	ctx := context.Background()
	pool := queueCheckSchema(t)
	plan := explain(t, pool, `(VERBOSE) SELECT tidemq_message_size(body, attrs) FROM messages`)
	if strings.Contains(plan, "tidemq_message_size(") || !strings.Contains(plan, "tidemq_attrs_size(") {
		t.Fatalf("tidemq_message_size is not inlined:\n%s", plan)
	}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	defer conn.Exec(ctx, `RESET search_path`)
	if _, err := conn.Exec(ctx, `SET search_path = ''`); err != nil {
		t.Fatal(err)
	}
	var size int
	if err := conn.QueryRow(ctx, `SELECT `+pgx.Identifier{schema, "tidemq_message_size"}.Sanitize()+`('body', $1)`,
		[]byte(`{"k": {"DataType": "String", "StringValue": "v"}}`)).Scan(&size); err != nil {
		t.Fatalf("the size with an empty search_path: %v", err)
	}
	if size != 4+1+6+1 {
		t.Fatalf("size %d, want 12", size)
	}
}

// A DELETE of a queue that waits for a transaction holding one of its
// messages, which then moves or deletes it (its counter update), ends
// without a deadlock, as it did with the foreign key's cascade.
func TestQueueDeleteWaitsForAMessageHolder(t *testing.T) {
	ctx := context.Background()
	pool := queueCheckSchema(t)
	for _, shard := range []bool{false, true} {
		id := newQueueRow(t, pool, map[bool]string{false: "holder", true: "holder, every shard"}[shard])
		if _, err := pool.Exec(ctx, insertOneSQL, id); err != nil {
			t.Fatal(err)
		}
		if shard { // a counter row on every shard, the holder's among them
			if _, err := pool.Exec(ctx, `INSERT INTO queue_depth (queue_id, shard) SELECT $1, s FROM generate_series(0, 63) s ON CONFLICT DO NOTHING`, id); err != nil {
				t.Fatal(err)
			}
		}
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM messages WHERE queue_id = $1 FOR UPDATE`, id); err != nil {
			t.Fatal(err)
		}
		deleted := deleteQueueBehind(t, pool, id, fmt.Sprintf("holder %d", id))
		if _, err := tx.Exec(ctx, `DELETE FROM messages WHERE queue_id = $1`, id); err != nil {
			tx.Rollback(ctx)
			t.Fatalf("the holder's delete: %v", err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatalf("the holder's commit: %v", err)
		}
		if err := <-deleted; err != nil {
			t.Fatalf("DeleteQueue: %v", err)
		}
		if m, c := rowsOfQueue(t, pool, id); m != 0 || c != 0 {
			t.Fatalf("%d messages and %d counter rows left", m, c)
		}
	}
}
