package trigger

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/tidemq/tidemq"
)

// The visibility timeout under a running trigger.
//
// A trigger is created only when its function timeout is below its queue's
// visibility timeout (AWS's rule for an event source mapping): otherwise a
// message still being processed becomes visible again and is delivered to
// a second invocation. SetQueueAttributes may lower the visibility timeout
// later, under the running trigger. AWS does not look again and the work is
// done twice; tidemq re-reads the queue's visibility timeout before every
// batch (recheck) and, while it is not above the function timeout, does not
// receive: the trigger is Paused, says why in its StateReason and LastError,
// logs one warning when it pauses and one line when it resumes, counts the
// pause (Stats.Pauses, tidemq_trigger_pauses_total) and shows it in
// tidemq_trigger_state. It re-reads every pauseRecheck and resumes by
// itself once the visibility timeout is above the function timeout again
// (or once the trigger's Timeout was lowered, which restarts it).
//
// Why not extend the visibility of the batch in flight instead
// (ChangeMessageVisibility as a heartbeat)? The queue's visibility timeout
// is also the retry delay of every failed message; a trigger that quietly
// outlived it would hide the misconfiguration that double-processes on AWS,
// which is what tidemq is run locally to catch. A batch in flight when the
// timeout is lowered keeps the deadline it was received with (as on SQS),
// and a receive asks for the visibility timeout that was checked (see
// collect), so no batch is ever received for less than its function
// timeout.

// pauseRecheck is how often a paused trigger re-reads its queue's
// visibility timeout.
const pauseRecheck = time.Second

// visibilityTimeout returns the queue's VisibilityTimeout in seconds.
func (m *Manager) visibilityTimeout(ctx context.Context, queue string) (int, error) {
	attrs, err := m.o.Broker.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: queue, Names: []string{tidemq.AttrVisibilityTimeout}})
	if err != nil {
		return 0, err
	}
	vis, err := strconv.Atoi(attrs[tidemq.AttrVisibilityTimeout])
	if err != nil {
		return 0, fmt.Errorf("queue %s: bad VisibilityTimeout %q", queue, attrs[tidemq.AttrVisibilityTimeout])
	}
	return vis, nil
}

// recheck re-reads the queue's visibility timeout before a batch: it
// returns it when it is above the function timeout, and otherwise pauses
// the trigger and returns a *VisibilityError. While paused, the pollers
// share one read per pauseRecheck (a trigger may have 1,000 of them).
func (r *runner) recheck(ctx context.Context) (int, error) {
	r.mu.Lock()
	if r.paused != "" {
		if time.Since(r.pausedAt) < pauseRecheck {
			ve := r.pausedFor
			r.mu.Unlock()
			return 0, ve
		}
		// This poller re-reads for all: the others, waking from the
		// same pause at the same moment, find the recheck taken (it
		// was one read per poller each second when they all woke
		// together).
		r.pausedAt = time.Now()
	}
	r.mu.Unlock()
	vis, err := r.m.visibilityTimeout(ctx, r.cfg.Queue)
	if err != nil {
		return 0, err
	}
	if err := r.cfg.checkVisibility(time.Duration(vis) * time.Second); err != nil {
		r.pause(err.(*VisibilityError))
		return 0, err
	}
	r.resume()
	return vis, nil
}

// pause marks the trigger Paused for ve; the first time, it warns and
// counts the pause.
func (r *runner) pause(ve *VisibilityError) {
	why := fmt.Sprintf("paused: the queue's visibility timeout (%s) is not above the function timeout (%s), so a message still being processed would be delivered again; raise the queue's VisibilityTimeout or lower the trigger's Timeout", ve.Visibility, ve.Timeout)
	r.mu.Lock()
	was := r.paused
	r.paused, r.pausedFor, r.pausedAt = why, ve, time.Now()
	if was == "" {
		r.lastErr, r.lastErrAt = why, time.Now()
	}
	r.mu.Unlock()
	if was != "" {
		return
	}
	r.stats.pauses.Add(1)
	r.m.log.Warn("trigger paused: its queue's visibility timeout is not above the function timeout, messages in flight would be processed twice",
		"trigger", r.cfg.Name, "queue", r.cfg.Queue, "visibility_timeout", ve.Visibility, "function_timeout", ve.Timeout)
}

// resume clears a pause, and says so.
func (r *runner) resume() {
	r.mu.Lock()
	was := r.paused
	r.paused = ""
	r.mu.Unlock()
	if was != "" {
		r.m.log.Info("trigger resumed: its queue's visibility timeout is above the function timeout again", "trigger", r.cfg.Name, "queue", r.cfg.Queue)
	}
}

// clearFailing clears the Failing state after a receive that worked.
func (r *runner) clearFailing() {
	r.mu.Lock()
	r.failing = ""
	r.mu.Unlock()
}
