package tidemq

import "context"

// Leases elect, among the nodes that share one store, the node that runs
// a job that must run once: the triggers' pollers, the alarms and their
// webhook, the redelivery of the SNS outbox. A lease has a name, a holder
// and an expiry; the holder renews it well before it expires, and stops
// the job as soon as it cannot be sure it still holds it.
//
// SingleNode is the Leases of a server alone on its store (the embedded
// engine); postgres.Leases are the leases of nodes sharing PostgreSQL.
type Leases interface {
	// Hold runs job each time this node takes the lease name, until ctx
	// ends. job's context is cancelled when the lease may be lost (a
	// renewal failed or came too late) or ctx ends; Hold waits for job to
	// return before it tries to take the lease again or returns, and
	// releases the lease when it returns, so that another node takes over
	// without waiting for the expiry.
	Hold(ctx context.Context, name string, job func(ctx context.Context))
}

// SingleNode is the Leases of a node that shares its store with no other:
// it always holds every lease, so Hold runs job once, with ctx.
type SingleNode struct{}

// Hold runs job(ctx).
func (SingleNode) Hold(ctx context.Context, _ string, job func(ctx context.Context)) { job(ctx) }
