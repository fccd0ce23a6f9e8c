package sns

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// testdata/legacy is the SNS state that the release before the one store
// wrote (see gen.go there), at legacyNow: topics orders and events.fifo,
// SQS subscriptions to queues orders-q, audit (filtered) and events.fifo,
// a pending HTTP subscription and an unsubscribed one, a publish to
// orders still in the outbox for orders-q and audit, a FIFO
// deduplication entry, and one in the first release's layout.
const legacyFixture = "testdata/legacy"

var legacyNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// legacyDir lays the fixture out in a new directory as that release left
// it, with the outbox in a store in memory (Pebble in cmd/tidemq's test),
// and returns the directory, the outbox and an openOutbox for ImportFiles.
func legacyDir(t *testing.T) (string, *mem.Store, func(string) (storage.Store, error)) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sns")
	if err := os.MkdirAll(filepath.Join(dir, LegacyOutboxDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{legacyStateFile, legacyKeyFile} {
		b, err := os.ReadFile(filepath.Join(legacyFixture, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outbox := mem.New()
	loadDump(t, outbox, filepath.Join(legacyFixture, "outbox.kv"))
	return dir, outbox, func(path string) (storage.Store, error) {
		if path != filepath.Join(dir, LegacyOutboxDir) {
			t.Errorf("ImportFiles opened the outbox at %s", path)
		}
		return outbox, nil
	}
}

// loadDump writes a dump of "hex(key) hex(value)" lines into st.
func loadDump(t *testing.T, st storage.Store, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := st.NewBatch()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		kb, err1 := hex.DecodeString(k)
		vb, err2 := hex.DecodeString(v)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		b.Set(kb, vb)
	}
	if err := storage.CommitSync(b); err != nil {
		t.Fatal(err)
	}
}

// legacyFile reads a file of the fixture.
func legacyFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(legacyFixture, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An older release's directory is imported whole: the topics, the
// subscriptions (pending and unsubscribed ones too), the signing key, the
// deduplication entries, and the publish left in its outbox, which is
// delivered. The directory is then moved aside, and a directory found
// again later is not imported again.
func TestImportFiles(t *testing.T) {
	dir, oldOutbox, openOutbox := legacyDir(t)
	st := mem.New()
	quiet := slog.New(slog.DiscardHandler)
	if err := ImportFiles(st, dir, openOutbox, quiet); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the old directory is still there: %v", err)
	}
	for _, name := range []string{legacyStateFile, legacyKeyFile, LegacyOutboxDir} {
		if _, err := os.Stat(filepath.Join(dir+".imported", name)); err != nil {
			t.Errorf("not moved aside: %v", err)
		}
	}

	clk := clocktest.New(legacyNow.Add(time.Minute))
	broker := &fakeBroker{}
	o := Options{Broker: broker, Store: st, Clock: clk, Logger: quiet}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	// The publish left in the outbox is delivered, to both its queues.
	if st := s.Stats(); st.Recovered != 2 || st.Delivered != 2 {
		t.Errorf("stats after the import: %+v", st)
	}
	broker.mu.Lock()
	if got := broker.sent["orders-q"]; len(got) != 1 || got[0] != "order 1" {
		t.Errorf("orders-q got %q", got)
	}
	if got := broker.sent["audit"]; len(got) != 1 || !strings.Contains(got[0], `"Message" : "order 1"`) {
		t.Errorf("audit got %q", got)
	}
	broker.mu.Unlock()

	var old Registrations
	if err := json.Unmarshal(legacyFile(t, legacyStateFile), &old); err != nil {
		t.Fatal(err)
	}
	topics := s.ListTopics(context.Background())
	if len(topics) != 2 || topics[1].Name != "orders" || topics[1].Attributes["DisplayName"] != "Orders" || topics[1].Tags["team"] != "crm" ||
		!topics[0].FIFO || topics[0].Attributes["ContentBasedDeduplication"] != "true" {
		t.Errorf("topics: %+v", topics)
	}
	subs, err := s.ListSubscriptions(context.Background(), ListSubscriptionsParams{TopicARN: ""})
	if err != nil || len(subs) != len(old.Subscriptions) {
		t.Fatalf("subscriptions: %+v %v", subs, err)
	}
	for i, sub := range subs { // both in ARN order
		if !reflect.DeepEqual(sub, old.Subscriptions[i]) {
			t.Errorf("subscription %d: %+v, want %+v", i, sub, old.Subscriptions[i])
		}
	}
	// The unsubscribed HTTP subscription's token restores it.
	tomb := old.Unsubscribed[0]
	if got, err := s.ConfirmSubscription(context.Background(), ConfirmSubscriptionParams{TopicARN: tomb.TopicARN, Token: tomb.Token, Anonymous: false, AuthenticateOnUnsubscribe: false}); err != nil || got.ARN != tomb.ARN {
		t.Errorf("restoring the unsubscribed subscription: %+v %v", got, err)
	}
	// The same key: the certificate subscribers fetched still verifies.
	var cert []byte
	for blk, rest := pem.Decode(legacyFile(t, legacyKeyFile)); blk != nil; blk, rest = pem.Decode(rest) {
		if blk.Type == "CERTIFICATE" {
			cert = pem.EncodeToMemory(blk)
		}
	}
	if cert == nil || string(s.CertificatePEM()) != string(cert) {
		t.Errorf("the certificate is not the old one:\n%s", s.CertificatePEM())
	}
	// Both deduplication entries are live.
	var dedup DedupEntry
	_ = oldOutbox.Scan([]byte{'y'}, func(_, v []byte) error { return json.Unmarshal(v, &dedup) })
	ctx := context.Background()
	events := topics[0].ARN
	if got, err := s.Publish(ctx, PublishParams{TopicARN: events, Message: "shipped 1", MessageGroupID: "g"}); err != nil || got.MessageID != dedup.MessageID {
		t.Errorf("a duplicate of the old FIFO publish: %+v %v, want MessageId %s", got, err, dedup.MessageID)
	}
	in := PublishParams{TopicARN: events, Message: "m", MessageGroupID: "g", MessageDeduplicationID: "first-release-dedup"}
	if got, err := s.Publish(ctx, in); err != nil || got.MessageID != "first-release-message" {
		t.Errorf("a duplicate of the first release's entry: %+v %v", got, err)
	}
	if n := broker.count("events.fifo"); n != 0 {
		t.Errorf("events.fifo got %d duplicates", n)
	}
	if err := s.DeleteTopic(context.Background(), DeleteTopicParams{TopicARN: events}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The directory found again (an older release started on the data
	// directory since, or a crash before the move) is moved aside unread.
	dir2, _, openOutbox2 := legacyDir(t)
	if err := os.Rename(dir2, dir); err != nil {
		t.Fatal(err)
	}
	if err := ImportFiles(st, dir, openOutbox2, quiet); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + ".imported-2"); err != nil {
		t.Errorf("not moved aside: %v", err)
	}
	s, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.ListTopics(context.Background()); len(got) != 1 {
		t.Errorf("imported again: %+v", got)
	}
	if st := s.Stats(); st.Recovered != 0 {
		t.Errorf("publishes imported again: %+v", st)
	}
}

// What the store already holds wins over the files, and its publishes
// are kept beside the imported ones.
func TestImportFilesKeepsWhatTheStoreHolds(t *testing.T) {
	st := mem.New()
	quiet := slog.New(slog.DiscardHandler)
	broker := &fakeBroker{failDLQ: -1}
	o := Options{Broker: broker, Store: st, Clock: clocktest.New(legacyNow), Logger: quiet}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "orders", Attributes: map[string]string{"DisplayName": "New"}, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: orders.ARN, Protocol: "sqs", Endpoint: testQueueARN + "dlq"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(context.Background(), PublishParams{TopicARN: orders.ARN, Message: "new"}); err != nil {
		t.Fatal(err)
	}
	cert := string(s.CertificatePEM())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	dir, _, openOutbox := legacyDir(t)
	if err := ImportFiles(st, dir, openOutbox, quiet); err != nil {
		t.Fatal(err)
	}
	broker.mu.Lock()
	broker.failDLQ = 0
	broker.mu.Unlock()
	s, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.ListTopics(context.Background()); len(got) != 2 || got[1].Attributes["DisplayName"] != "New" {
		t.Errorf("topics: %+v", got)
	}
	if string(s.CertificatePEM()) != cert {
		t.Error("the store's signing key was replaced")
	}
	if st := s.Stats(); st.Recovered != 3 || broker.count("dlq") != 1 || broker.count("orders-q") != 1 || broker.count("audit") != 1 {
		t.Errorf("stats %+v; dlq %d, orders-q %d, audit %d", st, broker.count("dlq"), broker.count("orders-q"), broker.count("audit"))
	}
}

// A file that cannot be read stops the import before anything is written
// or moved: the server refuses to start rather than lose it.
func TestImportFilesRefusesABrokenFile(t *testing.T) {
	dir, _, openOutbox := legacyDir(t)
	if err := os.WriteFile(filepath.Join(dir, legacyStateFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := mem.New()
	if err := ImportFiles(st, dir, openOutbox, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), legacyStateFile) {
		t.Fatalf("ImportFiles = %v", err)
	}
	if st.Len() != 0 {
		t.Errorf("the store holds %d keys", st.Len())
	}
	if _, err := os.Stat(filepath.Join(dir, legacyStateFile)); err != nil {
		t.Errorf("the directory was moved: %v", err)
	}
}

// Without a directory there is nothing to import.
func TestImportFilesWithoutADirectory(t *testing.T) {
	st := mem.New()
	if err := ImportFiles(st, filepath.Join(t.TempDir(), "sns"), nil, nil); err != nil || st.Len() != 0 {
		t.Fatalf("ImportFiles = %v, %d keys", err, st.Len())
	}
}
