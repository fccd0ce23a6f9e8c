package authz

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
)

// The cost of one decision on the request path: the principal's policy,
// the queue's policy read through QueuePolicy (here a map; the broker's
// GetQueueAttributes in the server) and parsed from the cache.
func BenchmarkAuthorize(b *testing.B) {
	t := &testing.T{}
	policies := map[string]string{"a-in": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"222222222222"},"Action":"sqs:SendMessage"}]}`}
	a, _ := newAuthorizer(t, policies)
	r := httptest.NewRequest("POST", "/", nil)
	for _, c := range []struct{ name, key, queue string }{
		{"team-no-queue-policy", "AKIDA", "a-orders"},
		{"team-with-queue-policy", "AKIDA", "a-in"},
		{"root", "AKIDOPS", "a-in"},
	} {
		arn := tidemq.QueueARN("us-east-1", account, c.queue)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Authorize(r, c.key, "sqs:SendMessage", arn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The cost of a decision on a topic: its policy (AWS's default one, here
// from a map; the topic service's memory in the server) parsed from the
// cache, and the queue policy cache's hit beside a read on every call.
func BenchmarkAuthorizeTopicAndCachedQueue(b *testing.B) {
	t := &testing.T{}
	a, _ := newAuthorizer(t, map[string]string{"a-in": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"222222222222"},"Action":"sqs:SendMessage"}]}`})
	topic := "arn:aws:sns:us-east-1:" + account + ":a-topic"
	a.TopicPolicy = func(context.Context, string) (string, error) { return defaultTopicPolicy(topic), nil }
	r := httptest.NewRequest("POST", "/", nil)
	b.Run("topic-default-policy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = a.Allowed(r, "AKIDA", "sns:Publish", topic)
		}
	})
	arn := tidemq.QueueARN("us-east-1", account, "a-in")
	for _, ttl := range []time.Duration{0, time.Second} {
		a.QueuePolicyTTL = ttl
		b.Run("queue-policy-ttl-"+ttl.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Authorize(r, "AKIDA", "sqs:SendMessage", arn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
