package sns

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

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
	topic, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "t", Attributes: nil, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	// Every message goes to "busy" (which fails), only fan-outs to "b".
	if _, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + "busy", Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + "b", Attributes: map[string]string{
		"RawMessageDelivery": "true", "FilterPolicy": `{"fan":["yes"]}`}}); err != nil {
		t.Fatal(err)
	}
	attr := func(v string) map[string]Attribute {
		return map[string]Attribute{"fan": {DataType: "String", StringValue: v}}
	}
	_, err = s.PublishBatch(context.Background(), PublishBatchParams{TopicARN: topic.ARN, Entries: []PublishBatchEntry{
		{ID: "fan", PublishParams: PublishParams{Message: "fan-entry", Attributes: attr("yes")}},
		{ID: "single", PublishParams: PublishParams{Message: "single-entry", Attributes: attr("no")}},
	}})
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
