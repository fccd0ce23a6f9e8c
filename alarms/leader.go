package alarms

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
)

// LeaderWebhook forwards transitions to Webhook only while Lead runs.
// Nodes sharing PostgreSQL each evaluate the alarms (so that each answers
// GET /tidemq/alarms from the same shared queues), and only the node
// holding the lease notifies: a transition is sent once, not once per
// node. A node that takes over has been evaluating all along, so it
// neither repeats the transitions the previous holder sent nor misses the
// ones that come next.
//
// With Fence set, a node that was paused past its lease (and so still
// believes it leads) does not notify either: each transition is forwarded
// by Lead's goroutine only after Fence confirmed, against the database,
// that the lease's token Lead's context carries is still current. The
// check comes right before the forward; what the database cannot fence is
// a pause between the two, which the receiver's grouping (Alertmanager's
// groupKey) absorbs as a repeat.
type LeaderWebhook struct {
	Webhook Webhook
	// Fence, when set, checks the fence of Lead's context (see
	// postgres.Leases.Check); set it before Lead first runs.
	Fence func(ctx context.Context) error
	// Logger receives the refusals; slog.Default when nil.
	Logger *slog.Logger

	leading atomic.Bool
	once    sync.Once
	queue   chan Transition // with Fence: Send -> Lead
}

// fencedQueue is how many transitions wait for Lead's check; more are
// dropped, as a full webhook queue drops them.
const fencedQueue = 256

func (w *LeaderWebhook) init() { w.once.Do(func() { w.queue = make(chan Transition, fencedQueue) }) }

// Send forwards t while this node leads, and drops it otherwise. It does
// not block.
func (w *LeaderWebhook) Send(t Transition) {
	if !w.leading.Load() {
		return
	}
	if w.Fence == nil {
		w.Webhook.Send(t)
		return
	}
	w.init()
	select {
	case w.queue <- t:
	default:
	}
}

// Lead forwards transitions until ctx ends.
func (w *LeaderWebhook) Lead(ctx context.Context) {
	w.init()
	w.leading.Store(true)
	defer w.leading.Store(false)
	if w.Fence == nil {
		<-ctx.Done()
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-w.queue:
			if err := w.Fence(ctx); err != nil {
				if ctx.Err() == nil {
					w.logger().Warn("alarm notification not sent: this node may no longer lead", "alarm", t.Alarm.Alarm, "queue", t.Queue, "err", err)
				}
				continue
			}
			w.Webhook.Send(t)
		}
	}
}

func (w *LeaderWebhook) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.Default()
}
