package main

import (
	"log/slog"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/metrics"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage"
)

// openTopics opens the SNS topic service of `tidemq serve` on store, the
// one store it shares with the engine (in memory with --in-memory): topics,
// subscriptions, the signing key and the publish outbox are kept there,
// under sns/. The service closes store. Publishes left in the outbox by a
// crash are delivered before it returns. SubscribeURLs sent to
// HTTP/HTTPS endpoints use --public-url or the request's host;
// subscriptions made without a request (a --config file) fall back to the
// --listen address.
func openTopics(broker tidemq.Broker, store storage.Store, o *serveOptions, log *slog.Logger) (*topicstore.Service, error) {
	public := o.publicURL
	if public == "" {
		public = "http://" + o.listen
	}
	return topicstore.Open(topicstore.Options{
		Broker: broker, Region: o.region, AccountID: o.accountID, Logger: log,
		PublicURL: public, Store: store,
	})
}

// topicMetrics reads the topic service's delivery counters for /metrics.
func topicMetrics(topics *topicstore.Service) func() metrics.TopicStats {
	return func() metrics.TopicStats {
		s := topics.Stats()
		return metrics.TopicStats{Delivered: s.Delivered, DeadLettered: s.DeadLettered, Undeliverable: s.Undeliverable,
			Lost: s.Lost, Unsubscribed: s.Unsubscribed, Retries: s.Retries, Recovered: s.Recovered, Duplicates: s.Duplicates}
	}
}
