package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// SNSScenarios publish to a topic whose SQS subscriptions get the
// envelope (signed, unless the server leaves SQS envelopes unsigned), and
// are run only when named: sns (Publish, one subscription), sns-fanout
// (Publish, ten subscriptions: Result.DeliveriesPerSecond is the fan-out
// rate) and sns-batch (PublishBatch of ten, one subscription). Every
// subscription's queue is drained afterwards (untimed) to check that each
// publish arrived exactly once in each.
var SNSScenarios = []string{"sns", "sns-fanout", "sns-batch"}

// SNSClient is what the SNS scenarios need of an endpoint besides Client.
// RawClient implements it.
type SNSClient interface {
	CreateTopic(ctx context.Context, name string) (string, error)
	DeleteTopic(ctx context.Context, arn string) error
	// QueueARN returns the ARN of the queue at url.
	QueueARN(ctx context.Context, url string) (string, error)
	// Subscribe subscribes the queue to the topic (envelope delivery).
	Subscribe(ctx context.Context, topicARN, queueARN string) error
	// Publish publishes one message with Publish, or several with
	// PublishBatch; a batch with a failed entry is an error.
	Publish(ctx context.Context, topicARN string, msgs []string, batch bool) error
}

// sns measures publishes to a topic with subs SQS subscriptions, batch
// messages per request.
func (b *runner) sns(ctx context.Context, subs, batch int) (Result, error) {
	sc, ok := b.c.(SNSClient)
	if !ok {
		return Result{}, fmt.Errorf("%s: this client does not speak SNS (use the raw client)", b.cfg.Scenario)
	}
	name := fmt.Sprintf("%s-%s-%d", b.cfg.Queue, b.cfg.Scenario, time.Now().UnixNano()%1_000_000_000)
	topic, err := sc.CreateTopic(ctx, name)
	if err != nil {
		return Result{}, fmt.Errorf("create topic %s: %w", name, err)
	}
	defer func() { _ = sc.DeleteTopic(context.Background(), topic) }()
	urls := make([]string, subs)
	leds := make([]*ledger, subs)
	for i := range urls {
		url, cleanup, err := b.createQueue(ctx, fmt.Sprintf("%s%d", b.cfg.Scenario, i), false)
		if err != nil {
			return Result{}, err
		}
		defer cleanup()
		arn, err := sc.QueueARN(ctx, url)
		if err != nil {
			return Result{}, err
		}
		if err := sc.Subscribe(ctx, topic, arn); err != nil {
			return Result{}, fmt.Errorf("subscribe %s: %w", arn, err)
		}
		urls[i], leds[i] = url, newLedger()
	}
	res := b.sendLoop(ctx, batch, func(ids []string) error {
		msgs := make([]string, len(ids))
		for i, id := range ids {
			msgs[i] = body(id, b.cfg.Size)
		}
		err := sc.Publish(ctx, topic, msgs, batch > 1)
		if err == nil {
			for _, l := range leds {
				l.add(ids...)
			}
		}
		return err
	})
	res.Deliveries = res.Messages * int64(subs)
	if res.Elapsed > 0 {
		res.DeliveriesPerSecond = float64(res.Deliveries) / res.Elapsed.Seconds()
	}
	for i, url := range urls {
		if err := b.drain(ctx, url, leds[i], nil); err != nil {
			return res, err
		}
		res.Lost += leds[i].lost()
		res.Duplicates += leds[i].dups
	}
	return res, nil
}

// envelopeMessage returns the Message of an SNS envelope, or "" if b is
// not one.
func envelopeMessage(b string) string {
	var e struct{ Type, Message string }
	if json.Unmarshal([]byte(b), &e) != nil || e.Type != "Notification" {
		return ""
	}
	return e.Message
}

// idOf returns the id a message body starts with; for an SNS envelope,
// that of its Message.
func idOf(b string) string {
	if strings.HasPrefix(b, "{") {
		b = envelopeMessage(b)
	}
	id, _, _ := strings.Cut(b, " ")
	return id
}
