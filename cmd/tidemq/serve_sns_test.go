package main

import (
	"context"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/metrics"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/pebble"
)

// refusingBroker refuses every send for a server-side reason, so that a
// publish stays in the outbox.
type refusingBroker struct{ tidemq.Broker }

func (refusingBroker) SendMessages(context.Context, tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	return nil, tidemq.Errorf(tidemq.ErrServiceUnavailable, "down")
}

// openPebble opens the one store of a data directory, as serve does.
func openPebble(t *testing.T, dir string) storage.Store {
	t.Helper()
	st, err := pebble.Open(dir, pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// serve keeps the SNS outbox in the one store of the data directory: a
// publish not yet delivered at Close is there at the next start. No
// DATA_DIR/sns is made.
func TestOpenTopicsOutboxIsDurable(t *testing.T) {
	o := &serveOptions{dataDir: t.TempDir(), listen: "127.0.0.1:9324", region: "us-east-1", accountID: "000000000000"}
	log := slog.New(slog.DiscardHandler)
	topics, err := openTopics(refusingBroker{}, openPebble(t, o.dataDir), o, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	topic, err := topics.CreateTopic(context.Background(), topicstore.CreateTopicParams{Name: "t", Attributes: nil, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topics.Subscribe(context.Background(), topicstore.SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := topics.Publish(context.Background(), topicstore.PublishParams{TopicARN: topic.ARN, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := topics.Close(); err != nil { // closes the store too
		t.Fatal(err)
	}
	if _, err := os.Stat(legacySNSDir(o)); !os.IsNotExist(err) {
		t.Fatalf("%s: %v", legacySNSDir(o), err)
	}
	topics, err = openTopics(refusingBroker{}, openPebble(t, o.dataDir), o, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	defer topics.Close()
	if st := topics.Stats(); st.Recovered != 1 {
		t.Fatalf("stats after a restart = %+v", st)
	}
}

// The data directory of a release that kept the SNS state in DATA_DIR/sns
// (sns/testdata/legacy: its files, and its outbox store written back into
// Pebble) is imported at the first start: the publish left in the old
// outbox reaches its queues, and topics, subscriptions and the signing key
// are in the one store from then on, the next start importing nothing.
func TestOpenTopicsImportsAnOlderDataDir(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	o := &serveOptions{dataDir: t.TempDir(), listen: "127.0.0.1:9324", region: "us-east-1", accountID: "000000000000"}
	fixture := filepath.Join("..", "..", "sns", "testdata", "legacy")
	old := legacySNSDir(o)
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sns-topics.json", "sns-signing.pem"} {
		b, err := os.ReadFile(filepath.Join(fixture, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(old, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outbox := openPebble(t, filepath.Join(old, topicstore.LegacyOutboxDir))
	loadDump(t, outbox, filepath.Join(fixture, "outbox.kv"))
	if err := outbox.Close(); err != nil {
		t.Fatal(err)
	}
	// The queues, as the older release's engine kept them.
	store := openPebble(t, o.dataDir)
	eng, err := engine.Open(engine.Options{Store: store, SweepInterval: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"orders-q", "audit"} {
		if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q}); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	start := func() (*engine.Engine, *topicstore.Service) {
		t.Helper()
		shared := storage.Share(openPebble(t, o.dataDir))
		eng, err := engine.Open(engine.Options{Store: shared, SweepInterval: -1, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		topics, err := openTopics(eng, shared.Share(), o, nil, log)
		if err != nil {
			t.Fatal(err)
		}
		return eng, topics
	}
	eng, topics := start()
	if st := topics.Stats(); st.Recovered != 2 || st.Delivered != 2 {
		t.Errorf("stats after the import = %+v", st)
	}
	for q, want := range map[string]string{"orders-q": "order 1", "audit": `"Message" : "order 1"`} {
		ms, err := eng.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: q, MaxNumberOfMessages: new(10)})
		if err != nil || len(ms) != 1 || !strings.Contains(ms[0].Body, want) {
			t.Errorf("queue %s: %v %v", q, ms, err)
		}
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", old, err)
	}
	if _, err := os.Stat(filepath.Join(old+".imported", topicstore.LegacyOutboxDir)); err != nil {
		t.Errorf("the old outbox was not moved aside: %v", err)
	}
	cert := string(topics.CertificatePEM())
	if pemFile, _ := os.ReadFile(filepath.Join(fixture, "sns-signing.pem")); !strings.HasSuffix(string(pemFile), cert) {
		t.Errorf("the certificate is not the old one:\n%s", cert)
	}
	topicsBefore := topics.ListTopics(context.Background())
	if len(topicsBefore) != 2 {
		t.Errorf("topics after the import: %+v", topicsBefore)
	}
	if err := topics.Close(); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	eng, topics = start()
	defer eng.Close()
	defer topics.Close()
	if st := topics.Stats(); st.Recovered != 0 {
		t.Errorf("stats at the next start = %+v", st)
	}
	if got := topics.ListTopics(context.Background()); len(got) != len(topicsBefore) || string(topics.CertificatePEM()) != cert {
		t.Errorf("at the next start: topics %+v, certificate the same: %v", got, string(topics.CertificatePEM()) == cert)
	}
	if _, err := os.Stat(old + ".imported-2"); !os.IsNotExist(err) {
		t.Errorf("a second import: %v", err)
	}
}

// loadDump writes a dump of "hex(key) hex(value)" lines into st.
func loadDump(t *testing.T, st storage.Store, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	batch := st.NewBatch()
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		kb, err1 := hex.DecodeString(k)
		vb, err2 := hex.DecodeString(v)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad line %q", path, line)
		}
		batch.Set(kb, vb)
	}
	d, err := batch.Commit()
	if err == nil {
		err = d.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// /metrics shows the topic service's delivery counters.
func TestTopicMetrics(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	o := &serveOptions{inMemory: true, listen: "127.0.0.1:9324", region: "us-east-1", accountID: "000000000000"}
	topics, err := openTopics(eng, mem.New(), o, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer topics.Close()
	m := metrics.New(metrics.Options{NoRuntime: true})
	m.RegisterTopics(topics.Stats)

	if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		t.Fatal(err)
	}
	topic, err := topics.CreateTopic(context.Background(), topicstore.CreateTopicParams{Name: "t.fifo", Attributes: map[string]string{"FifoTopic": "true"}, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"q.fifo", "gone.fifo"} {
		if _, err := topics.Subscribe(context.Background(), topicstore.SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:" + q}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b", "a"} {
		in := topicstore.PublishParams{TopicARN: topic.ARN, Message: "m", MessageGroupID: "g", MessageDeduplicationID: id}
		if _, err := topics.Publish(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	expected := `
# HELP tidemq_sns_deliveries_total SNS deliveries (one per matching subscription of a publish) that ended, by result: delivered, dead_lettered, undeliverable (no RedrivePolicy), lost (the dead-letter queue refused it) or unsubscribed.
# TYPE tidemq_sns_deliveries_total counter
tidemq_sns_deliveries_total{result="dead_lettered"} 0
tidemq_sns_deliveries_total{result="delivered"} 2
tidemq_sns_deliveries_total{result="lost"} 0
tidemq_sns_deliveries_total{result="undeliverable"} 2
tidemq_sns_deliveries_total{result="unsubscribed"} 0
# HELP tidemq_sns_publishes_deduplicated_total FIFO topic publishes answered from the deduplication window and delivered to no one.
# TYPE tidemq_sns_publishes_deduplicated_total counter
tidemq_sns_publishes_deduplicated_total 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(expected),
		"tidemq_sns_deliveries_total", "tidemq_sns_publishes_deduplicated_total"); err != nil {
		t.Fatal(err)
	}
}
