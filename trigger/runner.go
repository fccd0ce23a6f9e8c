package trigger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemq/tidemq"
)

// Stats are a trigger's counters since the server started, named after
// Lambda's CloudWatch metrics where Lambda has one.
type Stats struct {
	// Invocations counts calls of the target, whatever their outcome.
	Invocations uint64
	// Errors counts invocations that failed: an error status, a non-zero
	// exit, a timeout or a throttle. Invalid partial responses are counted
	// in InvalidResponses instead.
	Errors           uint64
	Timeouts         uint64
	Throttles        uint64 // HTTP 429 answers
	InvalidResponses uint64 // unusable batchItemFailures answers
	// PartialFailures counts invocations that listed some messages.
	PartialFailures uint64
	MessagesDeleted uint64
	// MessagesFailed counts messages left to come back: in a failed batch
	// or listed in batchItemFailures.
	MessagesFailed   uint64
	MessagesFiltered uint64 // deleted unseen: no filter matched
	// DurationSeconds is the total time spent in invocations.
	DurationSeconds float64
	// ConcurrentInvocations is how many invocations run now;
	// MaxConcurrentInvocations the most that ever ran at once.
	ConcurrentInvocations    int64
	MaxConcurrentInvocations int64
	// PollErrors counts failed receives (the queue is gone, say).
	PollErrors uint64
	// Pauses counts the times the trigger paused because its queue's
	// visibility timeout no longer exceeded the function timeout.
	Pauses uint64
}

// counters are the live Stats.
type counters struct {
	invocations, errors, timeouts, throttles, invalid, partial atomic.Uint64
	deleted, failed, filtered, pollErrors, durationNanos       atomic.Uint64
	pauses                                                     atomic.Uint64
	concurrent, maxConcurrent                                  atomic.Int64
	// calls are the duration histograms and the recent invocations.
	calls *invocations
}

func newCounters() *counters { return &counters{calls: newInvocations()} }

func (c *counters) snapshot() Stats {
	return Stats{
		Invocations: c.invocations.Load(), Errors: c.errors.Load(), Timeouts: c.timeouts.Load(),
		Throttles: c.throttles.Load(), InvalidResponses: c.invalid.Load(), PartialFailures: c.partial.Load(),
		MessagesDeleted: c.deleted.Load(), MessagesFailed: c.failed.Load(), MessagesFiltered: c.filtered.Load(),
		DurationSeconds:       time.Duration(c.durationNanos.Load()).Seconds(),
		ConcurrentInvocations: c.concurrent.Load(), MaxConcurrentInvocations: c.maxConcurrent.Load(),
		PollErrors: c.pollErrors.Load(), Pauses: c.pauses.Load(),
	}
}

// The states of a trigger (Status.State, the tidemq_trigger_state metric).
const (
	// StateEnabled: the trigger polls its queue.
	StateEnabled = "Enabled"
	// StateDisabled: the trigger is off (Enabled false).
	StateDisabled = "Disabled"
	// StatePaused: the trigger is enabled but does not poll, because its
	// queue's visibility timeout is no longer above the function timeout
	// (it was lowered under the running trigger): a message would become
	// visible while still being processed and be processed twice. The
	// trigger re-reads the queue's visibility timeout every second and
	// resumes by itself once it is above the function timeout again.
	StatePaused = "Paused"
	// StateFailing: the trigger is enabled but cannot poll: its queue is
	// gone, its receives fail, or it runs a command on a server without
	// --allow-trigger-commands. It retries; StateReason says why.
	StateFailing = "Failing"
)

// States are the states of a trigger, in display order.
var States = []string{StateEnabled, StateDisabled, StatePaused, StateFailing}

// Status is a trigger as the admin API shows it: its settings, with the
// secrets of its target shown as Redacted, its state and its counters.
type Status struct {
	Config
	State string `json:"State"` // one of States
	// StateReason says why a trigger is Paused or Failing.
	StateReason string `json:"StateReason,omitempty"`
	QueueARN    string `json:"QueueArn,omitempty"`
	// LastError is the latest failure: a function error, a failed poll,
	// or the reason of a pause.
	LastError     string     `json:"LastError,omitempty"`
	LastErrorTime *time.Time `json:"LastErrorTime,omitempty"`
	Warnings      []string   `json:"Warnings,omitempty"`
	// SecretsDigest is SecretsDigest of the trigger's settings: the
	// secrets of its target are shown as Redacted, and this tells whether
	// they are the ones a client has. Empty when the target has none.
	SecretsDigest string `json:"SecretsDigest,omitempty"`
	Stats         Stats  `json:"Stats"`
	// RecentInvocations are the last invocations (up to
	// RecentInvocations), the latest first; kept in memory only.
	RecentInvocations []Invocation `json:"RecentInvocations,omitempty"`
}

