package sns

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// poisonStore fails the commit of every batch that writes an outbox record
// holding poison: a store that cannot record one publish of a batch.
type poisonStore struct {
	storage.Store
	poison string
	failed atomic.Int64
}

func (p *poisonStore) NewBatch() storage.Batch { return &poisonBatch{Batch: p.Store.NewBatch(), st: p} }

type poisonBatch struct {
	storage.Batch
	st   *poisonStore
	fail bool
}

func (b *poisonBatch) Set(k, v []byte) {
	if strings.HasPrefix(string(k), Namespace+prefixRecord) && strings.Contains(string(v), b.st.poison) {
		b.fail = true
	}
	b.Batch.Set(k, v)
}

func (b *poisonBatch) Commit() (storage.Durable, error) {
	if b.fail {
		b.st.failed.Add(1)
		return nil, errors.New("injected: the disk refused the write")
	}
	return b.Batch.Commit()
}

// TestPublishBatchDeliversRecordedEntriesWhenADirectOneFails: in one
// PublishBatch, entry "fan" goes to two queues (recorded in the outbox
// first) and entry "single" to one queue only (delivered directly, recorded
// only if that fails). When the direct delivery fails and so does the
// write that would record it, the request fails; but "fan" is already in
// the outbox under this node, which no other node redelivers while it
// lives, so it must be delivered now, not at the next restart.
func TestPublishBatchDeliversRecordedEntriesWhenADirectOneFails(t *testing.T) {
	st := &poisonStore{Store: mem.New(), poison: "single-entry"}
	broker := &fakeBroker{}
	s, err := Open(Options{Broker: broker, Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topic, err := s.CreateTopic("t", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Every message goes to "busy" (which fails), only fan-outs to "b".
	if _, err := s.Subscribe(topic.ARN, "sqs", testQueueARN+"busy", map[string]string{"RawMessageDelivery": "true"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe(topic.ARN, "sqs", testQueueARN+"b", map[string]string{
		"RawMessageDelivery": "true", "FilterPolicy": `{"fan":["yes"]}`}); err != nil {
		t.Fatal(err)
	}
	attr := func(v string) map[string]Attribute {
		return map[string]Attribute{"fan": {DataType: "String", StringValue: v}}
	}
	_, err = s.PublishBatch(context.Background(), topic.ARN, []PublishBatchEntry{
		{ID: "fan", PublishInput: PublishInput{Message: "fan-entry", Attributes: attr("yes")}},
		{ID: "single", PublishInput: PublishInput{Message: "single-entry", Attributes: attr("no")}},
	})
	if err == nil {
		t.Fatal("PublishBatch succeeded although its direct entry could neither be delivered nor recorded")
	}
	if n := st.failed.Load(); n != 1 {
		t.Fatalf("%d commits failed, want the one recording the direct entry", n)
	}
	// Before the fix the request returned at once and "fan" sat in the
	// outbox until a restart.
	waitFor(t, "the recorded entry in queue b", func() bool { return broker.count("b") == 1 })
	broker.mu.Lock()
	got := broker.sent["b"][0]
	broker.mu.Unlock()
	if got != "fan-entry" {
		t.Errorf("queue b got %q, want the fan-out entry", got)
	}
}

// orderStore notes in log when a batch writing an outbox record is
// committed and when it is durable.
type orderStore struct {
	storage.Store
	log *eventLog
}

type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (o *orderStore) NewBatch() storage.Batch {
	return &orderBatch{Batch: o.Store.NewBatch(), log: o.log}
}

type orderBatch struct {
	storage.Batch
	log    *eventLog
	record bool
}

func (b *orderBatch) Set(k, v []byte) {
	b.record = b.record || strings.HasPrefix(string(k), Namespace+prefixRecord)
	b.Batch.Set(k, v)
}

func (b *orderBatch) Commit() (storage.Durable, error) {
	d, err := b.Batch.Commit()
	if err == nil && b.record {
		b.log.add("record committed")
		return orderDurable{d, b.log}, nil
	}
	return d, err
}

type orderDurable struct {
	storage.Durable
	log *eventLog
}

func (d orderDurable) Wait() error {
	err := d.Durable.Wait()
	d.log.add("record durable")
	return err
}

// logBroker notes each delivery in log.
type logBroker struct {
	tidemq.Broker
	log *eventLog
}

func (b *logBroker) SendMessages(_ context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	res := make([]tidemq.SendResult, len(p.Entries))
	for i, e := range p.Entries {
		b.log.add("delivered to " + p.Queue)
		res[i] = tidemq.SendResult{ID: e.ID, MessageID: "m"}
	}
	return res, nil
}

// TestFanOutDeliversAfterItsRecordIsCommitted: a fan-out's deliveries may
// start while its outbox record's fsync runs, but never before the record
// is committed to the store (in the write-ahead log ahead of them, so
// that a delivery durable in its queue implies the record durable), and
// the publish is answered only once the record is durable.
func TestFanOutDeliversAfterItsRecordIsCommitted(t *testing.T) {
	log := &eventLog{}
	s, err := Open(Options{Broker: &logBroker{log: log}, Store: &orderStore{Store: mem.New(), log: log}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topic, _ := s.CreateTopic("t", nil, nil)
	for _, q := range []string{"a", "b", "c"} {
		if _, err := s.Subscribe(topic.ARN, "sqs", testQueueARN+q, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Publish(context.Background(), PublishInput{TopicARN: topic.ARN, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	events := append([]string(nil), log.events...)
	log.mu.Unlock()
	if len(events) != 5 || events[0] != "record committed" || !slices.Contains(events, "record durable") {
		t.Fatalf("events %q: want the record committed first, three deliveries and the record durable before the answer", events)
	}
}
