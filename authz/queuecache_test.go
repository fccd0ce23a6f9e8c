package authz

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
)

// With QueuePolicyTTL a queue's policy is read once per TTL, not once per
// call; ForgetQueue (the server's on every change of a queue's
// attributes through this node) makes the next call read it again, and a
// queue that does not exist is never remembered.
func TestQueuePolicyCache(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC))
	grant := `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"222222222222"},"Action":"sqs:SendMessage"}]}`
	policies := map[string]string{"a-in": grant}
	reads := map[string]int{}
	a, _ := newAuthorizer(t, nil)
	a.Clock, a.QueuePolicyTTL = clock, time.Second
	a.QueuePolicy = func(_ context.Context, q string) (string, error) {
		reads[q]++
		if q == "a-gone" {
			return "", tidemq.NonExistentQueue()
		}
		return policies[q], nil
	}
	r := httptest.NewRequest("POST", "/", nil)
	arn := tidemq.QueueARN("us-east-1", account, "a-in")
	send := func() error { return a.Authorize(r, "AKIDB", "sqs:SendMessage", arn) }
	for i := 0; i < 5; i++ {
		if err := send(); err != nil {
			t.Fatalf("team B with the grant: %v", err)
		}
	}
	if reads["a-in"] != 1 {
		t.Errorf("%d reads for five calls within the TTL, want 1", reads["a-in"])
	}
	// Revoked on another node: honoured until the TTL ends, not after.
	policies["a-in"] = ""
	clock.Advance(999 * time.Millisecond)
	if err := send(); err != nil {
		t.Errorf("within the TTL: %v", err)
	}
	clock.Advance(time.Millisecond)
	if err := send(); !tidemq.HasCode(err, tidemq.ErrAccessDenied) {
		t.Errorf("after the TTL: %v, want AccessDenied", err)
	}
	// Granted through this node: at once.
	policies["a-in"] = grant
	a.ForgetQueue("a-in")
	if err := send(); err != nil {
		t.Errorf("after ForgetQueue: %v", err)
	}
	policies["a-in"] = ""
	a.ForgetQueue("")
	if err := send(); !tidemq.HasCode(err, tidemq.ErrAccessDenied) {
		t.Errorf("after ForgetQueue of every queue: %v, want AccessDenied", err)
	}
	gone := tidemq.QueueARN("us-east-1", account, "a-gone")
	for i := 0; i < 3; i++ {
		_ = a.Authorize(r, "AKIDA", "sqs:SendMessage", gone)
	}
	if reads["a-gone"] != 3 {
		t.Errorf("a queue that does not exist was read %d times for 3 calls, want 3 (not remembered)", reads["a-gone"])
	}
}

// A read that began before a ForgetQueue does not leave what it read in
// the cache: it may be older than the change.
func TestQueuePolicyCacheForgetDuringRead(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC))
	var q queuePolicies
	text, err := q.get(context.Background(), clock, time.Minute, "x", func(context.Context, string) (string, error) {
		q.mu.Lock() // as ForgetQueue does, while the read is under way
		q.epoch++
		q.mu.Unlock()
		return "old", nil
	})
	if err != nil || text != "old" {
		t.Fatalf("get: %q %v", text, err)
	}
	text, _ = q.get(context.Background(), clock, time.Minute, "x", func(context.Context, string) (string, error) { return "new", nil })
	if text != "new" {
		t.Errorf("a read overtaken by a forget was kept: %q", text)
	}
}
