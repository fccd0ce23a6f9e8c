package placement

import (
	"context"

	"github.com/tidemq/tidemq"
)

// CreateQueue places a new name (choose) and creates the queue on its
// cluster; a name placed already is created (or found) where it is.
func (r *Router) CreateQueue(ctx context.Context, p tidemq.CreateQueueParams) (*tidemq.QueueInfo, error) {
	if _, _, err := p.Validate(); err != nil {
		return nil, err // nothing placed for a request that creates nothing
	}
	c, err := r.locate(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	if c == nil {
		// A name is placed for good: place it only once the request's
		// joins are known to hold there, so that a refused create does
		// not pin it where its dead-letter or capture queue is not.
		chosen, err := r.choose(ctx, p.Attributes, p.Tags)
		if err != nil {
			return nil, err
		}
		if err := r.checkJoins(ctx, chosen, p.Attributes, p.Tags); err != nil {
			return nil, err
		}
		if c, err = r.place(ctx, p.Name, chosen); err != nil {
			return nil, err
		}
		if c == chosen {
			return c.Broker.CreateQueue(ctx, p)
		}
		// Another node placed it at once elsewhere: check again there.
	}
	if err := r.checkJoins(ctx, c, p.Attributes, p.Tags); err != nil {
		return nil, err
	}
	return c.Broker.CreateQueue(ctx, p)
}

func (r *Router) GetQueue(ctx context.Context, p tidemq.GetQueueParams) (*tidemq.QueueInfo, error) {
	return on(ctx, r, p.Name, tidemq.Broker.GetQueue, p)
}

// DeleteQueue deletes the queue on its cluster; its name stays placed
// there (Table).
func (r *Router) DeleteQueue(ctx context.Context, p tidemq.DeleteQueueParams) error {
	return onQueue(ctx, r, p.Queue, tidemq.Broker.DeleteQueue, p)
}

func (r *Router) GetQueueAttributes(ctx context.Context, p tidemq.GetQueueAttributesParams) (map[string]string, error) {
	return on(ctx, r, p.Queue, tidemq.Broker.GetQueueAttributes, p)
}

// SetQueueAttributes refuses a RedrivePolicy naming a dead-letter queue
// on another cluster (checkJoins), then sets the attributes on the queue's cluster.
func (r *Router) SetQueueAttributes(ctx context.Context, p tidemq.SetQueueAttributesParams) error {
	c, err := r.of(ctx, p.Queue)
	if err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err // the broker's order: the request's own faults first
	}
	if err := r.checkJoins(ctx, c, p.Attributes, nil); err != nil {
		return err
	}
	return c.Broker.SetQueueAttributes(ctx, p)
}

func (r *Router) PurgeQueue(ctx context.Context, p tidemq.PurgeQueueParams) error {
	return onQueue(ctx, r, p.Queue, tidemq.Broker.PurgeQueue, p)
}

// TagQueue refuses a capture tag naming a queue on another cluster.
func (r *Router) TagQueue(ctx context.Context, p tidemq.TagQueueParams) error {
	c, err := r.of(ctx, p.Queue)
	if err != nil {
		return err
	}
	if err := r.checkJoins(ctx, c, nil, p.Tags); err != nil {
		return err
	}
	return c.Broker.TagQueue(ctx, p)
}

func (r *Router) UntagQueue(ctx context.Context, p tidemq.UntagQueueParams) error {
	return onQueue(ctx, r, p.Queue, tidemq.Broker.UntagQueue, p)
}

func (r *Router) ListQueueTags(ctx context.Context, p tidemq.ListQueueTagsParams) (map[string]string, error) {
	return on(ctx, r, p.Queue, tidemq.Broker.ListQueueTags, p)
}

func (r *Router) AddPermission(ctx context.Context, p tidemq.AddPermissionParams) error {
	return onQueue(ctx, r, p.Queue, tidemq.Broker.AddPermission, p)
}

func (r *Router) RemovePermission(ctx context.Context, p tidemq.RemovePermissionParams) error {
	return onQueue(ctx, r, p.Queue, tidemq.Broker.RemovePermission, p)
}

// ListDeadLetterSourceQueues asks the dead-letter queue's cluster: its
// sources are all there (a RedrivePolicy never joins two clusters).
func (r *Router) ListDeadLetterSourceQueues(ctx context.Context, p tidemq.ListDeadLetterSourceQueuesParams) (*tidemq.ListQueuesResult, error) {
	return on(ctx, r, p.Queue, tidemq.Broker.ListDeadLetterSourceQueues, p)
}
