package main

import (
	"log/slog"

	"github.com/tidemq/tidemq"
	topicstore "github.com/tidemq/tidemq/sns"
)

// openTopics opens the SNS topic service of `tidemq serve`: its topic store,
// signing key and publish outbox in DATA_DIR/sns (in memory with
// --in-memory). Publishes left in the outbox by a crash are delivered
// before it returns. SubscribeURLs sent to HTTP/HTTPS endpoints use
// --public-url or the request's host; subscriptions made without a request
// (a --config file) fall back to the --listen address.
func openTopics(broker tidemq.Broker, o *serveOptions, log *slog.Logger) (*topicstore.Service, error) {
	public := o.publicURL
	if public == "" {
		public = "http://" + o.listen
	}
	return topicstore.Open(topicstore.Options{
		Broker: broker, Region: o.region, AccountID: o.accountID, Dir: snsDir(o), Logger: log,
		PublicURL: public,
	})
}
