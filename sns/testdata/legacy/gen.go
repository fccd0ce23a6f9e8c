//go:build ignore

// gen writes the SNS state of a data directory as the release before the
// one store wrote it (commit a423f85): DATA_DIR/sns/sns-topics.json,
// DATA_DIR/sns/sns-signing.pem and DATA_DIR/sns/outbox, a Pebble store,
// dumped here to outbox.kv (one "hex(key) hex(value)" line per key, in key
// order) so that the fixture stays small and readable; the tests load the
// dump into a Pebble store at DATA_DIR/sns/outbox again.
//
// It builds against that commit only (sns.Options.Dir and Outbox are
// gone since): run it from a checkout of a423f85 as
//
//	go run ./sns/testdata/legacy/gen.go OUTDIR
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/pebble"
)

// Now is the fixture's clock: FIFO deduplication entries expire 5 minutes
// later, confirmation tokens 48 hours later.
var Now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

const account = "000000000000"

// gate refuses every send (a server-side failure, retried) except to
// events.fifo, so that the publish to orders stays in the outbox.
type gate struct{ tidemq.Broker }

func (g gate) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	if p.Queue != "events.fifo" {
		return nil, tidemq.Errorf(tidemq.ErrServiceUnavailable, "down")
	}
	return g.Broker.SendMessages(ctx, p)
}

func main() {
	out := os.Args[1]
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1, Logger: quiet})
	check(err)
	for _, q := range []struct {
		name  string
		attrs map[string]string
	}{{"orders-q", nil}, {"audit", nil}, {"events.fifo", map[string]string{"FifoQueue": "true"}}} {
		_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q.name, Attributes: q.attrs})
		check(err)
	}
	work := filepath.Join(out, "work")
	snsDir := filepath.Join(work, "sns")
	check(os.MkdirAll(snsDir, 0o755))
	outbox, err := pebble.Open(filepath.Join(snsDir, sns.OutboxDir), pebble.Options{Logger: quiet})
	check(err)
	clk := clocktest.New(Now)
	svc, err := sns.Open(sns.Options{Broker: gate{eng}, Dir: snsDir, Outbox: outbox, Clock: clk, Logger: quiet,
		PublicURL: "http://localhost:9324"})
	check(err)

	orders, err := svc.CreateTopic("orders", map[string]string{"DisplayName": "Orders"}, map[string]string{"team": "crm"})
	check(err)
	events, err := svc.CreateTopic("events.fifo", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"}, nil)
	check(err)
	queue := func(name string) string { return "arn:aws:sqs:us-east-1:" + account + ":" + name }
	_, err = svc.Subscribe(orders.ARN, "sqs", queue("orders-q"), map[string]string{"RawMessageDelivery": "true"})
	check(err)
	_, err = svc.Subscribe(orders.ARN, "sqs", queue("audit"), map[string]string{"FilterPolicy": `{"kind":["audit"]}`})
	check(err)
	_, err = svc.Subscribe(events.ARN, "sqs", queue("events.fifo"), map[string]string{"RawMessageDelivery": "true"})
	check(err)
	// A pending HTTP subscription, and a confirmed one unsubscribed since
	// (its tombstone's token can restore it).
	_, err = svc.SubscribeWith(sns.SubscribeInput{TopicARN: orders.ARN, Protocol: "http", Endpoint: "http://127.0.0.1:9/pending"})
	check(err)
	hook, err := svc.SubscribeWith(sns.SubscribeInput{TopicARN: orders.ARN, Protocol: "http", Endpoint: "http://127.0.0.1:9/gone"})
	check(err)
	_, err = svc.ConfirmSubscription(orders.ARN, hook.Token, false, false)
	check(err)
	check(svc.Unsubscribe(hook.ARN))

	// Delivered at once: a FIFO publish, whose deduplication entry stays.
	_, err = svc.Publish(ctx, sns.PublishInput{TopicARN: events.ARN, Message: "shipped 1", MessageGroupID: "g"})
	check(err)
	// Left in the outbox: both SQS deliveries are refused.
	_, err = svc.Publish(ctx, sns.PublishInput{TopicARN: orders.ARN, Message: "order 1",
		Attributes: map[string]sns.Attribute{"kind": {DataType: "String", StringValue: "audit"}}})
	check(err)
	check(svc.Close())

	// A deduplication entry in the first release's layout ('x' + key), as
	// an outbox written by that release and never opened since holds it.
	outbox, err = pebble.Open(filepath.Join(snsDir, sns.OutboxDir), pebble.Options{Logger: quiet})
	check(err)
	b := outbox.NewBatch()
	v, _ := json.Marshal(map[string]any{"m": "first-release-message", "s": "00000000000000000001", "e": Now.Add(4 * time.Minute).UnixMilli()})
	b.Set([]byte("x"+events.ARN+"\x00first-release-dedup"), v)
	d, err := b.Commit()
	check(err)
	check(d.Wait())
	f, err := os.Create(filepath.Join(out, "outbox.kv"))
	check(err)
	check(outbox.Scan(nil, func(k, v []byte) error {
		_, err := fmt.Fprintf(f, "%s %s\n", hex.EncodeToString(k), hex.EncodeToString(v))
		return err
	}))
	check(f.Close())
	check(outbox.Close())
	check(eng.Close())
	for _, name := range []string{"sns-topics.json", "sns-signing.pem"} {
		check(os.Rename(filepath.Join(snsDir, name), filepath.Join(out, name)))
	}
	check(os.RemoveAll(work))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
