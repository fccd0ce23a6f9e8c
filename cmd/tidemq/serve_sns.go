package main

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/postgres"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

// openTopics opens the SNS topic service of `tidemq serve` on store, the
// one store it shares with the engine (in memory with --in-memory): topics,
// subscriptions, the signing key and the publish outbox are kept there,
// under sns/. The service closes store. At the first start on the data
// directory of a release that kept them in DATA_DIR/sns (files, and the
// outbox in a Pebble store of its own), they are imported first and that
// directory is moved aside (see sns.ImportFiles). Publishes left in the
// outbox by a crash are delivered before it returns. SubscribeURLs sent to
// HTTP/HTTPS endpoints use --public-url or the request's host;
// subscriptions made without a request (a --config file) fall back to the
// --listen address.
//
// With cl (--store postgres) store is shared with the other nodes: records
// name this node and take ids from a PostgreSQL sequence, topics are
// reloaded every --cluster-reload, and the outbox is redelivered by the
// leader only (cluster.lead).
func openTopics(broker tidemq.Broker, store storage.Store, o *serveOptions, cl *cluster, log *slog.Logger) (*topicstore.Service, error) {
	public := o.publicURL
	if public == "" {
		public = "http://" + o.listen
	}
	if !o.inMemory && cl == nil {
		openOutbox := func(path string) (storage.Store, error) { return pebble.Open(path, pebble.Options{Logger: log}) }
		if err := topicstore.ImportFiles(store, legacySNSDir(o), openOutbox, log); err != nil {
			store.Close()
			return nil, err
		}
	}
	signing, serr := topicstore.ParseSignMode(o.snsSign)
	if serr != nil {
		store.Close()
		return nil, fmt.Errorf("--sns-sign: %w", serr)
	}
	so := topicstore.Options{
		Broker: broker, Region: o.region, AccountID: o.accountID, Logger: log,
		PublicURL: public, Store: store, Signing: signing, DeliveryCheck: o.access.deliveryCheck(),
	}
	if cl == nil {
		return topicstore.Open(so)
	}
	so.NodeID, so.RecordIDs, so.Reload = cl.node, postgres.RecordIDs(cl.pool), o.cluster.reload
	var s *topicstore.Service
	opened := false
	err := cl.exclusively("sns-open", func() (err error) {
		opened = true
		s, err = topicstore.Open(so) // closes store if it fails
		return err
	})
	if err != nil {
		if s != nil {
			s.Close()
		} else if !opened {
			store.Close()
		}
		return nil, err
	}
	return s, nil
}

// legacySNSDir is where releases before the one store kept the SNS state:
// "sns" in the data directory.
func legacySNSDir(o *serveOptions) string { return filepath.Join(o.dataDir, "sns") }
