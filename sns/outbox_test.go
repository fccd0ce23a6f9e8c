package sns

import (
	"context"
	"go/parser"
	"go/token"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// The service keeps no storage technology: main opens the store and
// injects it. Only the in-memory store (the default without a Store) is
// imported.
func TestNoStorageTechnology(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/tidemq/tidemq/storage/") && path != "github.com/tidemq/tidemq/storage/mem" {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}

// outboxLen counts the outbox's records and deliveries in st.
func outboxLen(t *testing.T, st storage.Store) int {
	t.Helper()
	n := 0
	for _, p := range []string{prefixRecord, prefixDelivery} {
		if err := st.Scan([]byte(Namespace+p), func(_, _ []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// keys lists the keys of st.
func keys(t *testing.T, st storage.Store) map[string]string {
	t.Helper()
	m := map[string]string{}
	if err := st.Scan(nil, func(k, v []byte) error { m[string(k)] = string(v); return nil }); err != nil {
		t.Fatal(err)
	}
	return m
}

// The service keeps everything in the store it is given, under Namespace
// only, beside whatever else the store holds (the engine's keys, in
// tidemq serve): topics, subscriptions, the signing key, the outbox and
// the deduplication entries all come back from it after a restart.
func TestStateIsInTheStoreUnderItsNamespace(t *testing.T) {
	st := mem.New() // Close keeps the data: the next Open reads it
	b := st.NewBatch()
	others := map[string]string{"n": "1", "k": "secret", "q/orders": "{}", "s/\x00\x01": "state", "snt/": "x", "sns": "y"}
	for k, v := range others {
		b.Set([]byte(k), []byte(v))
	}
	if err := storage.CommitSync(b); err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	broker := &fakeBroker{failDLQ: -1} // deliveries to "dlq" fail and are retried, on clk
	o := Options{Broker: broker, Store: st, Clock: clk, Logger: slog.New(slog.DiscardHandler)}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	std, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "std", Attributes: map[string]string{"DisplayName": "Std"}, Tags: map[string]string{"team": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: std.ARN, Protocol: "sqs", Endpoint: testQueueARN + "dlq"})
	if err != nil {
		t.Fatal(err)
	}
	fifo, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "f.fifo", Attributes: map[string]string{"FifoTopic": "true"}, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Publish(ctx, PublishParams{TopicARN: std.ARN, Message: "pending"}); err != nil {
		t.Fatal(err)
	}
	dedup := PublishParams{TopicARN: fifo.ARN, Message: "m", MessageGroupID: "g", MessageDeduplicationID: "d"}
	first, err := s.Publish(ctx, dedup)
	if err != nil {
		t.Fatal(err)
	}
	cert := string(s.CertificatePEM())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	all := keys(t, st)
	for k, v := range others {
		if all[k] != v {
			t.Errorf("key %q outside the namespace is %q, want %q", k, all[k], v)
		}
		delete(all, k)
	}
	want := []string{Namespace + prefixTopic + std.ARN, Namespace + prefixTopic + fifo.ARN, Namespace + prefixSubscription + sub.ARN,
		Namespace + keySigning, string(Namespace + string(recordKey(1))), string(Namespace + string(deliveryKey(1, 0))),
		Namespace + prefixFIFOSequence + fifo.ARN}
	for _, k := range want {
		if _, ok := all[k]; !ok {
			t.Errorf("no key %q", k)
		}
	}
	dedupKeys, byKey := 0, 0
	for k := range all {
		if !strings.HasPrefix(k, Namespace) {
			t.Errorf("key %q is outside the namespace", k)
		}
		if strings.HasPrefix(k, Namespace+prefixDedup) {
			dedupKeys++
		}
		if strings.HasPrefix(k, Namespace+prefixDedupByKey) {
			byKey++
		}
	}
	if dedupKeys != 1 || byKey != 1 || len(all) != len(want)+2 {
		t.Errorf("the namespace holds %d keys (%d dedup entries, %d by key), want %d", len(all), dedupKeys, byKey, len(want)+2)
	}

	broker.mu.Lock()
	broker.failDLQ = 0
	broker.mu.Unlock()
	s, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.ListTopics(context.Background()); len(got) != 2 || got[1].ARN != std.ARN || got[1].Attributes["DisplayName"] != "Std" || got[1].Tags["team"] != "a" {
		t.Errorf("topics after a restart: %+v", got)
	}
	if got, err := s.ListSubscriptions(context.Background(), ListSubscriptionsParams{TopicARN: std.ARN}); err != nil || len(got) != 1 || got[0].ARN != sub.ARN {
		t.Errorf("subscriptions after a restart: %+v %v", got, err)
	}
	if string(s.CertificatePEM()) != cert {
		t.Error("the signing certificate changed across a restart")
	}
	if st := s.Stats(); st.Recovered != 1 || broker.count("dlq") != 1 {
		t.Errorf("after a restart: stats %+v, the pending publish was delivered %d times", st, broker.count("dlq"))
	}
	if again, err := s.Publish(ctx, dedup); err != nil || *again != *first {
		t.Errorf("a duplicate after a restart: %+v %v, want %+v", again, err, first)
	}
	waitFor(t, "an empty outbox", func() bool { return outboxLen(t, st) == 0 })
}
