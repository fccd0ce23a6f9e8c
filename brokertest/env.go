package brokertest

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
)

// env is one test's world: a fresh broker on a fresh fake clock, and the
// helpers that drive it. Helpers whose name starts with try return the
// error; the others fail the test on an error.
type env struct {
	t   *testing.T
	h   Harness
	clk *clocktest.Clock
	b   tidemq.Broker
	ctx context.Context
}

// client is the ClientInfo the suite sends with its requests.
var client = tidemq.ClientInfo{Addr: "192.0.2.10:40000", UserAgent: "brokertest/1", AccessKey: "AKIDBROKERTEST"}

func newEnv(t *testing.T, h Harness) *env {
	t.Helper()
	e := &env{t: t, h: h, clk: clocktest.New(Start), ctx: t.Context()}
	e.b = h.Open(t, e.clk)
	if e.b == nil {
		t.Fatal("Harness.Open returned nil")
	}
	// Registered after Open, so it runs before the cleanups Open registered
	// (a t.TempDir for the store must outlive the broker using it).
	t.Cleanup(func() {
		if e.b != nil {
			if err := e.b.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
	})
	return e
}

// restart closes the broker and opens its data again, or skips the test
// when the harness cannot reopen.
func (e *env) restart() {
	e.t.Helper()
	if e.h.Reopen == nil {
		e.t.Skip("Harness.Reopen is nil: restart checks skipped")
	}
	old := e.b
	e.b = nil
	b := e.h.Reopen(e.t, old, e.clk)
	if b == nil {
		e.t.Fatal("Harness.Reopen returned nil")
	}
	e.b = b
}

// advance moves the fake clock forward.
func (e *env) advance(d time.Duration) { e.clk.Advance(d) }

// now is the fake time.
func (e *env) now() time.Time { return e.clk.Now() }

func intp(n int) *int { return &n }

// ---- errors ----

// describe renders an error with its catalogue code, for failure messages.
func describe(err error) string {
	if err == nil {
		return "no error"
	}
	var te *tidemq.Error
	if errors.As(err, &te) {
		return fmt.Sprintf("%s (%q)", te.Code.Code, te.Message)
	}
	return fmt.Sprintf("non-catalogue error %T: %v", err, err)
}

// wantCode reports an error unless err carries the catalogue entry code.
// Like wantMessage and wantClientError it does not stop the test, so that
// one run shows every failed expectation of a check.
func (e *env) wantCode(err error, code *tidemq.ErrorCode, what string, args ...any) bool {
	e.t.Helper()
	if !tidemq.HasCode(err, code) {
		e.t.Errorf("%s: got %s, want %s", fmt.Sprintf(what, args...), describe(err), code.Code)
		return false
	}
	return true
}

// wantMessage reports an error unless err carries code and its message
// contains text.
func (e *env) wantMessage(err error, code *tidemq.ErrorCode, text, what string, args ...any) {
	e.t.Helper()
	if !e.wantCode(err, code, what, args...) {
		return
	}
	var te *tidemq.Error
	errors.As(err, &te)
	if !strings.Contains(te.Message, text) {
		e.t.Errorf("%s: message %q does not contain %q", fmt.Sprintf(what, args...), te.Message, text)
	}
}

// wantExact reports an error unless err carries code and exactly the
// message text: for the messages a client sees word for word.
func (e *env) wantExact(err error, code *tidemq.ErrorCode, text, what string, args ...any) {
	e.t.Helper()
	if !e.wantCode(err, code, what, args...) {
		return
	}
	var te *tidemq.Error
	errors.As(err, &te)
	if te.Message != text {
		e.t.Errorf("%s: message %q, want %q", fmt.Sprintf(what, args...), te.Message, text)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// wantClientError reports an error unless err is a catalogue error that
// blames the sender (any code): for cases where the reference says only
// that AWS rejects the request.
func (e *env) wantClientError(err error, what string, args ...any) {
	e.t.Helper()
	var te *tidemq.Error
	if !errors.As(err, &te) || te.Code.Fault != tidemq.Sender {
		e.t.Errorf("%s: got %s, want a client (Sender) error", fmt.Sprintf(what, args...), describe(err))
	}
}

// ok fails the test on an error.
func (e *env) ok(err error, what string, args ...any) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %s", fmt.Sprintf(what, args...), describe(err))
	}
}

// ---- queues ----

func (e *env) tryCreate(name string, attrs map[string]string) (*tidemq.QueueInfo, error) {
	return e.b.CreateQueue(e.ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs})
}