// runner runs one trigger: a supervisor that resolves the queue, then
// MaximumConcurrency workers, each of which receives a batch, delivers it
// and settles it before it receives again. So the number of concurrent
// invocations never exceeds the workers, and a FIFO group's next messages
// cannot be received while a batch holding the group is unsettled.
type runner struct {
	m     *Manager
	cfg   *Config
	stats *counters
	// digest is SecretsDigest(cfg), computed once: it costs PBKDF2.
	digest string

	mu        sync.Mutex
	facts     QueueFacts
	arn       string
	filters   filters
	warnings  []string
	lastErr   string
	lastErrAt time.Time
	// paused says why the trigger does not poll although it is enabled
	// (StatePaused); failing why it cannot (StateFailing). "" when not.
	paused, failing string
	// pausedFor and pausedAt are the pause's error and when the queue
	// was last read for it.
	pausedFor *VisibilityError
	pausedAt  time.Time
	// failLogAt and failQuiet pace the warning about failed invocations:
	// one line per failLogEvery, with how many failures it stands for.
	failLogAt time.Time
	failQuiet int
	cancel    context.CancelFunc
	done      chan struct{}
}

func (m *Manager) newRunner(cfg *Config, facts QueueFacts, arn string, fs filters) *runner {
	return &runner{m: m, cfg: cfg, stats: newCounters(), digest: SecretsDigest(cfg), facts: facts, arn: arn, filters: fs}
}

func (r *runner) status() *Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &Status{Config: *r.cfg.clone(), QueueARN: r.arn, LastError: r.lastErr,
		Warnings: r.warnings, SecretsDigest: r.digest, Stats: r.stats.snapshot(), RecentInvocations: r.stats.calls.recent.list()}
	s.Target = s.Target.WithoutSecrets() // every response is made here: none shows a secret
	s.State, s.StateReason = r.stateLocked()
	if !r.lastErrAt.IsZero() {
		t := r.lastErrAt
		s.LastErrorTime = &t
	}
	return s
}

// stateLocked returns the trigger's state and why. Called with r.mu held.
func (r *runner) stateLocked() (state, reason string) {
	switch {
	case !r.cfg.IsEnabled():
		return StateDisabled, ""
	case r.paused != "":
		return StatePaused, r.paused
	case r.failing != "":
		return StateFailing, r.failing
	}
	return StateEnabled, ""
}

// state returns the trigger's state.
func (r *runner) state() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, _ := r.stateLocked()
	return s
}

// setFailing marks the trigger Failing, for why ("" clears it), and makes
// why its LastError.
func (r *runner) setFailing(why string) {
	r.mu.Lock()
	r.failing = why
	if why != "" {
		r.lastErr, r.lastErrAt = why, time.Now()
	}
	r.mu.Unlock()
}

func (r *runner) setError(msg string) {
	r.mu.Lock()
	r.lastErr, r.lastErrAt = msg, time.Now()
	r.mu.Unlock()
}

// start launches the trigger. invokeCtx bounds invocations; polls end
// when stopPolling is called.
func (r *runner) start(invokeCtx context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	r.cancel, r.done = cancel, make(chan struct{})
	r.mu.Unlock()
	go r.supervise(ctx, invokeCtx)
}

func (r *runner) stopPolling() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel()
	}
}

// wait returns once the trigger's goroutines have ended.
func (r *runner) wait() {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if done != nil {
		<-done
	}
}

func (r *runner) supervise(ctx, invokeCtx context.Context) {
	defer close(r.done)
	for {
		r.mu.Lock()
		ready := r.arn != ""
		r.mu.Unlock()
		if ready {
			break
		}
		facts, arn, warnings, fs, err := r.m.check(ctx, r.cfg)
		if err == nil {
			r.mu.Lock()
			r.facts, r.arn, r.warnings, r.filters = facts, arn, warnings, fs
			r.failing = ""
			r.mu.Unlock()
			r.resume()
			break
		}
		retry := 5 * time.Second
		var ve *VisibilityError
		if errors.As(err, &ve) {
			// Lowered while the server was down: the same pause as below.
			r.pause(ve)
			retry = pauseRecheck
		} else {
			r.stats.pollErrors.Add(1)
			r.setFailing(err.Error())
			r.m.log.Warn("trigger cannot start", "trigger", r.cfg.Name, "queue", r.cfg.Queue, "err", err)
		}
		if !sleep(ctx, retry) {
			return
		}
	}
	var wg sync.WaitGroup
	for range r.cfg.concurrency() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(ctx, invokeCtx)
		}()
	}
	wg.Wait()
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (r *runner) client() tidemq.ClientInfo {
	return tidemq.NewClientInfo("", "tidemq-trigger/"+r.cfg.Name, "")
}

