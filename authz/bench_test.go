package authz

import (
	"net/http/httptest"
	"testing"

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
