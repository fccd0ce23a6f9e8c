package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
	"github.com/tidemq/tidemq/storage"
)

// The database itself refuses a second subscription of one (topic,
// protocol, endpoint), even written past the topic service's lock.
func TestKVRefusesADuplicateSubscription(t *testing.T) {
	_, pool, shared := sharedKV(t)
	defer shared.Close()
	put := func(key, value string) error {
		b := shared.NewBatch()
		b.Set([]byte(key), []byte(value))
		return storage.CommitSync(b)
	}
	const topic = "arn:aws:sns:us-east-1:000000000000:t"
	sub := func(endpoint string) string {
		return `{"ARN":"x","TopicARN":"` + topic + `","Protocol":"sqs","Endpoint":"` + endpoint + `"}`
	}
	if err := put("sns/s/"+topic+":1", sub("q1")); err != nil {
		t.Fatal(err)
	}
	if err := put("sns/s/"+topic+":2", sub("q2")); err != nil {
		t.Fatalf("another endpoint: %v", err)
	}
	err := put("sns/s/"+topic+":3", sub("q1"))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		t.Fatalf("a second subscription of q1: %v, want a unique violation", err)
	}
	if err := put("sns/s/"+topic+":1", sub("q1")); err != nil {
		t.Fatalf("rewriting the first: %v", err)
	}
	if err := put("sns/t/other", sub("q1")); err != nil { // not a subscription key
		t.Fatalf("a key outside sns/s/: %v", err)
	}
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM kv WHERE key >= 'sns/s/'::bytea AND key < 'sns/s0'::bytea`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d subscriptions (%v), want 2", n, err)
	}
}

// Migration 10 on a database that an older release left with duplicate
// subscriptions keeps the first of each and then refuses new ones.
func TestMigrationKeepsOneOfDuplicateSubscriptions(t *testing.T) {
	ctx := context.Background()
	_, pool, shared := sharedKV(t)
	defer shared.Close()
	// Back to before migration 10.
	if _, err := pool.Exec(ctx, `DROP INDEX kv_sns_subscription_identity; DROP FUNCTION tidemq_sns_subscription_identity(bytea);
		DELETE FROM schema_migrations WHERE version = 10`); err != nil {
		t.Fatal(err)
	}
	const topic = "arn:aws:sns:us-east-1:000000000000:t"
	for _, k := range []string{"b", "a", "c"} {
		if _, err := pool.Exec(ctx, `INSERT INTO kv (key, value) VALUES ($1, $2)`,
			[]byte("sns/s/"+topic+":"+k), []byte(`{"TopicARN":"`+topic+`","Protocol":"sqs","Endpoint":"q"}`)); err != nil {
			t.Fatal(err)
		}
	}
	kv, err := postgres.OpenKV(ctx, postgres.Options{Pool: pool}) // migrates
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	var keys []string
	err = kv.Scan([]byte("sns/s/"), func(k, _ []byte) error { keys = append(keys, string(k)); return nil })
	if err != nil || len(keys) != 1 || keys[0] != "sns/s/"+topic+":a" {
		t.Fatalf("after the migration: %v (%v), want the first key only", keys, err)
	}
}

// KV.Lock excludes another process's Lock and Update of the same name (two
// KVs with their own pools stand for two nodes), not of another name, and
// unlock lets the waiter in.
func TestKVLockExcludesOtherNodes(t *testing.T) {
	ctx := context.Background()
	dsn, _, shared := sharedKV(t)
	defer shared.Close()
	other := func() *postgres.KV {
		kv, err := postgres.OpenKV(ctx, postgres.Options{Pool: pgtest.Pool(t, dsn)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kv.Close() })
		return kv
	}
	a, b := other(), other()
	unlock, err := a.Lock("x")
	if err != nil {
		t.Fatal(err)
	}
	if u, err := b.Lock("y"); err != nil {
		t.Fatalf("another name: %v", err)
	} else {
		u()
	}
	got := make(chan string, 2)
	go func() {
		u, err := b.Lock("x")
		if err != nil {
			got <- err.Error()
			return
		}
		got <- "lock"
		u()
	}()
	go func() {
		err := b.Update("x", func(tx storage.Txn) error { tx.Set([]byte("k"), []byte("v")); return nil })
		if err != nil {
			got <- err.Error()
			return
		}
		got <- "update"
	}()
	select {
	case g := <-got:
		t.Fatalf("%s went through while another node held the lock", g)
	case <-time.After(300 * time.Millisecond):
	}
	unlock()
	for i := 0; i < 2; i++ {
		select {
		case g := <-got:
			if g != "lock" && g != "update" {
				t.Fatal(g)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the waiters were not let in after unlock")
		}
	}
}
