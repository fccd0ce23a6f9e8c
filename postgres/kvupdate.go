package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq/storage"
)

// The registries kept in the KV (SNS topics and subscriptions, triggers)
// are changed only through Update: a transaction that first takes a
// transaction-scoped advisory lock named after the registry (so that two
// nodes' changes of one registry never interleave), reads the rows as
// committed, writes, and sends a NOTIFY on the schema's registry channel
// naming the lock. PostgreSQL delivers the notification only once the
// transaction commits, so a node that hears it and reloads sees the
// change. A node caches a registry to answer from, but never writes what
// it cached: a change is computed inside Update from the database's
// current rows. Watch is how a node hears the others' changes; its
// periodic reload is only the safety net for a notification lost while
// its LISTEN connection was down (Watch also reports a reconnection as a
// change of every registry).

// registryChannel is the NOTIFY channel of a schema's registry changes.
func registryChannel(schema string) string {
	s := notIdent.ReplaceAllString(schema, "_")
	if len(s) > 40 {
		s = s[:40]
	}
	return "tidemq_registry_" + s
}

// Update runs fn as one transaction holding the lock's advisory lock (see
// above) and commits fn's writes with a notification of the lock, or
// nothing when fn fails.
func (kv *KV) Update(lock string, fn func(tx storage.Txn) error) error {
	ctx := context.Background()
	return pgx.BeginFunc(ctx, kv.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('tidemq-registry:' || current_schema() || ':' || $1))`, lock); err != nil {
			return err
		}
		t := &kvTxn{ctx: ctx, tx: tx}
		if err := fn(t); err != nil {
			return err
		}
		if len(t.ops) == 0 {
			return nil
		}
		q := &pgx.Batch{}
		for _, op := range t.ops {
			if op.kind == 's' {
				q.Queue(`INSERT INTO kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2`, op.key, op.value)
			} else {
				q.Queue(`DELETE FROM kv WHERE key = $1`, op.key)
			}
		}
		q.Queue(`SELECT pg_notify($1, $2)`, kv.channel, lock)
		return tx.SendBatch(ctx, q).Close()
	})
}

// kvTxn is a storage.Txn inside a transaction.
type kvTxn struct {
	ctx context.Context
	tx  pgx.Tx
	ops []kvOp
}

func (t *kvTxn) Get(key []byte) ([]byte, bool, error) {
	var v []byte
	err := t.tx.QueryRow(t.ctx, `SELECT value FROM kv WHERE key = $1`, key).Scan(&v)
	if err == pgx.ErrNoRows {
		return nil, false, nil
	}
	if v == nil && err == nil {
		v = []byte{}
	}
	return v, err == nil, err
}

// Scan reads the keys first and then calls fn, so that fn may use the
// transaction.
func (t *kvTxn) Scan(prefix []byte, fn func(key, value []byte) error) error {
	var rows pgx.Rows
	var err error
	if end := prefixEnd(prefix); end == nil {
		rows, err = t.tx.Query(t.ctx, `SELECT key, value FROM kv WHERE key >= $1 ORDER BY key`, prefix)
	} else {
		rows, err = t.tx.Query(t.ctx, `SELECT key, value FROM kv WHERE key >= $1 AND key < $2 ORDER BY key`, prefix, end)
	}
	if err != nil {
		return err
	}
	type pair struct{ k, v []byte }
	var all []pair
	for rows.Next() {
		var p pair
		if err := rows.Scan(&p.k, &p.v); err != nil {
			rows.Close()
			return err
		}
		all = append(all, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, p := range all {
		if err := fn(p.k, p.v); err != nil {
			return err
		}
	}
	return nil
}

func (t *kvTxn) Set(key, value []byte) {
	t.ops = append(t.ops, kvOp{'s', append([]byte(nil), key...), append([]byte{}, value...)})
}

func (t *kvTxn) Delete(key []byte) {
	t.ops = append(t.ops, kvOp{kind: 'd', key: append([]byte(nil), key...)})
}

// Watch calls changed with the lock of every registry change another
// node (or this one) commits through Update, until ctx ends, on one
// LISTEN connection of its own. Once listening, and again after that
// connection broke and was reconnected (with backoff, in real time), it
// calls changed(""), "" meaning every registry, since a change may have
// been committed while it was not listening. changed runs on Watch's goroutine: it must not block long.
func (kv *KV) Watch(ctx context.Context, changed func(lock string), log func(msg string, err error)) {
	delay := 100 * time.Millisecond
	var c *pgx.Conn
	defer func() {
		if c != nil {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			c.Close(cctx)
			cancel()
		}
	}()
	for ctx.Err() == nil {
		if c == nil {
			var err error
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			c, err = kv.listen(dctx)
			cancel()
			if err != nil {
				c = nil
				if ctx.Err() != nil {
					return
				}
				log("postgres: registry LISTEN connection failed; retrying", err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(delay):
				}
				delay = min(2*delay, 5*time.Second)
				continue
			}
			changed("") // what changed before the LISTEN, or while it was down
		}
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			c.Close(cctx)
			cancel()
			c = nil
			if ctx.Err() == nil {
				log("postgres: registry LISTEN connection lost; reconnecting", err)
			}
			continue
		}
		delay = 100 * time.Millisecond
		changed(n.Payload)
	}
}

func (kv *KV) listen(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, kv.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{kv.channel}.Sanitize()); err != nil {
		c.Close(ctx)
		return nil, err
	}
	return c, nil
}

// Lock holds the lock of that name (see storage.Locker) until unlock: a
// session advisory lock, in the key space of Update's (a Lock and an
// Update of one name exclude each other), on one connection of the KV's
// own kept for locks, so that locks held across other work never take
// the pool's connections. Taking it polls (pg_try_advisory_lock, from 1 ms
// to 50 ms apart) rather than waits, so that a lock another node holds
// does not block this node's other locks. If the lock connection breaks,
// PostgreSQL drops the locks it held and the next Lock reconnects; a
// holder is not told, so a lock protects against the ordinary race of two
// nodes, not against a connection lost in the middle.
func (kv *KV) Lock(name string) (func(), error) {
	delay := time.Millisecond
	for {
		ok, err := kv.lockCall(`SELECT pg_try_advisory_lock(hashtext('tidemq-registry:' || current_schema() || ':' || $1))`, name)
		if err != nil {
			return nil, err
		}
		if ok {
			return func() {
				_, _ = kv.lockCall(`SELECT pg_advisory_unlock(hashtext('tidemq-registry:' || current_schema() || ':' || $1))`, name)
			}, nil
		}
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// lockCall runs one boolean query on the lock connection, connecting it
// first when needed.
func (kv *KV) lockCall(sql, name string) (bool, error) {
	kv.lockMu.Lock()
	defer kv.lockMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if kv.lockConn == nil {
		c, err := pgx.ConnectConfig(ctx, kv.pool.Config().ConnConfig.Copy())
		if err != nil {
			return false, err
		}
		kv.lockConn = c
	}
	var ok bool
	if err := kv.lockConn.QueryRow(ctx, sql, name).Scan(&ok); err != nil {
		kv.lockConn.Close(ctx)
		kv.lockConn = nil
		return false, err
	}
	return ok, nil
}
