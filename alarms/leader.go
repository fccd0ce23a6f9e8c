package alarms

import (
	"context"
	"sync/atomic"
)

// LeaderWebhook forwards transitions to Webhook only while Lead runs.
// Nodes sharing PostgreSQL each evaluate the alarms (so that each answers
// GET /tidemq/alarms from the same shared queues), and only the node
// holding the lease notifies: a transition is sent once, not once per
// node. A node that takes over has been evaluating all along, so it
// neither repeats the transitions the previous holder sent nor misses the
// ones that come next.
type LeaderWebhook struct {
	Webhook Webhook
	leading atomic.Bool
}

// Send forwards t while this node leads, and drops it otherwise.
func (w *LeaderWebhook) Send(t Transition) {
	if w.leading.Load() {
		w.Webhook.Send(t)
	}
}

// Lead forwards transitions until ctx ends.
func (w *LeaderWebhook) Lead(ctx context.Context) {
	w.leading.Store(true)
	<-ctx.Done()
	w.leading.Store(false)
}
