package placement

import (
	"context"

	"github.com/tidemq/tidemq"
)

// The message calls run on the queue's cluster, with the fence checked as
// Router.fenced says. Receipt handles are the cluster's own (each cluster
// seals them with its key): one presented on another queue's cluster is
// invalid there, as it would be on any other queue.

func (r *Router) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	return writing(ctx, r, p.Queue, tidemq.Broker.SendMessages, p)
}

func (r *Router) ReceiveMessages(ctx context.Context, p tidemq.ReceiveMessagesParams) ([]*tidemq.Message, error) {
	return writing(ctx, r, p.Queue, tidemq.Broker.ReceiveMessages, p)
}

func (r *Router) DeleteMessages(ctx context.Context, p tidemq.DeleteMessagesParams) ([]error, error) {
	return writing(ctx, r, p.Queue, tidemq.Broker.DeleteMessages, p)
}

func (r *Router) ChangeMessageVisibility(ctx context.Context, p tidemq.ChangeVisibilityParams) ([]error, error) {
	return writing(ctx, r, p.Queue, tidemq.Broker.ChangeMessageVisibility, p)
}

func (r *Router) RecordFailure(ctx context.Context, p tidemq.RecordFailureParams) ([]error, error) {
	return writing(ctx, r, p.Queue, tidemq.Broker.RecordFailure, p)
}

func (r *Router) PeekMessages(ctx context.Context, p tidemq.PeekMessagesParams) ([]*tidemq.Message, error) {
	return on(ctx, r, p.Queue, tidemq.Broker.PeekMessages, p)
}

// MoveMessages moves within one cluster: a destination on another is
// refused. Destination "" sends messages back to their sources, which are
// on the dead-letter queue's cluster.
func (r *Router) MoveMessages(ctx context.Context, p tidemq.MoveMessagesParams) (*tidemq.MoveMessagesResult, error) {
	c, ctx, err := r.write(ctx, p.Source)
	if err != nil {
		return nil, err
	}
	if err := r.sameCluster(ctx, "Destination", p.Destination, c, p.Destination, false); err != nil {
		return nil, err
	}
	return c.Broker.MoveMessages(ctx, p)
}

// StartMessageMoveTask runs the task on the source's cluster; a
// DestinationArn on another cluster is refused.
func (r *Router) StartMessageMoveTask(ctx context.Context, p tidemq.StartMoveTaskParams) (string, error) {
	c, err := r.ofARN(ctx, p.SourceARN)
	if err != nil {
		return "", err
	}
	if p.DestinationARN != "" {
		if name, ok := tidemq.QueueNameOfARN(p.DestinationARN, r.region, r.acct); ok {
			if err := r.sameCluster(ctx, "DestinationArn", p.DestinationARN, c, name, false); err != nil {
				return "", err
			}
		}
	}
	return c.Broker.StartMessageMoveTask(ctx, p)
}

// CancelMessageMoveTask goes to the cluster of the source its handle
// names; a handle that does not decode to the home cluster, which refuses
// it.
func (r *Router) CancelMessageMoveTask(ctx context.Context, p tidemq.CancelMoveTaskParams) (int64, error) {
	c := r.home()
	if h, ok := tidemq.ParseMoveTaskHandle(p.TaskHandle); ok {
		var err error
		if c, err = r.ofARN(ctx, h.SourceARN); err != nil {
			return 0, err
		}
	}
	return c.Broker.CancelMessageMoveTask(ctx, p)
}

func (r *Router) ListMessageMoveTasks(ctx context.Context, p tidemq.ListMoveTasksParams) ([]tidemq.MessageMoveTask, error) {
	c, err := r.ofARN(ctx, p.SourceARN)
	if err != nil {
		return nil, err
	}
	return c.Broker.ListMessageMoveTasks(ctx, p)
}

// write returns the cluster of queue name and the context to call it
// with (fenced).
func (r *Router) write(ctx context.Context, name string) (*Cluster, context.Context, error) {
	c, err := r.of(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	ctx, err = r.fenced(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return c, ctx, nil
}
