package main

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/metrics"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

// openTopics opens the SNS topic service of `tidemq serve`: its topic store,
// signing key and publish outbox in DATA_DIR/sns (in memory with
// --in-memory). The outbox is a Pebble store of its own in
// DATA_DIR/sns/outbox, opened here and handed to the service, which closes
// it. Publishes left in the outbox by a crash are delivered before it
// returns. SubscribeURLs sent to HTTP/HTTPS endpoints use --public-url or
// the request's host; subscriptions made without a request (a --config
// file) fall back to the --listen address.
func openTopics(broker tidemq.Broker, o *serveOptions, log *slog.Logger) (*topicstore.Service, error) {
	public := o.publicURL
	if public == "" {
		public = "http://" + o.listen
	}
	dir := snsDir(o)
	var outbox storage.Store // in memory with --in-memory
	if dir != "" {
		st, err := pebble.Open(filepath.Join(dir, topicstore.OutboxDir), pebble.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("open the SNS outbox: %w", err)
		}
		outbox = st
	}
	return topicstore.Open(topicstore.Options{
		Broker: broker, Region: o.region, AccountID: o.accountID, Dir: dir, Logger: log,
		PublicURL: public, Outbox: outbox,
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
