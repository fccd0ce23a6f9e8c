package sns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemq/tidemq"
)

// deliverRecord serves the deliveries of a durably recorded publish: SQS
// deliveries now, concurrently (one publish at a time per FIFO topic, so
// each queue keeps the publish order), HTTP/HTTPS deliveries in the
// background. A delivery that fails for a server-side reason is retried in
// the background; one that cannot succeed goes to the dead-letter queue.
// Deliveries run on the service's context, not the request's: once the
// publish is recorded, a client that hangs up does not stop them.
//
// A FIFO publish retries its SQS deliveries before it answers (wait), with
// the topic's lock held, so that the next publish to the topic cannot
// overtake it in a queue, for at most Options.FIFORetryWait; recovery at
// Open does not wait (a broker that keeps failing would hold Open for the
// whole retry policy).
func (s *Service) deliverRecord(r *record, wait bool) {
	var delivered []*delivery // forgotten in the outbox in one write
	// The SQS deliveries go into their queues' lanes together (lanes.go),
	// without a goroutine each: their entries are built here, one after
	// the other (the envelope once for all, envelope.go), and this caller
	// waits for their results at once.
	type sqsDelivery struct {
		sub   *Subscription
		d     *delivery
		queue string
		err   error // building the entry failed
	}
	sqs := make([]sqsDelivery, 0, len(r.deliveries))
	for _, d := range r.deliveries {
		sub, ok := s.store.subscription(d.sub)
		if !ok {
			s.stats.unsubscribed.Add(1)
			s.done(d)
			continue
		}
		if sub.IsHTTP() {
			if !s.takeHTTPSlot(sub.ARN) {
				s.deadLetter(sub, d, fmt.Errorf("%d deliveries to this endpoint are already waiting (Options.MaxPendingHTTP)", s.opt.MaxPendingHTTP))
				continue
			}
			s.spawn(func() {
				defer s.releaseHTTPSlot(sub.ARN)
				s.retryLoop(d, 0, nil)
			})
			continue
		}
		sqs = append(sqs, sqsDelivery{sub: sub, d: d})
	}
	var sent, wg sync.WaitGroup
	entries := make([]laneEntry, len(sqs))
	queues := make([]string, 0, len(sqs))
	inLanes := make([]*laneEntry, 0, len(sqs))
	for i := range sqs {
		x := &sqs[i]
		var entry tidemq.SendEntry
		x.queue, entry, x.err = s.queueEntry(x.sub, r, x.sub.Endpoint)
		if x.err != nil {
			continue
		}
		entries[i] = laneEntry{entry: entry, client: r.Client, wg: &sent}
		queues = append(queues, x.queue)
		inLanes = append(inLanes, &entries[i])
	}
	s.sendEntries(queues, inLanes)
	sent.Wait()
	for i := range sqs {
		x := &sqs[i]
		err := x.err
		if err == nil {
			err = entries[i].err
		}
		if err == nil {
			s.stats.delivered.Add(1)
			delivered = append(delivered, x.d)
			continue
		}
		s.log.Debug("sns: SQS delivery failed", "queue", x.queue, "err", err)
		sub, d := x.sub, x.d
		permanent := isPermanent(err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch {
			case permanent:
				s.deadLetter(sub, d, err)
			case s.ctx.Err() != nil:
				// Closing: the delivery stays in the outbox.
			case wait && r.FIFO:
				// Retried before answering, so that the next publish cannot
				// overtake it; but never for longer than FIFORetryWait: a
				// broker that keeps failing must not hang the request.
				done := make(chan struct{})
				s.spawn(func() { defer close(done); s.retryLoop(d, 1, err) })
				t := time.NewTimer(s.opt.FIFORetryWait)
				select {
				case <-done:
				case <-t.C:
					s.log.Warn("sns: FIFO delivery still failing; it goes on in the background and a later publish may overtake it",
						"subscription", sub.ARN, "message_id", d.rec.MessageID, "err", err)
				}
				t.Stop()
			default:
				s.spawn(func() { s.retryLoop(d, 1, err) })
			}
		}()
	}
	wg.Wait()
	// The deliveries are durable in their queues; forgetting them in the
	// outbox need not hold the publish's answer (a crash before that write
	// only repeats them: at-least-once). Recovery has no answer to give:
	// it forgets them before it goes on.
	switch {
	case len(delivered) == 0:
	case wait:
		s.spawn(func() { s.doneAll(r, delivered) })
	default:
		s.doneAll(r, delivered)
	}
}

// deliverDirect makes the one SQS delivery of r, which is not in the
// outbox. If it succeeds, nothing is written but the message in its queue.
// If it fails, r is recorded in the outbox first (an error here fails the
// publish) and the failure is handled as deliverRecord does: retried in the
// background, or dead-lettered.
func (s *Service) deliverDirect(r *record) error {
	d := r.deliveries[0]
	sub, ok := s.store.subscription(d.sub)
	if !ok {
		s.stats.unsubscribed.Add(1)
		return nil
	}
	err, permanent := s.attempt(sub, d)
	if err == nil {
		s.stats.delivered.Add(1)
		return nil
	}
	if cerr := s.commitRecords([]*record{r}, nil); cerr != nil {
		return cerr
	}
	switch {
	case permanent:
		s.deadLetter(sub, d, err)
	case s.ctx.Err() != nil:
		// Closing: the delivery stays in the outbox.
	default:
		s.spawn(func() { s.retryLoop(d, 1, err) })
	}
	return nil
}