// create creates a queue (FIFO when the name ends in .fifo).
func (e *env) create(name string, attrs map[string]string) *tidemq.QueueInfo {
	e.t.Helper()
	a := map[string]string{}
	for k, v := range attrs {
		a[k] = v
	}
	if strings.HasSuffix(name, ".fifo") {
		a[tidemq.AttrFifoQueue] = "true"
	}
	info, err := e.tryCreate(name, a)
	e.ok(err, "CreateQueue(%s, %v)", name, a)
	if info == nil || info.Name != name {
		e.t.Fatalf("CreateQueue(%s) returned %+v", name, info)
	}
	return info
}

func (e *env) arn(name string) string { return tidemq.QueueARN(Region, AccountID, name) }

func (e *env) tryAttrs(q string, names ...string) (map[string]string, error) {
	return e.b.GetQueueAttributes(e.ctx, tidemq.GetQueueAttributesParams{Queue: q, Names: names})
}

// attrs returns the queue's attributes (all of them when names is empty).
func (e *env) attrs(q string, names ...string) map[string]string {
	e.t.Helper()
	if len(names) == 0 {
		names = []string{tidemq.AttrAll}
	}
	a, err := e.tryAttrs(q, names...)
	e.ok(err, "GetQueueAttributes(%s, %v)", q, names)
	return a
}

func (e *env) trySet(q string, attrs map[string]string) error {
	return e.b.SetQueueAttributes(e.ctx, tidemq.SetQueueAttributesParams{Queue: q, Attributes: attrs})
}

func (e *env) set(q string, attrs map[string]string) {
	e.t.Helper()
	e.ok(e.trySet(q, attrs), "SetQueueAttributes(%s, %v)", q, attrs)
}

// redrive renders a RedrivePolicy that dead-letters to dlq.
func (e *env) redrive(dlq string, max int) string {
	return tidemq.RedrivePolicy{DeadLetterTargetARN: e.arn(dlq), MaxReceiveCount: max}.String()
}

// counts are the three ApproximateNumberOf* counters.
type counts struct{ visible, inflight, delayed int }

func (c counts) String() string {
	return fmt.Sprintf("visible=%d notVisible=%d delayed=%d", c.visible, c.inflight, c.delayed)
}

func (e *env) counts(q string) counts {
	e.t.Helper()
	a := e.attrs(q, tidemq.AttrApproximateNumberOfMessages, tidemq.AttrApproximateNumberOfMessagesNotVisible,
		tidemq.AttrApproximateNumberOfMessagesDelayed)
	n := func(name string) int {
		v, err := strconv.Atoi(a[name])
		if err != nil {
			e.t.Fatalf("%s of %s is %q, not a number", name, q, a[name])
		}
		return v
	}
	return counts{n(tidemq.AttrApproximateNumberOfMessages), n(tidemq.AttrApproximateNumberOfMessagesNotVisible),
		n(tidemq.AttrApproximateNumberOfMessagesDelayed)}
}

// wantCounts fails the test unless the counters of q are exactly these.
func (e *env) wantCounts(q string, visible, inflight, delayed int, when string) {
	e.t.Helper()
	got, want := e.counts(q), counts{visible, inflight, delayed}
	if got != want {
		e.t.Fatalf("%s: counters of %s: got %v, want %v", when, q, got, want)
	}
}

// ---- send ----

func (e *env) trySendBatch(q string, entries ...tidemq.SendEntry) ([]tidemq.SendResult, error) {
	return e.b.SendMessages(e.ctx, tidemq.SendMessagesParams{Queue: q, Entries: entries, Batch: true, Client: client})
}

// trySend sends one message (SendMessage) and returns its result, with the
// error either as the request's or as the entry's: the Broker may report a
// single message's problem either way.
func (e *env) trySend(q string, entry tidemq.SendEntry) (tidemq.SendResult, error) {
	e.t.Helper()
	if entry.ID == "" {
		entry.ID = "0"
	}
	res, err := e.b.SendMessages(e.ctx, tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{entry}, Client: client})
	if err != nil {
		return tidemq.SendResult{}, err
	}
	if len(res) != 1 {
		e.t.Fatalf("SendMessages with one entry returned %d results", len(res))
	}
	return res[0], res[0].Err
}

func (e *env) send(q string, entry tidemq.SendEntry) tidemq.SendResult {
	e.t.Helper()
	r, err := e.trySend(q, entry)
	e.ok(err, "SendMessage(%s, %.40q)", q, entry.Body)
	if r.MessageID == "" {
		e.t.Fatalf("SendMessage(%s) returned no MessageId", q)
	}
	return r
}

