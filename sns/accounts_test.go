package sns

import (
	"context"
	"log/slog"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage/mem"
)

// Topics per account: the same name in two accounts is two topics, each
// with its account in the ARN and as Owner; a subscription into another
// account's queue delivers to that account's queue (the broker's
// "<account>:<name>"); a subscription's dead-letter queue is of the
// topic's account.
func TestTopicsPerAccount(t *testing.T) {
	const partner = "111122223333"
	broker := &fakeBroker{}
	// Cross-account subscriptions exist only with access control, which
	// decides each delivery (this one lets every delivery through).
	allow := func(context.Context, string, string) error { return nil }
	s, err := Open(Options{Broker: broker, Store: mem.New(), Logger: slog.New(slog.DiscardHandler), DeliveryCheck: allow})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	ours, err := s.CreateTopic(ctx, CreateTopicParams{Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := s.CreateTopic(ctx, CreateTopicParams{Name: "events", Account: partner})
	if err != nil {
		t.Fatal(err)
	}
	if ours.ARN != "arn:aws:sns:us-east-1:000000000000:events" || theirs.ARN != "arn:aws:sns:us-east-1:"+partner+":events" {
		t.Fatalf("ARNs %s and %s", ours.ARN, theirs.ARN)
	}
	if _, err := s.CreateTopic(ctx, CreateTopicParams{Name: "x", Account: "12"}); !tidemq.HasCode(err, tidemq.ErrSNSInvalidParameter) {
		t.Fatalf("an account that is not 12 digits: %v", err)
	}
	attrs, err := s.GetTopicAttributes(ctx, GetTopicAttributesParams{TopicARN: theirs.ARN})
	if err != nil || attrs["Owner"] != partner {
		t.Fatalf("the partner's topic's Owner: %v %v", attrs["Owner"], err)
	}
	if len(s.ListTopics(ctx)) != 2 {
		t.Fatalf("topics %v, want two", s.ListTopics(ctx))
	}
	// The partner's topic into the partner's queue and into ours.
	for _, q := range []string{"arn:aws:sqs:us-east-1:" + partner + ":inbox", "arn:aws:sqs:us-east-1:000000000000:inbox"} {
		if _, err := s.Subscribe(ctx, SubscribeParams{TopicARN: theirs.ARN, Protocol: "sqs", Endpoint: q}); err != nil {
			t.Fatalf("Subscribe %s: %v", q, err)
		}
	}
	if _, err := s.Publish(ctx, PublishParams{TopicARN: theirs.ARN, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both deliveries", func() bool { return broker.count(partner+":inbox") == 1 && broker.count("inbox") == 1 })
	// A dead-letter queue of the topic's account is accepted, of another refused.
	dlq := func(account string) map[string]string {
		return map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:` + account + `:dlq"}`}
	}
	if _, err := s.Subscribe(ctx, SubscribeParams{TopicARN: theirs.ARN, Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:" + partner + ":a", Attributes: dlq(partner)}); err != nil {
		t.Fatalf("a DLQ of the topic's account: %v", err)
	}
	if _, err := s.Subscribe(ctx, SubscribeParams{TopicARN: theirs.ARN, Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:" + partner + ":b", Attributes: dlq("000000000000")}); !tidemq.HasCode(err, tidemq.ErrSNSInvalidParameter) {
		t.Fatalf("a DLQ of another account: %v", err)
	}
}

// Without access control (no DeliveryCheck, as without --auth) nothing
// could ever let a topic deliver into another account's queue: such an
// endpoint is refused at Subscribe, as before accounts, not accepted to
// fail every delivery.
func TestSubscribeAnotherAccountsQueueWithoutAccessControl(t *testing.T) {
	s, err := Open(Options{Broker: &fakeBroker{}, Store: mem.New(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	topic, err := s.CreateTopic(ctx, CreateTopicParams{Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe(ctx, SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:111122223333:inbox"}); !tidemq.HasCode(err, tidemq.ErrSNSInvalidParameter) {
		t.Fatalf("a queue of another account without access control: %v, want InvalidParameter", err)
	}
	if _, err := s.Subscribe(ctx, SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:inbox"}); err != nil {
		t.Fatalf("a queue of the topic's account: %v", err)
	}
}