// takeHTTPSlot counts a delivery to an HTTP subscription in, unless
// MaxPendingHTTP of them are already held.
func (s *Service) takeHTTPSlot(sub string) bool {
	v, _ := s.httpQueued.LoadOrStore(sub, new(atomic.Int64))
	n := v.(*atomic.Int64)
	if n.Add(1) > int64(s.opt.MaxPendingHTTP) {
		n.Add(-1)
		return false
	}
	return true
}

func (s *Service) releaseHTTPSlot(sub string) {
	if v, ok := s.httpQueued.Load(sub); ok {
		v.(*atomic.Int64).Add(-1)
	}
}

// retryLoop makes attempts n, n+1, ... of a delivery (0 is the first
// attempt, n ≥ 1 the n-th retry, after the policy's delay) until it
// succeeds, fails for good, exhausts the policy or the service closes.
func (s *Service) retryLoop(d *delivery, n int, lastErr error) {
	for ; ; n++ {
		sub, ok := s.store.subscription(d.sub)
		if !ok {
			s.stats.unsubscribed.Add(1)
			s.done(d)
			return
		}
		if n > 0 {
			policy := s.sqsRetry
			if sub.IsHTTP() {
				policy, _ = s.httpPolicy(s.topicDeliveryPolicy(sub.TopicARN), sub.Attributes["DeliveryPolicy"])
			}
			delay, ok := policy.Delay(n)
			if !ok {
				s.deadLetter(sub, d, lastErr)
				return
			}
			if !s.sleep(delay) {
				return // closing: the delivery stays in the outbox
			}
			s.stats.retries.Add(1)
		}
		err, permanent := s.attempt(sub, d)
		if err == nil {
			s.stats.delivered.Add(1)
			s.done(d)
			return
		}
		if s.ctx.Err() != nil {
			return
		}
		if permanent {
			s.deadLetter(sub, d, err)
			return
		}
		s.log.Debug("sns: delivery failed; will retry", "subscription", sub.ARN, "message_id", d.rec.MessageID, "attempt", n+1, "err", err)
		lastErr = err
	}
}

// sleep waits d on the service clock; false means the service is closing.
func (s *Service) sleep(d time.Duration) bool {
	if d <= 0 {
		return s.ctx.Err() == nil
	}
	t := s.opt.Clock.NewTimer(d)
	select {
	case <-t.C():
		return true
	case <-s.ctx.Done():
		t.Stop()
		return false
	}
}

// attempt makes one delivery attempt. permanent is true when retrying
// cannot help (the queue does not exist, the message is not acceptable).
func (s *Service) attempt(sub *Subscription, d *delivery) (err error, permanent bool) {
	if sub.IsHTTP() {
		err := s.postNotification(sub, d.rec)
		return err, clientSide(err)
	}
	queue, err := s.sendToQueue(sub, d.rec, sub.Endpoint)
	if err != nil {
		s.log.Debug("sns: SQS delivery failed", "queue", queue, "err", err)
		return err, isPermanent(err)
	}
	return nil, false
}

// isPermanent reports whether a broker error is the sender's fault (a
// missing queue, an invalid message): retrying would fail the same way.
// A throttled send (a queue full to --max-queue-bytes) is retried.
func isPermanent(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || tidemq.IsThrottled(err) {
		return false
	}
	var e *tidemq.Error
	return errors.As(err, &e) && e.Code != nil && e.Code.Fault == tidemq.Sender
}

// sendToQueue sends what sub receives of r to the queue of queueARN: the
// subscription's queue, or its dead-letter queue. It returns the queue's
// name.
func (s *Service) sendToQueue(sub *Subscription, r *record, queueARN string) (string, error) {
	queue, entry, err := s.queueEntry(sub, r, queueARN)
	if err != nil {
		return queue, err
	}
	return queue, s.sendEntry(queue, entry, r.Client)
}