// sendBody sends a plain message to a standard queue.
func (e *env) sendBody(q, body string) tidemq.SendResult {
	e.t.Helper()
	return e.send(q, tidemq.SendEntry{Body: body})
}

// sendFIFO sends to a FIFO queue; dedup "" relies on content-based dedup.
func (e *env) sendFIFO(q, group, dedup, body string) tidemq.SendResult {
	e.t.Helper()
	r := e.send(q, tidemq.SendEntry{Body: body, MessageGroupID: group, MessageDeduplicationID: dedup})
	if r.SequenceNumber == "" {
		e.t.Fatalf("SendMessage(%s) to a FIFO queue returned no SequenceNumber", q)
	}
	return r
}

// ---- receive ----

type recvOpt func(*tidemq.ReceiveMessagesParams)

func withVisibility(s int) recvOpt {
	return func(p *tidemq.ReceiveMessagesParams) { p.VisibilityTimeout = intp(s) }
}
func withWait(s int) recvOpt {
	return func(p *tidemq.ReceiveMessagesParams) { p.WaitTimeSeconds = intp(s) }
}
func withQueueWait() recvOpt {
	return func(p *tidemq.ReceiveMessagesParams) { p.WaitTimeSeconds = nil }
}
func withMax(n int) recvOpt {
	return func(p *tidemq.ReceiveMessagesParams) { p.MaxNumberOfMessages = intp(n) }
}
func withAttempt(id string) recvOpt {
	return func(p *tidemq.ReceiveMessagesParams) { p.ReceiveRequestAttemptID = id }
}

