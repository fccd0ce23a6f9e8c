package sns

import (
	"testing"
	"time"

	"github.com/tidemq/tidemq/storage/mem"
)

// slowReader is a registry whose ReadTopic waits for release once it has
// said it started (a round trip to a far database).
type slowReader struct {
	kvState
	started, release chan struct{}
}

func (r slowReader) ReadTopic(arn string) (*Topic, []*Subscription, error) {
	r.started <- struct{}{}
	<-r.release
	return r.kvState.ReadTopic(arn)
}

func sharedStore(t *testing.T) (*store, kvState, slowReader) {
	t.Helper()
	kv := newKVState(mem.New())
	slow := slowReader{kvState: kv, started: make(chan struct{}), release: make(chan struct{})}
	s, err := openStore(slow)
	if err != nil {
		t.Fatal(err)
	}
	s.shared = true
	return s, kv, slow
}

// A miss in a shared registry reads the registry without the store's
// lock: another call is not held up behind that read (a client asking
// for a topic that does not exist, in a loop, held up every other).
func TestTopicMissHoldsUpNoOtherCall(t *testing.T) {
	s, _, slow := sharedStore(t)
	s.mu.Lock()
	s.applyMemLocked(RegistryChange{PutTopics: []*Topic{{ARN: "arn:here"}}})
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, ok, err := s.readTopic("arn:nope")
		if ok {
			t.Error("a topic that exists nowhere was found")
		}
		done <- err
	}()
	<-slow.started
	got := make(chan bool, 1)
	go func() { _, ok := s.getTopic("arn:here"); got <- ok }()
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("the topic in memory was not found")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a read of another topic waited for the miss's registry read")
	}
	close(slow.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A topic read from the registry is not copied into memory over a change
// this node made meanwhile: deleted here while the read was on its way,
// it stays deleted.
func TestTopicMissDoesNotUndoAChangeMadeMeanwhile(t *testing.T) {
	s, kv, slow := sharedStore(t)
	arn := "arn:aws:sns:us-east-1:000000000000:t"
	if err := kv.UpdateRegistry(func(RegistryView) (RegistryChange, error) {
		return RegistryChange{PutTopics: []*Topic{{ARN: arn}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	type res struct {
		ok  bool
		err error
	}
	done := make(chan res, 1)
	go func() { _, ok, err := s.readTopic(arn); done <- res{ok, err} }()
	<-slow.started // the read is on its way; now this node deletes the topic
	s.mu.Lock()
	if err := s.updateLocked(func(RegistryView, *RegistryChange) (RegistryChange, error) {
		return RegistryChange{DeleteTopics: []string{arn}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	s.mu.Unlock()
	close(slow.release) // the first read returns the topic as it was
	go func() { <-slow.started }()
	r := <-done
	if r.err != nil || r.ok {
		t.Fatalf("found %v (%v) after this node deleted it", r.ok, r.err)
	}
	if _, ok := s.getTopic(arn); ok {
		t.Fatal("the deleted topic is back in memory")
	}
}
