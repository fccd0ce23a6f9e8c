package frontdoor

import (
	"context"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/tidemq/tidemq"
)

// LargeBody is the size above which a body must take budget before it is
// read. Smaller bodies (nearly every SQS call) never wait: the connection
// cap bounds what they can hold together.
const LargeBody = 64 << 10

// DefaultMaxBodyMemory is the body budget when Config.MaxBodyMemory is 0:
// room for about thirty bodies of the largest legal size at once.
const DefaultMaxBodyMemory = 256 << 20

// budgetWait is how long a request waits for body budget before it is
// answered 503 (SDKs retry that).
const budgetWait = 10 * time.Second

// budget bounds the memory that large request bodies hold at once. A body is
// charged its Content-Length (or the largest allowed body when the length is
// unknown) before any of it is read, so that slow or half-sent bodies cannot
// pile up: the preallocated buffers of 100 half-sent 8 MiB bodies were the
// 800 MiB an attacker could pin before.
type budget struct{ sem *semaphore.Weighted }

func newBudget(n int64) *budget { return &budget{sem: semaphore.NewWeighted(n)} }

// acquire takes budget for r's body. It answers the request itself and
// returns false when no budget frees up in time.
func (b *budget) acquire(w http.ResponseWriter, r *http.Request, maxBody int64) (release func(), ok bool) {
	n := r.ContentLength
	if r.Body == nil || r.Body == http.NoBody || (n >= 0 && n <= LargeBody) {
		return func() {}, true
	}
	if n < 0 || n > maxBody {
		n = maxBody // a larger claim is refused before it is read
	}
	ctx, cancel := context.WithTimeout(r.Context(), budgetWait)
	defer cancel()
	if err := b.sem.Acquire(ctx, n); err != nil {
		writeError(w, tidemq.Errorf(tidemq.ErrServiceUnavailable, "The server is reading too many large requests; try again."))
		return nil, false
	}
	return func() { b.sem.Release(n) }, true
}
