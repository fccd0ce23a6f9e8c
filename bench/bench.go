// Package bench is tidemq's load generator: it drives any SQS endpoint
// (tidemq or AWS) through a Client (raw AWS JSON over HTTP, or the official
// aws-sdk-go-v2 client), measures throughput and latency, and checks what
// it sends: every message it sends must come back exactly once, and a run
// that loses one says so.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Scenarios lists the scenarios Run knows, in the order `all` runs them.
var Scenarios = []string{"send", "send-batch", "receive", "receive-batch", "fifo", "longpoll"}

// MoreScenarios need extra settings and are run only when named: mixed
// (Config.Rate and Duration) and depth (Config.Prefill is the depth).
var MoreScenarios = []string{"mixed", "depth"}

// Config describes one run.
type Config struct {
	Scenario string
	// Queue is the name prefix of the queues the run creates (and deletes).
	Queue    string
	Clients  int
	Count    int           // messages to move; 0 with Duration set means "as many as fit"
	Duration time.Duration // for send scenarios: how long to send
	Size     int           // body bytes
	Groups   int           // FIFO message groups
	// MaxReceiveCount, when above 0, gives each scenario's queue a
	// dead-letter queue (its name and "-dlq") with this maxReceiveCount.
	MaxReceiveCount int
	// Prefill is the number of messages queued before a receive scenario
	// (default: Count).
	Prefill int
	// Rate is the total send rate of the mixed scenario, messages per second.
	Rate int
	// Progress, if set, is called with the messages done so far.
	Progress func(done int64)
}

