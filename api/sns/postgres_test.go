package sns_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
	"github.com/tidemq/tidemq/sns"
)

// TestMain starts the package's PostgreSQL cluster (pgtest.Main), which
// the tests on PostgreSQL share, each in a schema of its own; not for
// -short, nor in TestCrashChild's child process, which is killed.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() || os.Getenv(crashDirEnv) != "" {
		os.Exit(m.Run())
	}
	os.Exit(pgtest.Main(m))
}

// pgEnv is newEnvWith on PostgreSQL: the broker and the topic service's
// store in a fresh schema of the package's cluster, as `tidemq serve
// --store postgres://…` runs them. wrap (nil: none) wraps the broker. It
// skips t under -short or without PostgreSQL.
func pgEnv(t *testing.T, opt func(*sns.Options), wrap func(tidemq.Broker) tidemq.Broker) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	dsn, _ := pgtest.Schema(t)
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := postgres.Open(ctx, postgres.Options{DSN: dsn, Region: "us-east-1", AccountID: account, SweepInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := postgres.OpenKV(ctx, postgres.Options{DSN: dsn})
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kv.Close() }) // after the env's own cleanup
	var broker tidemq.Broker = b
	if wrap != nil {
		broker = wrap(b)
	}
	e := newEnvOn(t, broker, kv, opt)
	e.postgres = true
	return e
}

// onBothStores runs check on the embedded store and on PostgreSQL, as
// subtests named after them.
func onBothStores(t *testing.T, check func(t *testing.T, e *env)) {
	t.Run("embedded", func(t *testing.T) { check(t, newEnv(t)) })
	t.Run("postgres", func(t *testing.T) { check(t, pgEnv(t, nil, nil)) })
}

// onBothStoresWith is onBothStores for checks that set the topic service's
// options (a fake clock): check opens its env with open.
func onBothStoresWith(t *testing.T, check func(t *testing.T, open func(func(*sns.Options)) *env)) {
	t.Run("embedded", func(t *testing.T) {
		check(t, func(opt func(*sns.Options)) *env { return newEnvWith(t, opt) })
	})
	t.Run("postgres", func(t *testing.T) {
		check(t, func(opt func(*sns.Options)) *env { return pgEnv(t, opt, nil) })
	})
}

// TestOnPostgres runs the checks whose behaviour goes through the broker or
// the topic service's store (storeChecks) with both on PostgreSQL, as
// `tidemq serve --store postgres://…` runs them: the two stores are one
// product.
func TestOnPostgres(t *testing.T) {
	names := make([]string, 0, len(storeChecks))
	for name := range storeChecks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { storeChecks[name](t, pgEnv(t, nil, nil)) })
	}
}

// togetherCounter counts the sends to several queues at once that the
// broker under it took (SendToQueues without an error): the publish then
// took no other path.
type togetherCounter struct {
	tidemq.Broker
	taken atomic.Int64
}

func (b *togetherCounter) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	res, err := tidemq.SendToQueues(ctx, b.Broker, ps)
	if err == nil {
		b.taken.Add(1)
	}
	return res, err
}

// TestFanOutInOneWriteOnPostgres: on PostgreSQL too, a standard topic's
// fan-out to SQS queues is one write of the broker (SendToQueues), not an
// outbox record and a SendMessage per queue, and every queue gets its copy
// once.
func TestFanOutInOneWriteOnPostgres(t *testing.T) {
	counter := &togetherCounter{}
	e := pgEnv(t, nil, func(b tidemq.Broker) tidemq.Broker { counter.Broker = b; return counter })
	topic := e.topic("fan", nil)
	var urls []string
	for i := 1; i <= 3; i++ {
		u, arn := e.queue(fmt.Sprintf("fan-%d", i), nil)
		urls = append(urls, u)
		e.subscribe(topic, arn, nil)
	}
	if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")}); err != nil {
		t.Fatal(err)
	}
	if n := counter.taken.Load(); n != 1 {
		t.Errorf("a fan-out to three queues was %d sends to several queues, want 1 (else it took the recorded path)", n)
	}
	for _, u := range urls {
		if n := e.decodeEnvelope(e.onlyBody(u)); n["Message"] != "m" {
			t.Errorf("%s got %v", u, n["Message"])
		}
	}
}