// params builds receive parameters: a short poll (WaitTimeSeconds 0) unless
// an option says otherwise. max 0 leaves MaxNumberOfMessages out.
func params(q string, max int, opts ...recvOpt) tidemq.ReceiveMessagesParams {
	p := tidemq.ReceiveMessagesParams{Queue: q, WaitTimeSeconds: intp(0), Client: client}
	if max != 0 {
		p.MaxNumberOfMessages = intp(max)
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

type recvResult struct {
	msgs []*tidemq.Message
	err  error
}

// tryReceive receives, failing the test if the call does not return within
// the real-time guard (a short poll must not wait).
func (e *env) tryReceive(q string, max int, opts ...recvOpt) ([]*tidemq.Message, error) {
	e.t.Helper()
	p := params(q, max, opts...)
	ch := make(chan recvResult, 1)
	b, ctx := e.b, e.ctx
	go func() {
		m, err := b.ReceiveMessages(ctx, p)
		ch <- recvResult{m, err}
	}()
	select {
	case r := <-ch:
		return r.msgs, r.err
	case <-time.After(guard):
		e.t.Fatalf("ReceiveMessages(%s) did not return within %v of real time", q, guard)
		return nil, nil
	}
}

func (e *env) receive(q string, max int, opts ...recvOpt) []*tidemq.Message {
	e.t.Helper()
	m, err := e.tryReceive(q, max, opts...)
	e.ok(err, "ReceiveMessages(%s)", q)
	if max == 0 {
		max = 1
	}
	if len(m) > max {
		e.t.Fatalf("ReceiveMessages(%s, max %d) returned %d messages", q, max, len(m))
	}
	for _, msg := range m {
		if msg == nil || msg.MessageID == "" || msg.ReceiptHandle == "" {
			e.t.Fatalf("ReceiveMessages(%s) returned a message without MessageId or ReceiptHandle: %+v", q, msg)
		}
	}
	return m
}

// receiveOne receives and expects exactly one message.
func (e *env) receiveOne(q string, opts ...recvOpt) *tidemq.Message {
	e.t.Helper()
	m := e.receive(q, 1, opts...)
	if len(m) != 1 {
		e.t.Fatalf("ReceiveMessages(%s): got %d messages, want 1", q, len(m))
	}
	return m[0]
}

// receiveNone expects an empty receive.
func (e *env) receiveNone(q, when string) {
	e.t.Helper()
	if m := e.receive(q, 10); len(m) != 0 {
		e.t.Fatalf("%s: ReceiveMessages(%s) returned %d messages (first %q), want none", when, q, len(m), m[0].Body)
	}
}

// bodies lists the bodies of messages.
func bodies(msgs []*tidemq.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Body
	}
	return out
}

func sortedBodies(msgs []*tidemq.Message) []string {
	b := bodies(msgs)
	sort.Strings(b)
	return b
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ---- delete and visibility ----

// tryDelete deletes one message, returning the request's or the entry's error.
func (e *env) tryDelete(q, handle string) error {
	e.t.Helper()
	res, err := e.b.DeleteMessages(e.ctx, tidemq.DeleteMessagesParams{Queue: q, Entries: []tidemq.DeleteEntry{{ID: "0", ReceiptHandle: handle}}})
	if err != nil {
		return err
	}
	if len(res) != 1 {
		e.t.Fatalf("DeleteMessages with one entry returned %d results", len(res))
	}
	return res[0]
}

func (e *env) del(q, handle string) {
	e.t.Helper()
	e.ok(e.tryDelete(q, handle), "DeleteMessage(%s)", q)
}

// tryChange changes one message's visibility, returning the request's or
// the entry's error.
func (e *env) tryChange(q, handle string, secs int) error {
	e.t.Helper()
	res, err := e.b.ChangeMessageVisibility(e.ctx, tidemq.ChangeVisibilityParams{Queue: q,
		Entries: []tidemq.ChangeVisibilityEntry{{ID: "0", ReceiptHandle: handle, VisibilityTimeout: intp(secs)}}})
	if err != nil {
		return err
	}
	if len(res) != 1 {
		e.t.Fatalf("ChangeMessageVisibility with one entry returned %d results", len(res))
	}
	return res[0]
}

func (e *env) change(q, handle string, secs int) {
	e.t.Helper()
	e.ok(e.tryChange(q, handle, secs), "ChangeMessageVisibility(%s, %d)", q, secs)
}

// ---- long polls ----

// poll is a receive running in its own goroutine.
type poll struct {
	e  *env
	q  string
	ch chan recvResult
}

// startPoll starts a receive in a goroutine and returns once it has reached
// a timed wait (one more timer on the fake clock than before it started).
func (e *env) startPoll(ctx context.Context, q string, max int, opts ...recvOpt) *poll {
	e.t.Helper()
	p := params(q, max, opts...)
	base := e.clk.Timers()
	pl := &poll{e: e, q: q, ch: make(chan recvResult, 1)}
	b := e.b
	go func() {
		m, err := b.ReceiveMessages(ctx, p)
		pl.ch <- recvResult{m, err}
	}()
	if !e.clk.WaitForTimers(base+1, guard) {
		select {
		case r := <-pl.ch:
			e.t.Fatalf("long poll on %s returned at once (%d messages, %s) instead of waiting", q, len(r.msgs), describe(r.err))
		default:
			e.t.Fatalf("long poll on %s did not reach a timed wait on the clock within %v", q, guard)
		}
	}
	return pl
}

// result waits (in real time, bounded by the guard) for the poll to end.
func (p *poll) result() ([]*tidemq.Message, error) {
	p.e.t.Helper()
	select {
	case r := <-p.ch:
		return r.msgs, r.err
	case <-time.After(guard):
		p.e.t.Fatalf("long poll on %s did not return within %v of real time", p.q, guard)
		return nil, nil
	}
}

// wantPending fails the test if the poll has already returned.
func (p *poll) wantPending(when string) {
	p.e.t.Helper()
	select {
	case r := <-p.ch:
		p.e.t.Fatalf("%s: long poll on %s already returned (%d messages, %s)", when, p.q, len(r.msgs), describe(r.err))
	default:
	}
}

// ---- FIFO sequence numbers ----

// seq parses a SequenceNumber: a decimal string compared as a number.
func (e *env) seq(s string) *big.Int {
	e.t.Helper()
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Sign() < 0 || strings.TrimSpace(s) != s {
		e.t.Fatalf("SequenceNumber %q is not a non-negative decimal number", s)
	}
	return n
}

// wantIncreasing fails unless the sequence numbers strictly increase.
func (e *env) wantIncreasing(seqs []string, what string) {
	e.t.Helper()
	for i := 1; i < len(seqs); i++ {
		if e.seq(seqs[i]).Cmp(e.seq(seqs[i-1])) <= 0 {
			e.t.Fatalf("%s: SequenceNumber %s does not follow %s", what, seqs[i], seqs[i-1])
		}
	}
}

// ---- history ----

func hasHistory(m *tidemq.Message, kind string) bool {
	for _, h := range m.History {
		if h.Kind == kind {
			return true
		}
	}
	return false
}

func historyKinds(m *tidemq.Message) []string {
	var k []string
	for _, h := range m.History {
		k = append(k, h.Kind)
	}
	return k
}
