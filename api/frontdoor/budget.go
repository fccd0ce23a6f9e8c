package frontdoor

import (
	"context"
	"net"
	"net/http"
	"sync"
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

// clientShares is how many clients the budget is shared between at the
// least: one client (one IPv4 address, one IPv6 /64) may hold a quarter of
// it, or one largest body if that is more.
const clientShares = 4

// budget bounds the memory that large request bodies hold at once. A body is
// charged its Content-Length (or the largest allowed body when the length is
// unknown) before any of it is read, so that slow or half-sent bodies cannot
// pile up: the preallocated buffers of 100 half-sent 8 MiB bodies were the
// 800 MiB an attacker could pin before.
//
// Bodies are charged before the request is authenticated (a signature covers
// the body, which is not read yet), so one client's share is capped too:
// without it, forty unsigned chunked bodies from one address held the whole
// budget until the read timeout, and every other client's large requests
// waited and failed. A client now waits for its own share first, then for
// the budget; holding both only as long as its body is read.
type budget struct {
	total *semaphore.Weighted
	share int64

	mu      sync.Mutex
	clients map[string]*clientBudget // by client key; removed when unused
}

// clientBudget is one client's share, with the count of requests holding or
// waiting for it.
type clientBudget struct {
	sem  *semaphore.Weighted
	refs int
}

func newBudget(n, maxBody int64) *budget {
	return &budget{total: semaphore.NewWeighted(n), share: max(n/clientShares, maxBody), clients: map[string]*clientBudget{}}
}

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
	key := clientKey(r.RemoteAddr)
	c := b.client(key)
	if err := c.sem.Acquire(ctx, n); err != nil {
		b.done(key, c)
		return b.refuse(w)
	}
	if err := b.total.Acquire(ctx, n); err != nil {
		c.sem.Release(n)
		b.done(key, c)
		return b.refuse(w)
	}
	return func() {
		b.total.Release(n)
		c.sem.Release(n)
		b.done(key, c)
	}, true
}

func (b *budget) refuse(w http.ResponseWriter) (func(), bool) {
	writeError(w, tidemq.Errorf(tidemq.ErrServiceUnavailable, "The server is reading too many large requests; try again."))
	return nil, false
}

// client returns key's share, counting one more user of it.
func (b *budget) client(key string) *clientBudget {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.clients[key]
	if c == nil {
		c = &clientBudget{sem: semaphore.NewWeighted(b.share)}
		b.clients[key] = c
	}
	c.refs++
	return c
}

// done counts one user of key's share less, and forgets the share when it
// has none left (it is then wholly released).
func (b *budget) done(key string, c *clientBudget) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c.refs--; c.refs == 0 {
		delete(b.clients, key)
	}
}

// clientKey names the client a request comes from, for its share of the
// budget: its IPv4 address, or the /64 of its IPv6 address (one host is
// usually given a whole /64, so an address per request would be free).
func clientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