// Result is what a run measured.
type Result struct {
	Scenario   string        `json:"scenario"`
	Messages   int64         `json:"messages"`
	Requests   int64         `json:"requests"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	PerSecond  float64       `json:"messages_per_second"`
	P50        time.Duration `json:"p50_ns"`
	P99        time.Duration `json:"p99_ns"`
	P999       time.Duration `json:"p999_ns"`
	Errors     int64         `json:"errors"`
	Lost       int64         `json:"lost"`
	Duplicates int64         `json:"duplicates"`
	FirstError string        `json:"first_error,omitempty"`
	// SendPerSecond is the send phase's rate, for scenarios that have one
	// before their measured receive phase (fifo).
	SendPerSecond float64 `json:"send_messages_per_second,omitempty"`
	// Skipped counts the sends the mixed scenario's pacer skipped because
	// every producer was busy: the endpoint did not keep up with the rate.
	Skipped int64 `json:"skipped,omitempty"`
	// Deliveries and DeliveriesPerSecond count, for the SNS scenarios, the
	// messages the subscriptions received: publishes × subscriptions, over
	// the publish phase.
	Deliveries          int64   `json:"deliveries,omitempty"`
	DeliveriesPerSecond float64 `json:"deliveries_per_second,omitempty"`
}

// OK reports whether the run moved every message exactly once without errors.
func (r Result) OK() bool { return r.Errors == 0 && r.Lost == 0 && r.Duplicates == 0 }

// recorder collects per-request latencies and errors from many workers.
type recorder struct {
	mu        sync.Mutex
	lat       []time.Duration
	errors    atomic.Int64
	requests  atomic.Int64
	messages  atomic.Int64
	firstErr  atomic.Value
	progress  func(int64)
	lastPrint atomic.Int64
}

func (r *recorder) observe(start time.Time, msgs int, err error) {
	d := time.Since(start)
	r.requests.Add(1)
	if err != nil {
		r.errors.Add(1)
		r.firstErr.CompareAndSwap(nil, err.Error())
		return
	}
	n := r.messages.Add(int64(msgs))
	r.mu.Lock()
	r.lat = append(r.lat, d)
	r.mu.Unlock()
	if r.progress != nil && n-r.lastPrint.Load() >= 1000 {
		r.lastPrint.Store(n)
		r.progress(n)
	}
}

func (r *recorder) result(scenario string, elapsed time.Duration) Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	q := func(p float64) time.Duration {
		if len(r.lat) == 0 {
			return 0
		}
		return r.lat[min(len(r.lat)-1, int(p*float64(len(r.lat))))]
	}
	res := Result{
		Scenario: scenario, Messages: r.messages.Load(), Requests: r.requests.Load(), Elapsed: elapsed,
		P50: q(0.50), P99: q(0.99), P999: q(0.999), Errors: r.errors.Load(),
	}
	if elapsed > 0 {
		res.PerSecond = float64(res.Messages) / elapsed.Seconds()
	}
	if v, ok := r.firstErr.Load().(string); ok {
		res.FirstError = v
	}
	return res
}

// ledger tracks message ids to find losses and duplicates.
type ledger struct {
	mu   sync.Mutex
	sent map[string]bool // id → received yet
	dups int64
}

func newLedger() *ledger { return &ledger{sent: make(map[string]bool)} }

func (l *ledger) add(ids ...string) {
	l.mu.Lock()
	for _, id := range ids {
		l.sent[id] = false
	}
	l.mu.Unlock()
}

func (l *ledger) forget(id string) {
	l.mu.Lock()
	delete(l.sent, id)
	l.mu.Unlock()
}

func (l *ledger) seen(id string) {
	l.mu.Lock()
	if got, ok := l.sent[id]; ok && got {
		l.dups++
	} else if ok {
		l.sent[id] = true
	}
	l.mu.Unlock()
}

func (l *ledger) lost() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, got := range l.sent {
		if !got {
			n++
		}
	}
	return n
}

// body builds a message body of size bytes that starts with its id.
func body(id string, size int) string {
	if size <= len(id)+1 {
		return id
	}
	return id + " " + strings.Repeat("x", size-len(id)-1)
}

// Run runs one scenario against client and returns what it measured.
func Run(ctx context.Context, client Client, cfg Config) (Result, error) {
	if cfg.Clients <= 0 {
		cfg.Clients = 16
	}
	if cfg.Size <= 0 {
		cfg.Size = 256
	}
	if cfg.Groups <= 0 {
		cfg.Groups = 64
	}
	if cfg.Count <= 0 && cfg.Duration <= 0 {
		cfg.Count = 10000
	}
	if cfg.Queue == "" {
		cfg.Queue = "tidemq-bench"
	}
	b := &runner{c: client, cfg: cfg}
	switch cfg.Scenario {
	case "send":
		return b.send(ctx, 1)
	case "send-batch":
		return b.send(ctx, 10)
	case "receive":
		return b.receive(ctx, false)
	case "receive-batch":
		return b.receive(ctx, true)
	case "fifo":
		return b.fifo(ctx)
	case "longpoll":
		return b.longpoll(ctx)
	case "mixed":
		return b.mixed(ctx)
	case "depth":
		return b.depth(ctx)
	case "sns":
		return b.sns(ctx, 1, 1)
	case "sns-fanout":
		return b.sns(ctx, 10, 1)
	case "sns-batch":
		return b.sns(ctx, 1, 10)
	}
	known := append(append(append([]string{}, Scenarios...), MoreScenarios...), SNSScenarios...)
	return Result{}, fmt.Errorf("unknown scenario %q (known: %s)", cfg.Scenario, strings.Join(known, ", "))
}

type runner struct {
	c   Client
	cfg Config
}

func (b *runner) createQueue(ctx context.Context, suffix string, fifo bool) (string, func(), error) {
	name := fmt.Sprintf("%s-%s-%d", b.cfg.Queue, suffix, time.Now().UnixNano()%1_000_000_000)
	attrs := map[string]string{"VisibilityTimeout": "300"}
	if fifo {
		name += ".fifo"
		attrs["FifoQueue"] = "true"
	}
	dropDLQ := func() {}
	if n := b.cfg.MaxReceiveCount; n > 0 {
		dname := strings.TrimSuffix(name, ".fifo") + "-dlq"
		dattrs := map[string]string{}
		if fifo {
			dname += ".fifo"
			dattrs["FifoQueue"] = "true"
		}
		durl, err := b.c.CreateQueue(ctx, dname, dattrs)
		if err != nil {
			return "", nil, fmt.Errorf("create queue %s: %w", dname, err)
		}
		dropDLQ = func() { _ = b.c.DeleteQueue(context.Background(), durl) }
		arn, err := b.c.QueueARN(ctx, durl)
		if err != nil {
			dropDLQ()
			return "", nil, fmt.Errorf("queue %s: %w", dname, err)
		}
		policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": arn, "maxReceiveCount": n})
		attrs["RedrivePolicy"] = string(policy)
	}
	url, err := b.c.CreateQueue(ctx, name, attrs)
	if err != nil {
		dropDLQ()
		return "", nil, fmt.Errorf("create queue %s: %w", name, err)
	}
	return url, func() { _ = b.c.DeleteQueue(context.Background(), url); dropDLQ() }, nil
}

// send measures SendMessage (batch 1) or SendMessageBatch (batch 10), then
// drains the queue (untimed) to check every message arrived.
func (b *runner) send(ctx context.Context, batch int) (Result, error) {
	url, cleanup, err := b.createQueue(ctx, b.cfg.Scenario, false)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	led := newLedger()
	res := b.sendLoop(ctx, batch, func(ids []string) error {
		err := b.sendIDs(ctx, url, ids, batch > 1, "")
		if err == nil {
			led.add(ids...)
		}
		return err
	})
	if err := b.drain(ctx, url, led, nil); err != nil {
		return res, err
	}
	res.Lost, res.Duplicates = led.lost(), led.dups
	return res, nil
}

// sendLoop runs b.cfg.Clients workers that take the next batch message
// ids ("m0", "m1", ...) until Count is sent or Duration has passed, hand
// each batch to send, and time it: the scenario's timed phase.
func (b *runner) sendLoop(ctx context.Context, batch int, send func(ids []string) error) Result {
	rec := &recorder{progress: b.cfg.Progress}
	var next atomic.Int64
	var deadline time.Time
	if b.cfg.Duration > 0 {
		deadline = time.Now().Add(b.cfg.Duration)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < b.cfg.Clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				first := next.Add(int64(batch)) - int64(batch)
				if b.cfg.Count > 0 && first >= int64(b.cfg.Count) {
					return
				}
				n := batch
				if b.cfg.Count > 0 {
					n = int(min(int64(batch), int64(b.cfg.Count)-first))
				}
				ids := make([]string, n)
				for i := range ids {
					ids[i] = "m" + strconv.FormatInt(first+int64(i), 10)
				}
				t := time.Now()
				rec.observe(t, n, send(ids))
			}
		}()
	}
	wg.Wait()
	return rec.result(b.cfg.Scenario, time.Since(start))
}

func (b *runner) sendIDs(ctx context.Context, url string, ids []string, batch bool, group string) error {
	msgs := make([]Outgoing, len(ids))
	for i, id := range ids {
		msgs[i] = Outgoing{Body: body(id, b.cfg.Size)}
		if group != "" {
			msgs[i].Group, msgs[i].Dedup = group, id
		}
	}
	return b.c.Send(ctx, url, msgs, batch)
}

// prefill queues n messages as fast as possible (untimed) and records them.
func (b *runner) prefill(ctx context.Context, url string, n int, led *ledger, groups int) error {
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				first := next.Add(10) - 10
				if first >= int64(n) || firstErr.Load() != nil {
					return
				}
				k := int(min(10, int64(n)-first))
				ids := make([]string, k)
				for i := range ids {
					ids[i] = "p" + strconv.FormatInt(first+int64(i), 10)
				}
				group := ""
				if groups > 0 {
					group = "g" + strconv.FormatInt(first/10%int64(groups), 10)
				}
				if err := b.sendIDs(ctx, url, ids, true, group); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				led.add(ids...)
			}
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return fmt.Errorf("prefill: %w", err)
	}
	return nil
}

// consume receives (10 at a time) and deletes until the ledger's messages
// are all seen or three receives in a row come back empty. It returns when
// the last message was deleted: once all are, the long polls still waiting
// on the empty queue are cancelled and their wait is not measured.
//
// A failed receive is retried after a pause that doubles each time; after
// maxReceiveFailures failures in a row (a server gone, a queue deleted
// under the run) consume gives up and returns the last error rather than
// retry forever.
func (b *runner) consume(ctx context.Context, url string, led *ledger, rec *recorder, batchDelete bool) (time.Time, error) {
	var wg sync.WaitGroup
	var empties atomic.Int64
	total := int64(len(led.sent))
	var got, done, finished atomic.Int64
	var gaveUp atomic.Value
	polls, stop := context.WithCancel(ctx)
	defer stop()
	for w := 0; w < b.cfg.Clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			failures := 0
			for polls.Err() == nil && got.Load() < total && empties.Load() < 3 {
				t := time.Now()
				msgs, err := b.c.Receive(polls, url, 10, 1)
				if err != nil {
					if polls.Err() != nil && ctx.Err() == nil {
						return // cancelled because every message is in
					}
					if rec != nil {
						rec.observe(t, 0, err)
					}
					if failures++; failures >= maxReceiveFailures {
						gaveUp.CompareAndSwap(nil, fmt.Errorf("receive failed %d times in a row: %w", failures, err))
						stop()
						return
					}
					pause(polls, retryPause(failures))
					continue
				}
				failures = 0
				if len(msgs) == 0 {
					if got.Load() >= total {
						return
					}
					empties.Add(1)
					continue
				}
				empties.Store(0)
				for _, m := range msgs {
					led.seen(idOf(m.Body))
				}
				got.Add(int64(len(msgs)))
				err = b.delete(ctx, url, msgs, batchDelete)
				if rec != nil {
					rec.observe(t, len(msgs), err)
				}
				if err == nil && done.Add(int64(len(msgs))) >= total {
					finished.CompareAndSwap(0, time.Now().UnixNano())
					stop()
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := gaveUp.Load().(error); ok {
		return time.Now(), err
	}
	if ns := finished.Load(); ns != 0 {
		return time.Unix(0, ns), ctx.Err()
	}
	return time.Now(), ctx.Err()
}

// maxReceiveFailures is how many failed receives in a row make a consumer
// give up (after about 3 s of pauses, see retryPause).
const maxReceiveFailures = 10

// retryPause is the pause after the n-th failure in a row: 10 ms doubling,
// at most 500 ms.
func retryPause(n int) time.Duration {
	return min(10*time.Millisecond<<min(n-1, 6), 500*time.Millisecond)
}

// pause sleeps for d or until ctx is done.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (b *runner) delete(ctx context.Context, url string, msgs []Received, batch bool) error {
	handles := make([]string, len(msgs))
	for i, m := range msgs {
		handles[i] = m.Handle
	}
	return b.c.Delete(ctx, url, handles, batch)
}

func (b *runner) drain(ctx context.Context, url string, led *ledger, rec *recorder) error {
	_, err := b.consume(ctx, url, led, rec, true)
	return err
}

// receive measures ReceiveMessage(10) + DeleteMessage (or
// DeleteMessageBatch) over a prefilled queue.
func (b *runner) receive(ctx context.Context, batchDelete bool) (Result, error) {
	url, cleanup, err := b.createQueue(ctx, b.cfg.Scenario, false)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	n := b.cfg.Prefill
	if n <= 0 {
		n = b.cfg.Count
	}
	if n <= 0 {
		n = 10000
	}
	led := newLedger()
	if err := b.prefill(ctx, url, n, led, 0); err != nil {
		return Result{}, err
	}
	rec := &recorder{progress: b.cfg.Progress}
	start := time.Now()
	end, err := b.consume(ctx, url, led, rec, batchDelete)
	res := rec.result(b.cfg.Scenario, end.Sub(start))
	res.Lost, res.Duplicates = led.lost(), led.dups
	return res, err
}

// fifo measures batched sends over Groups message groups, then batched
// receive + delete, and checks order within each group.
func (b *runner) fifo(ctx context.Context) (Result, error) {
	url, cleanup, err := b.createQueue(ctx, "fifo", true)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	n := b.cfg.Count
	if n <= 0 {
		n = 10000
	}
	led := newLedger()
	sendRec := &recorder{progress: b.cfg.Progress}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < b.cfg.Clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				first := next.Add(10) - 10
				if first >= int64(n) {
					return
				}
				k := int(min(10, int64(n)-first))
				ids := make([]string, k)
				for i := range ids {
					ids[i] = "f" + strconv.FormatInt(first+int64(i), 10)
				}
				group := "g" + strconv.FormatInt(first/10%int64(b.cfg.Groups), 10)
				t := time.Now()
				err := b.sendIDs(ctx, url, ids, true, group)
				if err == nil {
					led.add(ids...)
				}
				sendRec.observe(t, k, err)
			}
		}()
	}
	wg.Wait()
	sendRes := sendRec.result("fifo-send", time.Since(start))
	rec := &recorder{progress: b.cfg.Progress}
	start = time.Now()
	end, err := b.consume(ctx, url, led, rec, true)
	res := rec.result("fifo", end.Sub(start))
	res.Errors += sendRes.Errors
	if res.FirstError == "" {
		res.FirstError = sendRes.FirstError
	}
	res.Lost, res.Duplicates = led.lost(), led.dups
	res.Scenario = fmt.Sprintf("fifo/%d receive+delete", b.cfg.Groups)
	res.SendPerSecond = sendRes.PerSecond
	return res, err
}

// longpoll measures how long a waiting receive takes to return a message
// sent while it waits: the wake-up latency.
func (b *runner) longpoll(ctx context.Context) (Result, error) {
	url, cleanup, err := b.createQueue(ctx, "longpoll", false)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	n := b.cfg.Count
	if n <= 0 || n > 200 {
		n = 200
	}
	led := newLedger()
	rec := &recorder{progress: b.cfg.Progress}
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		got := make(chan time.Time, 1)
		go func() {
			msgs, err := b.c.Receive(ctx, url, 1, 5)
			if err == nil && len(msgs) == 1 {
				led.seen(idOf(msgs[0].Body))
				_ = b.delete(ctx, url, msgs, false)
			}
			got <- time.Now()
		}()
		time.Sleep(20 * time.Millisecond) // let the receive start waiting
		id := "l" + strconv.Itoa(i)
		led.add(id) // before the send: the receive may return before the send does
		sent := time.Now()
		err := b.sendIDs(ctx, url, []string{id}, false, "")
		if err != nil {
			led.forget(id)
		}
		woke := <-got
		rec.mu.Lock()
		rec.lat = append(rec.lat, woke.Sub(sent))
		rec.mu.Unlock()
		rec.requests.Add(1)
		if err != nil {
			rec.errors.Add(1)
		} else {
			rec.messages.Add(1)
		}
	}
	res := rec.result("longpoll wake-up", time.Since(start))
	res.Lost, res.Duplicates = led.lost(), led.dups
	return res, ctx.Err()
}