// work is one poller: check the queue's visibility timeout, receive a
// batch, deliver it, settle it, again.
func (r *runner) work(ctx, invokeCtx context.Context) {
	backoff := time.Second
	for ctx.Err() == nil {
		began := time.Now()
		vis, err := r.recheck(ctx)
		var batch []*tidemq.Message
		if err == nil {
			batch, err = r.collect(ctx, vis)
		}
		if len(batch) > 0 {
			r.deliver(invokeCtx, batch)
		}
		var ve *VisibilityError
		if errors.As(err, &ve) {
			if !sleep(ctx, pauseRecheck) {
				return
			}
			continue
		}
		if err != nil && ctx.Err() == nil {
			r.stats.pollErrors.Add(1)
			r.setFailing("receive: " + err.Error())
			r.m.log.Warn("trigger receive failed", "trigger", r.cfg.Name, "queue", r.cfg.Queue, "err", err)
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		if err == nil {
			r.clearFailing()
		}
		backoff = time.Second
		// A short poll, or a broker that answers at once while it drains
		// for shutdown, must not turn this loop into a spin.
		if len(batch) == 0 && time.Since(began) < 50*time.Millisecond && !sleep(ctx, 50*time.Millisecond) {
			return
		}
	}
}

// collect receives one batch: what one receive returns, or, with a
// batching window, what arrives until the batch is full or the window ends.
// Each receive asks for vis, the visibility timeout recheck just found
// above the function timeout, rather than the queue's: a lowering between
// the check and a receive (a long poll waits up to 20 s) cannot slip
// through, and the batch is never received for less than it was checked
// for.
func (r *runner) collect(ctx context.Context, vis int) ([]*tidemq.Message, error) {
	size := r.cfg.batchSize()
	wait := max(r.m.o.WaitTimeSeconds, 0)
	recv := func(ctx context.Context, n int) ([]*tidemq.Message, error) {
		return r.m.o.Broker.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{
			Queue: r.cfg.Queue, MaxNumberOfMessages: new(min(n, tidemq.MaxReceiveMessages)), WaitTimeSeconds: &wait,
			VisibilityTimeout: &vis, Client: r.client(),
		})
	}
	batch, err := recv(ctx, size)
	if err != nil || len(batch) == 0 || r.cfg.window() == 0 {
		return batch, err
	}
	wctx, cancel := context.WithTimeout(ctx, r.cfg.window())
	defer cancel()
	for len(batch) < size && wctx.Err() == nil {
		more, err := recv(wctx, size-len(batch))
		batch = append(batch, more...)
		if err != nil {
			return batch, err
		}
		if len(more) == 0 && wait == 0 && !sleep(wctx, 50*time.Millisecond) {
			break
		}
	}
	return batch, nil
}

