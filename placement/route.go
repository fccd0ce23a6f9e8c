package placement

import (
	"context"

	"github.com/tidemq/tidemq"
)

// The calls on one queue, run on its cluster: call is the Broker method
// (a method expression, tidemq.Broker.GetQueue), queue the queue the
// request names.

// on runs a call that reads or manages a queue.
func on[P, R any](ctx context.Context, r *Router, queue string, call func(tidemq.Broker, context.Context, P) (R, error), p P) (R, error) {
	c, err := r.of(ctx, queue)
	if err != nil {
		var zero R
		return zero, err
	}
	return call(c.Broker, ctx, p)
}

// onQueue is on for a call that returns only an error.
func onQueue[P any](ctx context.Context, r *Router, queue string, call func(tidemq.Broker, context.Context, P) error, p P) error {
	c, err := r.of(ctx, queue)
	if err != nil {
		return err
	}
	return call(c.Broker, ctx, p)
}

// writing runs a call that changes messages, with the leader's fence
// checked as Router.fenced says.
func writing[P, R any](ctx context.Context, r *Router, queue string, call func(tidemq.Broker, context.Context, P) (R, error), p P) (R, error) {
	c, ctx, err := r.write(ctx, queue)
	if err != nil {
		var zero R
		return zero, err
	}
	return call(c.Broker, ctx, p)
}
