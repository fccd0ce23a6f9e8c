package trigger

import (
	"sync"
	"sync/atomic"
	"time"
)

// The outcomes of an invocation: each one has exactly one.
const (
	// OutcomeSuccess: the whole batch was processed (and deleted).
	OutcomeSuccess = "success"
	// OutcomePartial: the answer listed some messages in
	// batchItemFailures; the others were deleted.
	OutcomePartial = "partial_failure"
	// OutcomeError: a function error (an error status, a non-zero exit,
	// a refused connection); the whole batch comes back.
	OutcomeError = "error"
	// OutcomeTimeout: the function ran past its timeout.
	OutcomeTimeout = "timeout"
	// OutcomeThrottle: the target answered HTTP 429.
	OutcomeThrottle = "throttle"
	// OutcomeInvalidResponse: an unusable batchItemFailures answer; the
	// whole batch comes back.
	OutcomeInvalidResponse = "invalid_response"
)

// Outcomes are the outcomes in display order: a bounded label set.
var Outcomes = []string{OutcomeSuccess, OutcomePartial, OutcomeError, OutcomeTimeout, OutcomeThrottle, OutcomeInvalidResponse}

// Invocation is one call of a trigger's target, as Status.RecentInvocations
// and `tidemq trigger list` show it.
type Invocation struct {
	// Time is when the call began.
	Time time.Time `json:"Time"`
	// BatchSize is the number of records in the event (messages filtered
	// out are not sent).
	BatchSize       int     `json:"BatchSize"`
	DurationSeconds float64 `json:"DurationSeconds"`
	Outcome         string  `json:"Outcome"` // one of Outcomes
	// FailedMessages are the messages left to come back: the whole batch
	// on a failure, the listed ones on a partial failure.
	FailedMessages int    `json:"FailedMessages,omitempty"`
	Error          string `json:"Error,omitempty"`
}

// RecentInvocations is how many invocations each trigger remembers, in
// memory, for its Status. They are lost at a restart.
const RecentInvocations = 20

// maxInvocationError bounds the error text an Invocation keeps.
const maxInvocationError = 300

// recentRing keeps the last RecentInvocations invocations.
type recentRing struct {
	mu   sync.Mutex
	buf  [RecentInvocations]Invocation
	next int // where the next one goes
	n    int // how many are kept
}

func (r *recentRing) add(inv Invocation) {
	if len(inv.Error) > maxInvocationError {
		inv.Error = inv.Error[:maxInvocationError] + "…"
	}
	r.mu.Lock()
	r.buf[r.next] = inv
	r.next = (r.next + 1) % len(r.buf)
	r.n = min(r.n+1, len(r.buf))
	r.mu.Unlock()
}

// list returns the invocations kept, the latest first.
func (r *recentRing) list() []Invocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Invocation, 0, r.n)
	for i := 1; i <= r.n; i++ {
		out = append(out, r.buf[(r.next-i+len(r.buf))%len(r.buf)])
	}
	return out
}

// DurationBuckets are the upper bounds (seconds) of the invocation duration
// histogram, up to the longest function timeout.
var DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900}

// Histogram is the distribution of invocation durations of one outcome.
type Histogram struct {
	Count uint64
	// Sum is the total duration in seconds.
	Sum float64
	// Buckets maps each of DurationBuckets to the number of invocations
	// that took at most that long (cumulative, as Prometheus has them).
	Buckets map[float64]uint64
}

// histogram counts durations into DurationBuckets without a lock.
type histogram struct {
	counts   []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	count    atomic.Uint64
	sumNanos atomic.Uint64
}

func newHistogram() *histogram {
	return &histogram{counts: make([]atomic.Uint64, len(DurationBuckets)+1)}
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(DurationBuckets) && s > DurationBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNanos.Add(uint64(max(d, 0)))
	h.count.Add(1)
}

func (h *histogram) snapshot() Histogram {
	out := Histogram{Count: h.count.Load(), Sum: time.Duration(h.sumNanos.Load()).Seconds(), Buckets: make(map[float64]uint64, len(DurationBuckets))}
	var cum uint64
	for i, b := range DurationBuckets {
		cum += h.counts[i].Load()
		out.Buckets[b] = cum
	}
	return out
}

// invocations are a trigger's invocation records: the duration
// histograms by outcome and the recent invocations. Like the counters,
// they carry on across updates of the trigger.
type invocations struct {
	byOutcome map[string]*histogram // every outcome, made at start: read without a lock
	recent    recentRing
}

func newInvocations() *invocations {
	iv := &invocations{byOutcome: make(map[string]*histogram, len(Outcomes))}
	for _, o := range Outcomes {
		iv.byOutcome[o] = newHistogram()
	}
	return iv
}

// record adds one invocation that took d.
func (iv *invocations) record(inv Invocation, d time.Duration) {
	if h := iv.byOutcome[inv.Outcome]; h != nil {
		h.observe(d)
	}
	iv.recent.add(inv)
}

// durations returns the histograms of the outcomes that happened.
func (iv *invocations) durations() map[string]Histogram {
	out := make(map[string]Histogram)
	for o, h := range iv.byOutcome {
		if h.count.Load() > 0 {
			out[o] = h.snapshot()
		}
	}
	return out
}