// queueEntry builds what sub receives of r as an entry for the queue of
// queueARN (the subscription's queue, or its dead-letter queue), and
// returns the queue's name with it.
func (s *Service) queueEntry(sub *Subscription, r *record, queueARN string) (string, tidemq.SendEntry, error) {
	// The queue's name as the broker knows it: another account's queue
	// is "<account>:<name>" (tidemq.AccountQueueName).
	queue, ok := tidemq.QueueNameOfARN(queueARN, s.opt.Region, s.opt.AccountID)
	if !ok {
		return "", tidemq.SendEntry{}, tidemq.NonExistentQueue()
	}
	if s.opt.DeliveryCheck != nil {
		// Under --auth the queue's policy must allow the topic, as on AWS;
		// a refusal is the sender's fault, so the delivery is not retried.
		if err := s.opt.DeliveryCheck(s.ctx, sub.TopicARN, queueARN); err != nil {
			return queue, tidemq.SendEntry{}, err
		}
	}
	msg := r.message(sub.Protocol)
	entry := tidemq.SendEntry{MessageGroupID: r.GroupID}
	if r.FIFO && !strings.HasSuffix(queue, ".fifo") {
		// A FIFO topic's group is for its FIFO queues; a standard queue
		// subscribed to it gets the message without one, as on AWS.
		entry.MessageGroupID = ""
	}
	if r.TraceHeader != "" {
		entry.SystemAttributes = map[string]tidemq.MessageAttributeValue{"AWSTraceHeader": {DataType: "String", StringValue: r.TraceHeader}}
	}
	if strings.HasSuffix(queue, ".fifo") {
		entry.MessageDeduplicationID = r.DedupID
		if entry.MessageDeduplicationID == "" {
			h := sha256.Sum256([]byte(msg))
			entry.MessageDeduplicationID = hex.EncodeToString(h[:])
		}
	}
	if sub.Attributes["RawMessageDelivery"] == "true" {
		entry.Body = msg
		if len(r.Attributes) > 0 {
			entry.Attributes = make(map[string]tidemq.MessageAttributeValue, len(r.Attributes))
			for name, v := range r.Attributes {
				entry.Attributes[name] = tidemq.MessageAttributeValue{DataType: v.DataType, StringValue: v.StringValue, BinaryValue: v.BinaryValue}
			}
		}
	} else {
		body, err := s.envelope(r, sub, msg)
		if err != nil {
			return queue, tidemq.SendEntry{}, err
		}
		entry.Body = body
	}
	return queue, entry, nil
}

// deadLetter ends a delivery that cannot be made: the message goes to the
// subscription's dead-letter queue as the subscriber would have received
// it, or, without a RedrivePolicy, is logged and counted. Nothing ends
// silently. A dead-letter queue that fails for a server-side reason is
// retried in the background by the SQS retry policy; while the service is
// closing the delivery stays in the outbox, so that the next Open tries
// again. Only a dead-letter queue that refuses the message for good (it
// does not exist, say) or that still fails when the policy is exhausted
// loses it, and that is logged and counted.
func (s *Service) deadLetter(sub *Subscription, d *delivery, cause error) {
	r := d.rec
	if sub.Attributes["RedrivePolicy"] == "" {
		s.stats.undeliverable.Add(1)
		s.log.Warn("sns: message undeliverable and the subscription has no RedrivePolicy; dropped",
			"topic", r.TopicARN, "subscription", sub.ARN, "endpoint", sub.Endpoint, "message_id", r.MessageID, "err", cause)
		s.done(d)
		return
	}
	err := s.tryDeadLetter(sub, d, cause)
	if err == nil || s.ctx.Err() != nil {
		return
	}
	s.spawn(func() {
		for n := 1; ; n++ {
			delay, ok := s.sqsRetry.Delay(n)
			if !ok {
				s.lostDeadLetter(sub, d, cause, err)
				return
			}
			if !s.sleep(delay) {
				return // closing: the delivery stays in the outbox
			}
			s.stats.retries.Add(1)
			if err = s.tryDeadLetter(sub, d, cause); err == nil || s.ctx.Err() != nil {
				return
			}
		}
	})
}

// tryDeadLetter makes one attempt to send d to sub's dead-letter queue. It
// returns nil when the delivery is finished (removed from the outbox):
// dead-lettered, or lost because the queue refused it for good. It returns
// the error, leaving the delivery in the outbox, after a server-side
// failure that may pass.
func (s *Service) tryDeadLetter(sub *Subscription, d *delivery, cause error) error {
	r := d.rec
	queue, err := s.sendToQueue(sub, r, deadLetterTargetARN(sub.Attributes["RedrivePolicy"]))
	switch {
	case err == nil:
		s.stats.deadLettered.Add(1)
		s.log.Warn("sns: message undeliverable; moved to the subscription's dead-letter queue",
			"topic", r.TopicARN, "subscription", sub.ARN, "endpoint", sub.Endpoint, "dead_letter_queue", queue,
			"message_id", r.MessageID, "err", cause)
		s.done(d)
		return nil
	case isPermanent(err):
		s.lostDeadLetter(sub, d, cause, err)
		return nil
	}
	s.log.Debug("sns: dead-letter queue failed; will retry", "subscription", sub.ARN, "dead_letter_queue", queue,
		"message_id", r.MessageID, "err", err)
	return err
}

// lostDeadLetter ends a delivery that its dead-letter queue refused.
func (s *Service) lostDeadLetter(sub *Subscription, d *delivery, cause, dlqErr error) {
	r := d.rec
	s.stats.lost.Add(1)
	s.log.Error("sns: message undeliverable and its dead-letter queue refused it; lost",
		"topic", r.TopicARN, "subscription", sub.ARN, "endpoint", sub.Endpoint,
		"dead_letter_queue", deadLetterTargetARN(sub.Attributes["RedrivePolicy"]),
		"message_id", r.MessageID, "err", cause, "dlq_err", dlqErr)
	s.done(d)
}
