package postgres

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq/storage"
)

// KV is a storage.Store on PostgreSQL: one table of byte keys and values
// (migrations/0002_kv.sql), a batch committed as one transaction. With
// `tidemq serve --store postgres://` the topics, the SNS outbox and the
// triggers are kept in it, shared by the nodes: they reload it
// periodically and run what must run once under a lease (Leases).
//
// Commits of one KV are serialised (they become visible in the order
// Commit is called, as storage.Batch requires); a commit is durable when
// it returns, so its Durable is storage.Done.
type KV struct {
	pool    *pgxpool.Pool
	ownPool bool
	mu      sync.Mutex // serialises commits
	// channel is the NOTIFY channel of this schema's registry changes
	// (kvupdate.go).
	channel string
	// lockConn holds the session advisory locks of Lock (kvupdate.go),
	// used under lockMu; nil until the first Lock or after it broke.
	lockMu   sync.Mutex
	lockConn *pgx.Conn
}

var (
	_ storage.Store   = (*KV)(nil)
	_ storage.Updater = (*KV)(nil)
	_ storage.Locker  = (*KV)(nil)
)

// kvScanPage is how many keys a Scan reads per query; no connection is
// held while the callback runs.
const kvScanPage = 1000

// OpenKV connects (o.DSN or o.Pool) and brings the schema up to date. Only
// the connection fields of o are used.
func OpenKV(ctx context.Context, o Options) (*KV, error) {
	kv := &KV{pool: o.Pool}
	if kv.pool == nil {
		cfg, err := PoolConfig(o.DSN)
		if err != nil {
			return nil, err
		}
		if kv.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		kv.ownPool = true
	}
	if err := migrate(ctx, kv.pool); err != nil {
		kv.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	var schema string
	if err := kv.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		kv.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	kv.channel = registryChannel(schema)
	return kv, nil
}

// Close releases the pool if OpenKV opened it.
func (kv *KV) Close() error {
	kv.lockMu.Lock()
	if kv.lockConn != nil {
		kv.lockConn.Close(context.Background())
		kv.lockConn = nil
	}
	kv.lockMu.Unlock()
	if kv.ownPool {
		kv.pool.Close()
	}
	return nil
}

// NewBatch starts an empty batch.
func (kv *KV) NewBatch() storage.Batch { return &kvBatch{kv: kv} }

// Scan calls fn for every key with the prefix, in key order.
func (kv *KV) Scan(prefix []byte, fn func(key, value []byte) error) error {
	ctx := context.Background()
	// Never nil: pgx sends a nil slice as NULL, and key >= NULL matches
	// nothing (Scan of "", every key, found none).
	from := append([]byte{}, prefix...)
	end := prefixEnd(prefix)
	for {
		var rows pgx.Rows
		var err error
		if end == nil {
			rows, err = kv.pool.Query(ctx, `SELECT key, value FROM kv WHERE key >= $1 ORDER BY key LIMIT $2`, from, kvScanPage)
		} else {
			rows, err = kv.pool.Query(ctx, `SELECT key, value FROM kv WHERE key >= $1 AND key < $2 ORDER BY key LIMIT $3`, from, end, kvScanPage)
		}
		if err != nil {
			return err
		}
		type pair struct{ k, v []byte }
		var page []pair
		for rows.Next() {
			var p pair
			if err := rows.Scan(&p.k, &p.v); err != nil {
				rows.Close()
				return err
			}
			page = append(page, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, p := range page {
			if err := fn(p.k, p.v); err != nil {
				return err
			}
		}
		if len(page) < kvScanPage {
			return nil
		}
		from = append(page[len(page)-1].k, 0) // the next key after the last
	}
}

// prefixEnd is the first key after every key with the prefix, or nil when
// there is none (the prefix is empty or all 0xff).
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

type kvOp struct {
	kind       byte // 's' set, 'd' delete, 'r' range delete
	key, value []byte
}

type kvBatch struct {
	kv  *KV
	ops []kvOp
}

func (b *kvBatch) Set(key, value []byte) {
	b.ops = append(b.ops, kvOp{'s', append([]byte(nil), key...), append([]byte{}, value...)})
}

func (b *kvBatch) Delete(key []byte) {
	b.ops = append(b.ops, kvOp{kind: 'd', key: append([]byte(nil), key...)})
}

func (b *kvBatch) SingleDelete(key []byte) { b.Delete(key) }

func (b *kvBatch) DeleteRange(start, end []byte) {
	b.ops = append(b.ops, kvOp{'r', append([]byte{}, start...), append([]byte(nil), end...)})
}

func (b *kvBatch) Empty() bool { return len(b.ops) == 0 }

// Commit applies the batch in one transaction, its writes in order.
func (b *kvBatch) Commit() (storage.Durable, error) { return b.CommitContext(context.Background()) }

// CommitContext is Commit bounded by ctx, and fenced by ctx's fence (a
// leader's write is refused once its lease was taken over: fence.go).
func (b *kvBatch) CommitContext(ctx context.Context) (storage.Durable, error) {
	if b.Empty() {
		return storage.Done{}, nil
	}
	q := &pgx.Batch{}
	for _, op := range b.ops {
		switch op.kind {
		case 's':
			q.Queue(`INSERT INTO kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2`, op.key, op.value)
		case 'd':
			q.Queue(`DELETE FROM kv WHERE key = $1`, op.key)
		case 'r':
			q.Queue(`DELETE FROM kv WHERE key >= $1 AND key < $2`, op.key, op.value)
		}
	}
	b.kv.mu.Lock()
	defer b.kv.mu.Unlock()
	err := pgx.BeginFunc(ctx, b.kv.pool, fenced(ctx, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, q).Close()
	}))
	if err != nil {
		return nil, err
	}
	return storage.Done{}, nil
}