// deliver invokes the target with batch and settles the outcome.
func (r *runner) deliver(invokeCtx context.Context, batch []*tidemq.Message) {
	r.mu.Lock()
	arn, fs := r.arn, r.filters
	r.mu.Unlock()
	records := make([]Record, 0, len(batch))
	var filtered []string
	for _, msg := range batch {
		rec := NewRecord(msg, arn)
		if !fs.pass(rec) {
			filtered = append(filtered, msg.ReceiptHandle)
			continue
		}
		records = append(records, rec)
	}
	if len(filtered) > 0 {
		r.stats.filtered.Add(uint64(r.delete(filtered)))
	}
	if len(records) == 0 {
		return
	}
	event, err := encodeEvent(records)
	if err != nil {
		r.setError("encode event: " + err.Error())
		return
	}

	n := r.stats.concurrent.Add(1)
	for {
		old := r.stats.maxConcurrent.Load()
		if n <= old || r.stats.maxConcurrent.CompareAndSwap(old, n) {
			break
		}
	}
	ctx, cancel := context.WithTimeout(invokeCtx, r.cfg.timeout())
	start := time.Now()
	out := newInvoker(r.cfg.Target, r.m.o.HTTPClient).invoke(ctx, event)
	took := time.Since(start)
	cancel()
	r.stats.concurrent.Add(-1)
	r.stats.invocations.Add(1)
	r.stats.durationNanos.Add(uint64(took))
	// Recorded once the batch is settled, with the outcome the branches
	// below set.
	inv := Invocation{Time: start, BatchSize: len(records), DurationSeconds: took.Seconds(), Outcome: OutcomeSuccess}
	defer func() { r.stats.calls.record(inv, took) }()

	handles := make([]string, len(records))
	for i, rec := range records {
		handles[i] = rec.ReceiptHandle
	}
	if out.err != nil {
		r.stats.errors.Add(1)
		inv.Outcome = OutcomeError
		if out.timeout {
			r.stats.timeouts.Add(1)
			out.err = fmt.Errorf("function timed out after %s", r.cfg.timeout())
			inv.Outcome = OutcomeTimeout
		}
		if out.throttle {
			r.stats.throttles.Add(1)
			inv.Outcome = OutcomeThrottle
		}
		inv.FailedMessages, inv.Error = len(handles), out.err.Error()
		r.fail(handles, out.err.Error())
		return
	}
	if !r.cfg.reportsItemFailures() {
		r.stats.deleted.Add(uint64(r.delete(handles)))
		return
	}
	byID := make(map[string]string, len(records))
	for _, rec := range records {
		byID[rec.MessageID] = rec.ReceiptHandle
	}
	ids, err := parseItemFailures(out.resp, func(id string) bool { _, ok := byID[id]; return ok })
	if err != nil {
		r.stats.invalid.Add(1)
		why := "invalid batchItemFailures response, the whole batch fails: " + err.Error()
		inv.Outcome, inv.FailedMessages, inv.Error = OutcomeInvalidResponse, len(handles), why
		r.fail(handles, why)
		return
	}
	keep := make(map[string]bool, len(ids))
	var failed []string
	for _, id := range ids {
		if !keep[id] {
			keep[id] = true
			failed = append(failed, byID[id])
		}
	}
	var done []string
	for _, rec := range records {
		if !keep[rec.MessageID] {
			done = append(done, rec.ReceiptHandle)
		}
	}
	if len(failed) > 0 {
		r.stats.partial.Add(1)
		inv.Outcome, inv.FailedMessages = OutcomePartial, len(failed)
		r.fail(failed, "listed in batchItemFailures")
	}
	r.stats.deleted.Add(uint64(r.delete(done)))
}

// fail records a failure of the messages with the given handles: counted,
// logged, and written into each message's story.
// Nothing is deleted; the messages come back after their visibility
// timeout.
func (r *runner) fail(handles []string, why string) {
	r.stats.failed.Add(uint64(len(handles)))
	r.setError(why)
	r.logFailure(len(handles), why)
	// The story must be written even while the trigger is stopping.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.m.o.Broker.RecordFailure(ctx, tidemq.RecordFailureParams{Queue: r.cfg.Queue, ReceiptHandles: handles,
		Detail: fmt.Sprintf("trigger %s: %s", r.cfg.Name, why), Client: r.client()}); err != nil {
		r.m.log.Warn("trigger cannot record a failure", "trigger", r.cfg.Name, "err", err)
	}
}

// failLogEvery is the least time between two warnings about a trigger's
// failed invocations; failures in between are counted into the next one.
const failLogEvery = 10 * time.Second

// logFailure warns about a failed invocation, at most once per
// failLogEvery for this trigger (a target that is down fails every
// batch), with the number of failures since the last warning.
func (r *runner) logFailure(messages int, why string) {
	now := time.Now()
	r.mu.Lock()
	r.failQuiet++
	if !r.failLogAt.IsZero() && now.Sub(r.failLogAt) < failLogEvery {
		r.mu.Unlock()
		r.m.log.Debug("trigger invocation failed", "trigger", r.cfg.Name, "queue", r.cfg.Queue, "messages", messages, "err", why)
		return
	}
	n := r.failQuiet
	r.failLogAt, r.failQuiet = now, 0
	r.mu.Unlock()
	r.m.log.Warn("trigger invocation failed; the messages come back after their visibility timeout",
		"trigger", r.cfg.Name, "queue", r.cfg.Queue, "messages", messages, "err", why, "failures_since_last_warning", n)
}

// delete deletes by receipt handle, ten at a time, and returns how many
// were deleted.
func (r *runner) delete(handles []string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := 0
	for len(handles) > 0 {
		chunk := handles[:min(len(handles), tidemq.MaxReceiveMessages)]
		handles = handles[len(chunk):]
		entries := make([]tidemq.DeleteEntry, len(chunk))
		for i, h := range chunk {
			entries[i] = tidemq.DeleteEntry{ID: strconv.Itoa(i), ReceiptHandle: h}
		}
		errs, err := r.m.o.Broker.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: r.cfg.Queue, Entries: entries})
		if err != nil {
			r.setError("delete: " + err.Error())
			r.m.log.Warn("trigger delete failed", "trigger", r.cfg.Name, "queue", r.cfg.Queue, "err", err)
			continue
		}
		for _, e := range errs {
			if e == nil {
				n++
			} else {
				r.setError("delete: " + e.Error())
			}
		}
	}
	return n
}
