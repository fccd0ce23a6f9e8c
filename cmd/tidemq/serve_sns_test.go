package main

import (
	"context"
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
	topics, err := openTopics(refusingBroker{}, openPebble(t, o.dataDir), o, log)
	if err != nil {
		t.Fatal(err)
	}
	topic, err := topics.CreateTopic("t", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topics.Subscribe(topic.ARN, "sqs", "arn:aws:sqs:us-east-1:000000000000:q", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := topics.Publish(context.Background(), topicstore.PublishInput{TopicARN: topic.ARN, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := topics.Close(); err != nil { // closes the store too
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(o.dataDir, "sns")); !os.IsNotExist(err) {
		t.Fatalf("DATA_DIR/sns: %v", err)
	}
	topics, err = openTopics(refusingBroker{}, openPebble(t, o.dataDir), o, log)
	if err != nil {
		t.Fatal(err)
	}
	defer topics.Close()
	if st := topics.Stats(); st.Recovered != 1 {
		t.Fatalf("stats after a restart = %+v", st)
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
	topics, err := openTopics(eng, mem.New(), o, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer topics.Close()
	m := metrics.New(metrics.Options{NoRuntime: true})
	m.RegisterTopics(topicMetrics(topics))

	if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		t.Fatal(err)
	}
	topic, err := topics.CreateTopic("t.fifo", map[string]string{"FifoTopic": "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"q.fifo", "gone.fifo"} {
		if _, err := topics.Subscribe(topic.ARN, "sqs", "arn:aws:sqs:us-east-1:000000000000:"+q, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b", "a"} {
		in := topicstore.PublishInput{TopicARN: topic.ARN, Message: "m", MessageGroupID: "g", MessageDeduplicationID: id}
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
